import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
/**
 * Telling tidemark's own failures from the ones around it. Exit 4 says "tidemark broke, please
 * report it"; that is a lie when the machine refused an operation (a TMPDIR that does not
 * exist, a full disk, too many open files) or when an in-process adapter replaced a global
 * tidemark's code relies on (Promise, Object.freeze, JSON). Those runs could not be judged:
 * unknown, with the reason.
 */

/** Globals an adapter can replace in the process it shares with tidemark, noted when this module loads. */
const WATCHED: readonly (readonly [string, () => unknown])[] = [
  ['Promise', () => globalThis.Promise],
  ['Promise.prototype.then', () => Promise.prototype.then],
  ['Object.freeze', () => Object.freeze],
  ['Object.isFrozen', () => Object.isFrozen],
  ['Object.keys', () => Object.keys],
  ['Object.entries', () => Object.entries],
  ['JSON.stringify', () => JSON.stringify],
  ['JSON.parse', () => JSON.parse],
  ['Array.prototype.map', () => Array.prototype.map],
  ['Array.prototype.push', () => Array.prototype.push],
  ['Map', () => globalThis.Map],
  ['Set', () => globalThis.Set],
  ['Error', () => globalThis.Error],
  ['setTimeout', () => globalThis.setTimeout],
  ['queueMicrotask', () => globalThis.queueMicrotask],
];
const noted = WATCHED.map(([, get]) => get());

/** The watched globals that are no longer what they were when tidemark started. */
export function replacedGlobals(): string[] {
  return WATCHED.flatMap(([name, get], i) => (get() === noted[i] ? [] : [name]));
}

/** Whether an error is the operating system refusing an operation (it names the system call). */
export function isEnvironmentError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string' && typeof (error as NodeJS.ErrnoException).code === 'string';
}

/** tidemark's own code, and the code it runs on: a frame outside these is an adapter's. */
const ROOT = fileURLToPath(new URL(new URL(import.meta.url).pathname.endsWith('.ts') ? '../../' : '../../../', import.meta.url));
const OURS = ['src', 'dist', 'model', 'scenarios', 'node_modules'].map((d) => join(ROOT, d) + sep);

/**
 * Whether an error was thrown by an adapter's own code (a blackbox store's open() or
 * inspect(), a factory): the innermost frame of its stack that is a file is outside
 * tidemark's code and its dependencies. Such an error is the adapter's, not the machine's,
 * even when it is a failed system call.
 */
export function thrownByAdapter(error: unknown): boolean {
  if (!(error instanceof Error) || typeof error.stack !== 'string') return false;
  for (const line of error.stack.split('\n').slice(1)) {
    // tsx hands a CommonJS adapter module to Node as a data: URL; tidemark never runs from one.
    if (/^\s*at (?:.* \()?data:/.test(line)) return true;
    const m = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
    return !OURS.some((dir) => file.startsWith(dir));
  }
  return false;
}

/** Why an error that reached the top is not tidemark's own, or null when it is. */
export function notOurs(error: unknown): string | null {
  const replaced = replacedGlobals();
  if (replaced.length > 0) {
    return `the adapter replaced ${replaced.join(', ')} in the process it shares with tidemark, which then failed (${error instanceof Error ? error.message : String(error)}); an in-process adapter must leave the language's globals as they are (docs/adapters.md)`;
  }
  if (thrownByAdapter(error)) return `the adapter threw outside a world call: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
  if (isEnvironmentError(error)) return `the machine refused an operation: ${error.message}${error.syscall === 'mkdtemp' ? ' (is TMPDIR a directory that exists and can be written?)' : ''}`;
  return null;
}
