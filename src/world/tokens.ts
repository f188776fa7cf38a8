import seedrandom from 'seedrandom';

const { alea } = seedrandom;

/**
 * Mints opaque page tokens. The bytes come from the world's seed so the same seed mints the
 * same tokens, and they encode nothing a consumer could decode: the only way to use a token
 * is to hand it back to the source that minted it.
 */
export class TokenMint<T> {
  private readonly random: () => number;
  private readonly issued = new Map<string, T>();

  constructor(seed: string) {
    this.random = alea(`${seed}/tokens`);
  }

  mint(meaning: T): string {
    let token = '';
    do {
      // Nine characters, one draw each, in order: a loop rather than an array joined, which
      // allocated an array and a closure for every token.
      token = '';
      for (let i = 0; i < 9; i++) token += ALPHABET[Math.floor(this.random() * ALPHABET.length)];
    } while (this.issued.has(token));
    this.issued.set(token, meaning);
    return token;
  }

  read(token: string): T | undefined {
    return this.issued.get(token);
  }

  forget(token: string): void {
    this.issued.delete(token);
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
