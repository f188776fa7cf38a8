import { closeSync, existsSync, fsyncSync, linkSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { MAX_RUNS } from './options.js';
import { HISTORY_VERSION } from '../../model/history.js';
import { MAX_EVENTS, WORLDS_VERSION } from '../../scenarios/arbitraries.js';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The regression file: every failure a check finds is kept in the user's repository and
 * replayed first on every later run, until it passes and someone prunes it on purpose (as
 * proptest-regressions and Hypothesis's example database do). It is JSON, versioned, with
 * one entry per failure, in the order found, so that it diffs well in review.
 *
 * Several checks may share one file (CI jobs in parallel, a developer's loop beside them),
 * and any of them may be killed at any moment. So the file is never rewritten from what a
 * check read when it started: every change takes an exclusive lock, reads the file as it is
 * now, merges, writes a temporary file in the same directory, flushes it to disk and renames
 * it over the old one. A reader sees the old file or the new one, never a cut one.
 */
export const REGRESSIONS_FILE = 'tidemark-regressions.json';
const VERSION = 1;

/** This tidemark's version, noted in every entry it records: another version may build another world from the same seed. */
export const TIDEMARK_VERSION: string = (() => {
  // From source or built; under tsx's loader the URL may carry a query, so look at its path.
  const source = new URL(import.meta.url).pathname.endsWith('.ts');
  const url = new URL(source ? '../../package.json' : '../../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
})();

interface Common {
  readonly adapter: string;
  readonly anomaly: string;
  /** The tidemark version that recorded the entry; absent in files from before it was noted. */
  readonly tidemark?: string;
  /**
   * The sha256 of the failing history when it was recorded: a replay that differs from it
   * says so, and one that differs from itself is a consumer that is not deterministic.
   */
  readonly hash?: string;
  /**
   * The history format `hash` is of (model/history.ts HISTORY_VERSION). Absent in entries
   * recorded before the history header carried the plan: their hash is of another format, so
   * the world their seed and path name is replayed and judged, but never held to that hash.
   */
  readonly format?: number;
  /**
   * How a process target's incarnations were killed when `hash` was recorded: `sampled`, a
   * check that crashed most of them in sessions; `real`, every one its own process, killed
   * with SIGKILL, as its replays always do. Absent for other targets, and in entries
   * recorded before it was noted.
   */
  readonly kills?: 'sampled' | 'real';
  /**
   * With `kills: sampled`, the hash of the same world's history under real kills (the
   * check's final replay), when it differs: a consumer keeping state a session crash does not
   * drop takes another path then, and a replay, which kills for real, is held to this one.
   */
  readonly realHash?: string;
  /**
   * A world entry: how the tidemark that recorded it drew generated worlds (WORLDS_VERSION);
   * absent, 1, in entries recorded before it was noted. Under another version its seed and
   * path name another world: replayed and judged, never held to its hash.
   */
  readonly worlds?: number;
  /** The run that found it (src/run/run-identity.ts). */
  readonly run?: string;
  /**
   * The sha256 of the target's code when it was recorded: a replay whose history differs
   * from `hash` while the code is unchanged is a consumer that is not deterministic.
   */
  readonly digest?: string;
  /** The target's options (`--option KEY=VALUE`), keys in order; absent when it has none. */
  readonly options?: Readonly<Record<string, string>>;
  /** Its short name, for `tidemark replay ID` (see shortId); entries of older tidemarks have none, and get it computed. */
  readonly id?: string;
}

export type RegressionEntry =
  /** `events`: the world size it was generated at (`--events`), absent for the default size. */
  | (Common & { readonly kind: 'world'; readonly seed: number; readonly path: string; readonly events?: number })
  | (Common & { readonly kind: 'scenario'; readonly scenario: string });

export interface RegressionFile {
  readonly version: 1;
  readonly entries: readonly RegressionEntry[];
}

export class RegressionFileError extends Error {
  override name = 'RegressionFileError';
}

/**
 * The regression file's entries, each adapter path as this working directory names it: in
 * the file, a path is relative to the file's own directory (see inFile), so that one file
 * serves checks run from any directory. Every reader outside this module reads through here.
 */
export function readRegressions(path: string): RegressionFile {
  const file = readFile(path);
  const base = baseOf(path);
  return { version: VERSION, entries: file.entries.map((e) => ({ ...e, adapter: here(e.adapter, base, file.relative) })) };
}

/**
 * An adapter path as a regression file keeps it: relative to the file's directory, `base`
 * (see baseOf), `/`-separated. A failure recorded by `cd examples && tidemark check --adapter
 * x.ts --regressions ../tidemark-regressions.json` is then `examples/x.ts`, and a check run
 * from the repository's root with `--adapter examples/x.ts` replays it (kept as typed, it
 * named x.ts at the root, and was skipped there: the check passed). A built-in consumer, a
 * command or a connector is kept as its text, which is what runs.
 */
function inFile(adapter: string, base: string): string {
  if (!isModulePath(adapter)) return adapter;
  const module = physical(resolve(adapter));
  const rel = relative(base, module);
  return rel === '' ? module : rel.split(sep).join('/');
}

/**
 * The directory the file's paths are relative to: its own as the file system has it, links
 * followed (of the file and of every directory above it), so that every name of one file,
 * through a linked checkout too, reads its paths alike.
 */
function baseOf(path: string): string {
  return physical(dirname(throughLinks(resolve(path))));
}

/** A path with its links followed, as far as it exists. */
function physical(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/**
 * An adapter path kept in a regression file whose directory is `base`, as this working
 * directory names it. A file written by an earlier tidemark (it does not say `paths`) kept
 * paths as typed, relative to where its check ran, which is nearly always the file's own
 * directory, its default place: they are read from here, as then, and rewritten relative to
 * the file the first time this tidemark writes the file. Nothing is guessed from which files
 * exist.
 */
function here(adapter: string, base: string, relativeToFile: boolean): string {
  if (!isModulePath(adapter) || isAbsolute(adapter) || !relativeToFile) return adapter;
  const named = resolve(base, adapter);
  return relative(process.cwd(), named) || named;
}

/** What a regression file holds: its entries as kept, and whether their paths are relative to the file (`paths`), or, written by an earlier tidemark, to where it ran. */
interface Stored {
  readonly entries: readonly RegressionEntry[];
  readonly relative: boolean;
}

const PATHS = 'relative to this file';

/** A stored entry as the file keeps it once this tidemark writes it: its path relative to the file. */
function kept(e: RegressionEntry, base: string, relativeToFile: boolean): RegressionEntry {
  return relativeToFile ? e : { ...e, adapter: inFile(e.adapter, base) };
}

/**
 * Why these entries cannot be recorded from this directory, or null: an adapter path that
 * names no file from here (merge run elsewhere than the shards it merges) would be kept
 * relative to a guess, a path that never matches again.
 */
export function unrecordableHere(entries: readonly RegressionEntry[]): string | null {
  const lost = entries.find((e) => !isBuiltIn(e) && isModulePath(e.adapter) && !existsSync(e.adapter));
  return lost === undefined ? null : `the adapter ${lost.adapter} names no file from this directory: the regression file keeps adapter paths relative to itself, so record failures where their adapter's path leads (run merge in the directory the shards ran in)`;
}

function isModulePath(id: string): boolean {
  return !/^(builtin|command|singer|airbyte):/.test(id);
}

/** The file's entries as it keeps them. */
function readFile(path: string): Stored {
  if (!existsSync(path)) return { entries: [], relative: true };
  // Reading a FIFO waits for a writer, and /dev/zero never ends.
  if (!statSync(path).isFile()) throw new RegressionFileError(`${path} is not a regular file: the regression file is JSON that tidemark reads and rewrites`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new RegressionFileError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const file = data as Partial<RegressionFile> & { paths?: unknown };
  if (file.version !== VERSION) throw new RegressionFileError(`${path} has version ${JSON.stringify(file.version)}; this tidemark reads version ${VERSION}`);
  if (!Array.isArray(file.entries)) throw new RegressionFileError(`${path} has no entries array`);
  file.entries.forEach((e, i) => {
    if (!isRegressionEntry(e)) throw new RegressionFileError(`${path}: entries[${i}] ${ENTRY_SHAPE}`);
  });
  if (file.paths !== undefined && file.paths !== PATHS) throw new RegressionFileError(`${path} has paths ${JSON.stringify(file.paths)}; this tidemark writes ${JSON.stringify(PATHS)}, or reads a file without it as an earlier tidemark wrote it`);
  return { entries: file.entries as RegressionEntry[], relative: file.paths === PATHS };
}

export const ENTRY_SHAPE =
  `must be { adapter, kind: 'world', seed, path } or { adapter, kind: 'scenario', scenario }, with optional string fields anomaly, tidemark, run and digest, hash (a sha256 in hex), kills 'sampled' or 'real', realHash (a sha256 in hex, with kills 'sampled'), integers format and worlds, events (a world's size, 1 to ${MAX_EVENTS}), and options of string values`;

/** A history's sha256, as an entry keeps it: 64 hex digits. */
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * The recorded history's hash a replay must give, when it is of the history format this
 * tidemark records: only then can a replay be held to it. A process target's failures are
 * replayed with real kills (by `replay`, and by `check` and `--prune`, whichever way the check
 * that found them killed): held to the history real kills gave, the check's final replay's
 * where session crashes gave another.
 */
export function comparableHash(entry: RegressionEntry, realKills = false): string | undefined {
  if (entry.format !== HISTORY_VERSION) return undefined;
  if (entry.kind === 'world' && (entry.worlds ?? 1) !== WORLDS_VERSION) return undefined;
  return realKills ? (entry.realHash ?? entry.hash) : entry.hash;
}

/**
 * A short name for an entry, printed with each failure a check records, so that
 * `tidemark replay ID` replays it exactly: the first 8 hex digits of the sha256 of what the
 * entry names (target, options and world), the same on every machine.
 */
export function shortId(entry: RegressionEntry): string {
  return createHash('sha256').update(JSON.stringify(namedBy(entry))).digest('hex').slice(0, 8);
}

/** What an entry names (target, options and world), never its result: what its id and a list's digest are of. */
function namedBy(entry: RegressionEntry): object {
  const world = entry.kind === 'world' ? { seed: entry.seed, path: entry.path, ...(entry.events === undefined ? {} : { events: entry.events }) } : { scenario: entry.scenario };
  return { adapter: entry.adapter, options: entry.options ?? {}, kind: entry.kind, ...world };
}

/**
 * A digest of the entries a run replays, in their order: what each names (target, options
 * and world), never its result. The shards of one run must have replayed the same list: two
 * files with the same number of entries in another order would share them out differently,
 * and a failing entry could be left to no shard.
 */
export function entriesDigest(entries: readonly RegressionEntry[]): string {
  return createHash('sha256').update(JSON.stringify(entries.map(namedBy))).digest('hex');
}

/** The entries an ID given to `replay` names: a prefix of at least 4 hex digits of their short id. */
export function entriesById(entries: readonly RegressionEntry[], id: string): RegressionEntry[] {
  return entries.filter((e) => (e.id ?? shortId(e)).startsWith(id.toLowerCase()));
}

/** Whether an entry is of this target: the same adapter, command or consumer, with the same options. */
export function ofTarget(entry: RegressionEntry, adapter: string, options: Readonly<Record<string, string>> = {}): boolean {
  return (entry.adapter === adapter || targetKey(entry.adapter) === targetKey(adapter)) && sameOptions(entry.options ?? {}, options);
}

/**
 * What a target's key names, for telling one target from another: an adapter module by the
 * file its path names from here, links followed, so that `./x.ts`, `x.ts`, its absolute
 * path and a link to it are one target (its recorded failures were skipped when typed
 * another way); a built-in consumer, a command or a connector by its text, which is what
 * runs. A relative path is read from the directory the command runs in, as the adapter is.
 */
function targetKey(id: string): string {
  if (!isModulePath(id)) return id;
  try {
    return realpathSync.native(id);
  } catch {
    return resolve(id);
  }
}

function sameOptions(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => b[k] === a[k]);
}

/** Every field of either kind of entry. */
type EntryField = RegressionEntry extends infer E ? (E extends unknown ? keyof E : never) : never;
/** Written as a record of the type's fields, so that a field added to the type and not here does not compile. */
const FIELDS: Readonly<Record<EntryField, true>> = { adapter: true, kind: true, seed: true, path: true, events: true, scenario: true, anomaly: true, tidemark: true, hash: true, format: true, worlds: true, kills: true, realHash: true, run: true, digest: true, options: true, id: true };
/** Every field an entry may carry, as this tidemark writes them: a field not among these is not tidemark's. */
export const ENTRY_FIELDS: readonly string[] = Object.keys(FIELDS);

/** Whether a value read from a file is a regression entry (the fields a replay reads, and the optional ones well typed). */
export function isRegressionEntry(value: unknown): value is RegressionEntry {
  const e = value as Partial<Record<string, unknown>> | null;
  const optional = (key: string): boolean => e?.[key] === undefined || typeof e[key] === 'string';
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.adapter === 'string' &&
    ['anomaly', 'tidemark', 'hash', 'realHash', 'run', 'digest', 'id'].every(optional) &&
    (e.hash === undefined || SHA256.test(e.hash as string)) &&
    (e.kills === undefined || e.kills === 'sampled' || e.kills === 'real') &&
    // A history of real kills besides the recorded one only where that one had session crashes.
    (e.realHash === undefined || (SHA256.test(e.realHash as string) && e.kills === 'sampled')) &&
    (e.format === undefined || Number.isSafeInteger(e.format)) &&
    (e.worlds === undefined || (Number.isSafeInteger(e.worlds) && (e.worlds as number) >= 1)) &&
    (e.options === undefined || (typeof e.options === 'object' && e.options !== null && !Array.isArray(e.options) && Object.values(e.options).every((v) => typeof v === 'string'))) &&
    ((e.kind === 'world' && Number.isSafeInteger(e.seed) && typeof e.path === 'string' && /^\d+(:\d+)*$/.test(e.path) && Number(e.path.split(':')[0]) < MAX_RUNS && (e.events === undefined || (Number.isSafeInteger(e.events) && (e.events as number) >= 1 && (e.events as number) <= MAX_EVENTS))) ||
      (e.kind === 'scenario' && typeof e.scenario === 'string'))
  );
}

/**
 * Replaces the file's entries (adapter paths as this working directory names them),
 * atomically and under the lock. Prefer recordRegressions and pruneRegressions, which merge.
 */
export function writeRegressions(path: string, file: RegressionFile): void {
  const base = baseOf(path);
  const entries = file.entries.map((e) => ({ ...e, adapter: inFile(e.adapter, base) }));
  path = throughLinks(path);
  withLock(path, () => writeAtomically(path, render(entries)));
}

/**
 * The file a path names, through symbolic links: the rename that replaces the file must
 * replace the link's target, not the link (a repository may link its regression file from
 * a shared place). The lock is taken beside the target too, so that every link to one file
 * shares one lock.
 */
function throughLinks(path: string): string {
  // Followed link by link rather than with realpath, so that a link whose target does not
  // exist yet leads to the file to create.
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      if (!lstatSync(path).isSymbolicLink()) return path;
      link = readlinkSync(path);
    } catch {
      return path;
    }
    // As the kernel follows it: from the link's own directory, wherever the name came through.
    path = resolve(physical(dirname(path)), link);
  }
  throw new RegressionFileError(`${path}: too many levels of symbolic links`);
}

/**
 * Built-in consumers (the reference and the mutants, `builtin:NAME`) are tidemark's own
 * demonstrations: a mutant fails by design, forever. Their failures are not the user's
 * regressions, so they are never recorded in a user's file, and `--prune` removes any an
 * older tidemark left there.
 */
export function isBuiltIn(entry: RegressionEntry): boolean {
  return entry.adapter.startsWith('builtin:');
}

/**
 * Adds the entries the file does not hold yet, as it is when written (not as it was when the
 * check started), stamped with this tidemark's version. Built-in consumers' entries are left
 * out. Returns the entries added; the file is not created when there are none.
 */
export function recordRegressions(path: string, found: readonly RegressionEntry[]): RegressionEntry[] {
  const fresh = found.filter((e) => !isBuiltIn(e));
  if (fresh.length === 0) return [];
  const base = baseOf(path);
  path = throughLinks(path);
  return withLock(path, () => {
    const stored = readFile(path);
    const now = stored.entries.map((e) => kept(e, base, stored.relative));
    // Compared as this directory names them: an entry an earlier tidemark kept relative to
    // where it ran is the same failure, not a new one.
    const known = stored.entries.map((e) => ({ ...e, adapter: here(e.adapter, base, stored.relative) }));
    const added: RegressionEntry[] = [];
    const written: RegressionEntry[] = [];
    for (const entry of fresh) {
      if (known.some((x) => sameEntry(x, entry)) || added.some((x) => sameEntry(x, entry))) continue;
      const inThisFile = { ...entry, adapter: inFile(entry.adapter, base) };
      const stamped = { ...inThisFile, id: shortId(inThisFile), tidemark: TIDEMARK_VERSION, ...(entry.hash === undefined ? {} : { format: HISTORY_VERSION }), ...(entry.kind === 'world' ? { worlds: WORLDS_VERSION } : {}) };
      written.push(stamped);
      added.push({ ...stamped, adapter: entry.adapter });
    }
    if (written.length > 0) writeAtomically(path, render([...now, ...written]));
    return added;
  });
}

/**
 * Removes these entries from the file as it is now; entries another check recorded in the
 * meantime stay. Returns how many were removed and how many are left.
 */
export function pruneRegressions(path: string, remove: readonly RegressionEntry[]): { removed: number; kept: number } {
  const base = baseOf(path);
  path = throughLinks(path);
  return withLock(path, () => {
    const stored = readFile(path);
    const left = stored.entries.filter((e) => {
      const seen = { ...e, adapter: here(e.adapter, base, stored.relative) };
      return !remove.some((x) => sameEntry(x, seen));
    });
    if (left.length !== stored.entries.length) writeAtomically(path, render(left.map((e) => kept(e, base, stored.relative))));
    return { removed: stored.entries.length - left.length, kept: left.length };
  });
}

/**
 * A note for an entry another tidemark version recorded, or one whose world was drawn under
 * other generators (WORLDS_VERSION, which can change within a version): the seed and path name
 * a world built by those generators, which may build another world now. Null when the entry
 * is this version's, and a world entry's generators are these.
 */
export function versionWarning(entry: RegressionEntry): string | null {
  const worlds = entry.kind === 'world' ? (entry.worlds ?? 1) : WORLDS_VERSION;
  if (entry.tidemark === TIDEMARK_VERSION && worlds === WORLDS_VERSION) return null;
  const by = entry.tidemark === undefined ? 'a tidemark that did not note its version' : `tidemark ${entry.tidemark}`;
  const drawn = worlds === WORLDS_VERSION ? '' : ` (its worlds drawn as version ${worlds} drew them, where these are drawn as version ${WORLDS_VERSION})`;
  return `recorded by ${by}${drawn}, replayed by tidemark ${TIDEMARK_VERSION}: the world it names may have changed. If it no longer fails, check that the bug is fixed before pruning it.`;
}

export function sameEntry(a: RegressionEntry, b: RegressionEntry): boolean {
  if (!ofTarget(a, b.adapter, b.options) || a.kind !== b.kind) return false;
  return a.kind === 'world' && b.kind === 'world' ? a.seed === b.seed && a.path === b.path && a.events === b.events : a.kind === 'scenario' && b.kind === 'scenario' && a.scenario === b.scenario;
}

function render(entries: readonly RegressionEntry[]): string {
  return `${JSON.stringify({ version: VERSION, about: 'Failures found by tidemark check, replayed first on every run. Prune fixed ones with: tidemark regressions --prune', paths: PATHS, entries }, null, 2)}\n`;
}

/**
 * Writes the whole text to a temporary file beside the target, flushes it to disk, and
 * renames it over the target; then flushes the directory, so the rename itself survives a
 * power cut. A process killed at any point leaves the old file or the new one.
 */
function writeAtomically(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  const fd = openSync(temp, 'wx');
  try {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
  try {
    const dir = openSync(dirname(path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Some platforms cannot flush a directory; the rename is still atomic there.
  }
}

/** A lock older than this is stale whoever holds it: a write takes milliseconds, not seconds. */
const LOCK_STALE_MS = 10_000;
/** How long a check waits for the lock: longer than a lock can be before it is stale. */
const LOCK_WAIT_MS = 15_000;

/**
 * Runs `work` holding `<path>.lock`, a file created exclusively (`wx`) that names its
 * holder. A lock whose holder is no longer running on this machine, or that is older than
 * LOCK_STALE_MS, was left by a killed check and is taken over. Temporary files a killed
 * writer left beside the file are removed under the lock.
 */
function withLock<T>(path: string, work: () => T): T {
  const lock = `${path}.lock`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new RegressionFileError(`cannot lock ${path}: ${(error as Error).message}`);
      const holder = readHolder(lock);
      if (holder !== null && stale(lock, holder)) {
        takeOver(lock, holder);
        continue;
      }
      if (Date.now() - started > LOCK_WAIT_MS) {
        throw new RegressionFileError(`${path} is locked by ${holder ?? 'another check'} (${lock}); if no tidemark is running, remove the lock file`);
      }
      sleep(Math.min(50, 5 * (attempt + 1)));
      continue;
    }
    try {
      writeSync(fd, `pid ${process.pid} since ${new Date().toISOString()}\n`);
    } finally {
      closeSync(fd);
    }
    try {
      removeLeftovers(path);
      return work();
    } finally {
      try {
        unlinkSync(lock);
      } catch {
        // Taken over as stale by another check: nothing of ours to remove.
      }
    }
  }
}

function readHolder(lock: string): string | null {
  try {
    return readFileSync(lock, 'utf8');
  } catch {
    return null;
  }
}

function stale(lock: string, holder: string): boolean {
  const pid = Number(/^pid (\d+)/.exec(holder)?.[1]);
  if (Number.isInteger(pid) && pid > 0 && !running(pid)) return true;
  try {
    return Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Moves a stale lock aside and removes it. If what was moved is not the lock judged stale
 * (another check took it over and locked in the meantime), it is put back with link, which
 * fails rather than overwrite a lock created since.
 */
function takeOver(lock: string, holder: string): void {
  const aside = `${lock}.${process.pid}.stale`;
  try {
    renameSync(lock, aside);
  } catch {
    return;
  }
  if (readHolder(aside) !== holder) {
    try {
      linkSync(aside, lock);
    } catch {
      // A newer lock exists: its holder goes first.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // Already gone.
  }
}

/** Temporary files of writers that were killed before their rename. */
function removeLeftovers(path: string): void {
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid > 0 && !running(pid)) {
      try {
        unlinkSync(join(dirname(path), name));
      } catch {
        // Removed by another check.
      }
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** A synchronous wait: the lock is taken from synchronous code, and a write takes milliseconds. */
function sleep(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}
