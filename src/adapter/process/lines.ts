import { StringDecoder } from 'node:string_decoder';

/**
 * Lines read from a process's pipe or socket, with a bound on how long one may grow. A
 * process that writes without end and never a newline (a runaway loop, a binary dump on
 * stdout) would otherwise have the harness buffer it until the process runs out of memory or
 * the string outgrows what the language allows (`RangeError: Invalid string length`, a crash
 * of the harness, not a verdict on the process). Shared by consumer processes, fork-server
 * children and connectors: every line any of them writes to the harness goes through here.
 */

/** The longest line read, in characters: far above any message a protocol needs, far below what exhausts the harness. */
export const LINE_LIMIT = 64 * 1024 * 1024;

/** The limit as a message says it. */
export function lineLimitText(limit: number = LINE_LIMIT): string {
  return limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MiB` : `${limit} characters`;
}

/**
 * Splits chunks into lines at `\n` (a `\r` before it is dropped, as a line written on Windows
 * ends). A line longer than the limit, ended or not, is an overflow: the lines before it are
 * returned, then nothing more is ever returned, and what was buffered is let go.
 */
export class LineSplitter {
  private parts: string[] = [];
  private size = 0;
  private readonly decoder = new StringDecoder('utf8');
  /** A line outgrew the limit: the splitter is done. */
  overflowed = false;

  constructor(private readonly limit: number = LINE_LIMIT) {}

  /** The lines this chunk completes, and whether a line outgrew the limit (the last thing it tells). */
  push(chunk: Buffer | string): { readonly lines: string[]; readonly overflow: boolean } {
    const lines: string[] = [];
    if (this.overflowed) return { lines, overflow: false };
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      if (!this.add(text.slice(from, nl))) return { lines, overflow: true };
      const line = this.parts.length === 1 ? (this.parts[0] as string) : this.parts.join('');
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      this.parts = [];
      this.size = 0;
      from = nl + 1;
    }
    if (from < text.length && !this.add(text.slice(from))) return { lines, overflow: true };
    return { lines, overflow: false };
  }

  /** What is left once the input ended: a last line without a newline, or null. */
  end(): string | null {
    if (this.overflowed) return null;
    const rest = this.decoder.end();
    if (rest !== '') this.add(rest);
    const line = this.parts.join('');
    this.parts = [];
    this.size = 0;
    return line === '' || this.overflowed ? null : line;
  }

  /** Adds to the line being read; false once it outgrew the limit. */
  private add(part: string): boolean {
    this.size += part.length;
    if (this.size > this.limit) {
      this.overflowed = true;
      this.parts = [];
      this.size = 0;
      return false;
    }
    this.parts.push(part);
    return true;
  }
}
