import { accessSync, constants, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, truncateSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EXIT, UsageError, type Flags } from './spec.js';
import type { Io } from './io.js';

/**
 * Output files are checked before any work starts, and written after it without ever
 * losing the verdict: a path that cannot be written is a usage error at once (exit 3), not a
 * stack trace after minutes of checking; a write that still fails at the end is reported,
 * and the other outputs and the verdict line are written all the same.
 */

/** Outputs that are read before they are written: the regression file (merged into) and the report (recognised first). */
const READ_BACK = new Set(['--regressions', '--file', '--out']);

/**
 * Makes sure `path` can be written: creates its directory (as vitest's JUnit reporter does)
 * and refuses a directory, or a place without write permission. Nothing is written yet.
 *
 * Only what a write cannot hang on is taken: a regular file (or a link to one), a new file,
 * or, for an output that is only written, a character device such as /dev/null. A FIFO
 * blocks its writer until someone reads it, and kernel files under /proc and /sys do what
 * their writes say; an output that is read back first (the regression file, the report)
 * must be a regular file, since reading /dev/zero never ends.
 */
export function prepareOutput(flag: string, path: string): void {
  const problem = (why: string): never => {
    throw new UsageError(`${flag} ${path}: ${why}`);
  };
  // Our own standard streams are outputs like any other (`--json /dev/stdout`).
  if (standardStream(path) !== null) return;
  // A directory's name, which the check below would find only once it exists; the write would fail after the run.
  if (path.endsWith('/')) problem('ends in /, so it names a directory; give a file name');
  // Every look below takes the path as given, as the write will: the kernel resolves `..`
  // after a linked directory's target, where the same text resolved by hand names another place.
  const dir = dirname(path);
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    // Not there yet (or a link to a file not there yet) is fine; a loop of links is not.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') problem('is a loop of symbolic links');
    real = whereIs(path);
  }
  if (/^\/(proc|sys)(\/|$)/.test(real)) problem(`is in ${real.split('/')[1] === 'proc' ? '/proc' : '/sys'}, a kernel filesystem, not a place for output files`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    problem(`cannot create its directory: ${(error as Error).message}`);
  }
  if (existsSync(path)) {
    const stat = statSync(path);
    if (stat.isDirectory()) problem('is a directory; give a file name');
    if (!stat.isFile()) {
      const kind = stat.isFIFO() ? 'a FIFO, whose writer waits for a reader' : stat.isSocket() ? 'a socket' : stat.isBlockDevice() ? 'a block device' : 'a device';
      if (!stat.isCharacterDevice() || READ_BACK.has(flag)) problem(`is ${kind}, not a regular file${READ_BACK.has(flag) ? ' (it is read before it is written)' : ''}; give a file name`);
    }
    try {
      accessSync(path, constants.W_OK);
    } catch {
      problem('the file is not writable');
    }
  } else {
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      problem(`cannot create files in ${whereIs(dir)}`);
    }
  }
}

/**
 * Where a path lies, as far as the kernel can say before it exists: its nearest existing
 * ancestor's real path, and the rest as given. Looked at before its directories are made, so
 * that `link/new/../x` through a link into /sys is refused, not made there.
 */
function whereIs(path: string): string {
  const rest: string[] = [];
  for (let at = path; ; ) {
    try {
      return join(realpathSync.native(at), ...rest);
    } catch {
      const up = dirname(at);
      if (up === at) return resolve(path);
      rest.unshift(basename(at));
      at = up;
    }
  }
}

/**
 * Checks every output flag's path before any work: a bad one is a usage error now, not after
 * the run. So is a file named by two flags when one of them writes it (`--json F --junit F`,
 * or `--json` onto the regression file, given or by default), or an output that is one of the
 * command's `inputs` (`merge s1.json s2.json --json s1.json`): the last write would replace
 * the other, and a regression file or a shard overwritten with results is lost. A device
 * (`/dev/null`, our own stdout) can take several.
 */
export function prepareOutputs(f: Flags, inputs: readonly { readonly name: string; readonly path: string }[] = []): void {
  for (const { flag, value } of f.given()) if (flag.type === 'output' && typeof value === 'string') prepareOutput(`--${flag.name}`, value);
  const seen = new Map<string, { readonly name: string; readonly output: boolean }>();
  // Files read from the command's positional arguments first (merge's shards): they are only read, so they may repeat among themselves.
  const files = [
    ...inputs.map(({ name, path }) => ({ name, path, output: false })),
    ...f.files().map(({ flag, path }) => ({ name: f.has(flag.name) ? `--${flag.name}` : `--${flag.name} (by default)`, path, output: flag.type === 'output' })),
  ];
  for (const { name, path, output } of files) {
    const key = fileKey(path);
    if (key === null) continue;
    const before = seen.get(key);
    if (before !== undefined && (before.output || output)) throw new UsageError(`${before.name} and ${name} name the same file, ${path}: one would overwrite the other; give each its own`);
    seen.set(key, { name, output: before?.output === true || output });
  }
}

