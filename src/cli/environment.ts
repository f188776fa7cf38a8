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

/** Why an error that reached the top is not tidemark's own, or null when it is. */
export function notOurs(error: unknown): string | null {
  const replaced = replacedGlobals();
  if (replaced.length > 0) {
    return `the adapter replaced ${replaced.join(', ')} in the process it shares with tidemark, which then failed (${error instanceof Error ? error.message : String(error)}); an in-process adapter must leave the language's globals as they are (docs/adapters.md)`;
  }
  if (isEnvironmentError(error)) return `the machine refused an operation: ${error.message}${error.syscall === 'mkdtemp' ? ' (is TMPDIR a directory that exists and can be written?)' : ''}`;
  return null;
}
