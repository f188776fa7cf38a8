/**
 * Text a consumer hands the world (a failure reason, a thrown message) is recorded at most
 * this long. Everything tidemark prints or writes about a run comes from its history: a
 * consumer that fails with a 100 MB reason must not make a 300 MB stdout, JSON and JUnit
 * file out of it. The cut is said in the text, with how much was left out.
 */
export const MAX_TEXT = 64 * 1024;

export function capText(text: string, max = MAX_TEXT): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}... ${size(text.length - max)} cut`;
}

/** A length in characters as a reader takes it in: 812 characters, 4.2 kB, 99.9 MB. */
function size(chars: number): string {
  if (chars < 1000) return `${chars} characters`;
  if (chars < 1_000_000) return `${(chars / 1000).toFixed(1)} kB`;
  return `${(chars / 1_000_000).toFixed(1)} MB`;
}