/**
 * Takes away what an earlier run left at the paths of outputs that are only written (not the
 * regression file or the report, which are read first). Called once the command line is
 * found good, as the work starts: a run that then ends without writing its own (an adapter
 * or harness error mid-run, exit 3 or 4) must not leave the last run's for a CI to read as
 * this one's (a green JUnit file, say). A file is removed; one behind a link is emptied, so
 * the link stays a link.
 */
export function clearOutputs(f: Flags): void {
  for (const { flag, value } of f.given()) {
    if (flag.type !== 'output' || typeof value !== 'string' || READ_BACK.has(`--${flag.name}`) || standardStream(value) !== null) continue;
    try {
      if (lstatSync(value).isFile()) unlinkSync(value);
      else if (statSync(value).isFile()) truncateSync(value);
    } catch {
      // Not there yet.
    }
  }
}

/** What a path names, for telling two paths to the same file apart from two files; null for a device, which several outputs may share. */
function fileKey(path: string, links = 0): string | null {
  // Looked up as the kernel will open it: `dir/..` through a linked directory is not what
  // the same text means once `..` is taken out by hand. Our own stdout and stderr are written
  // where they stand, so several outputs may share one even when it is redirected to a file.
  if (standardStream(path) !== null) return null;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return null;
    return `${stat.dev}:${stat.ino}`;
  } catch {
    // Not there yet. A link to a file not there yet names the file it will create.
    try {
      if (links < 8 && lstatSync(path).isSymbolicLink()) return fileKey(resolve(dirname(path), readlinkSync(path)), links + 1);
    } catch {
      // Not a link either.
    }
    // Named by its path, its directory's links resolved where they exist.
    try {
      return join(realpathSync.native(dirname(path)), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** The first line of every report `tidemark report` writes: how an existing file is recognised as one. */
export const REPORT_HEADING = '# tidemark report';

/** Refuses to overwrite a file that is not a tidemark report, unless forced. */
export function guardReport(path: string, force: boolean): void {
  if (force || !existsSync(path) || statSync(path).isDirectory()) return;
  const first = readFileSync(path, 'utf8').split('\n', 1)[0];
  if (first !== REPORT_HEADING) throw new UsageError(`--out ${path} exists and is not a tidemark report (its first line is not '${REPORT_HEADING}'); give --force to overwrite it`);
}

/** Collects the writes of one command; `failed` says whether any could not be done. */
export class Outputs {
  failed = 0;

  constructor(private readonly err: (line: string) => void) {}

  /** Writes a file, or reports why it could not; never throws. */
  write(flag: string, path: string, text: () => string): boolean {
    try {
      const stream = standardStream(path);
      // Our own stdout or stderr is written where it stands: opened again by its name, a
      // stream redirected to a file would be truncated, losing what was printed before.
      if (stream !== null) writeSync(stream, text());
      else writeFileSync(path, text());
      return true;
    } catch (error) {
      this.failed++;
      this.err(`tidemark: could not write ${flag} ${path}: ${(error as Error).message}`);
      return false;
    }
  }

  /** Runs a write done elsewhere (the regression file), reporting a failure the same way. */
  attempt(what: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      this.failed++;
      this.err(`tidemark: could not write ${what}: ${(error as Error).message}`);
      return false;
    }
  }
}

/**
 * A verdict whose outputs could not all be written: a failure or unknown keeps its code,
 * which already stops CI; a pass becomes a harness error, because what CI reads is missing.
 */
export function withOutputs(code: number, outputs: Outputs, io: Io): number {
  if (outputs.failed === 0 || code !== EXIT.pass) return code;
  io.err(`tidemark: the verdict is pass, but ${outputs.failed} output(s) could not be written: exit ${EXIT.error}`);
  return EXIT.error;
}

/** The file descriptor of our own stdout or stderr, when a path names one; null otherwise. */
function standardStream(path: string): 1 | 2 | null {
  const m = /^\/dev\/(stdout|stderr|fd\/([12]))$/.exec(resolve(path));
  if (m === null) return null;
  return m[1] === 'stdout' || m[2] === '1' ? 1 : 2;
}
