import { availableParallelism } from 'node:os';
import { MAX_EVENTS } from '../../scenarios/arbitraries.js';
/**
 * The bounds of every option a run takes, and the one check of them. The command line's flag
 * spec (src/cli/spec.ts) takes its bounds from here, and so do the package's front doors
 * (`checkProperty`, `registerConformance`, `processConsumer`) and the shard files `tidemark
 * merge` reads: an option that the CLI refuses is refused everywhere, with the same words.
 * It lives below the CLI because the run and the adapters may not lean on the CLI.
 */

/**
 * A bad option: a flag on the command line (the CLI exits 3 with it) or an option passed to
 * the package's API. The message names the option and what it takes.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The most generated worlds a run may ask for: a bound that keeps replay paths cheap to walk (see --path). */
export const MAX_RUNS = 1_000_000;
/** Seeds are 32-bit: fast-check folds anything else into that range, so a wider one would not replay as printed. */
export const SEED_MIN = -0x80000000;
export const SEED_MAX = 0xffffffff;
/** The most shards a run may be split into: far beyond any CI matrix, and still a readable number. */
export const MAX_SHARDS = 1000;
/**
 * The most jobs `check --jobs` runs at once: four per core. Each job is a process with its own
 * consumer processes; past a few per core they only contend for the CPU, and a typo such as
 * --jobs 200 would start hundreds of interpreters.
 */
export const MAX_JOBS = availableParallelism() * 4;

/** What a numeric option's value is. */
export type NumberType =
  | 'integer'
  | 'seed' // a 32-bit integer, as fast-check takes it
  | 'seconds' // a number of seconds, fractions allowed
  | 'ms'; // whole milliseconds

export interface Bounds {
  readonly type: NumberType;
  /** Inclusive. */
  readonly min?: number;
  readonly max?: number;
}

/** The longest delay a Node timer takes. */
const TIMER_MAX_MS = 2_147_483_647;

/** Every bounded option, by its flag name. A flag of the spec spreads its entry. */
export const BOUNDS = {
  runs: { type: 'integer', min: 1, max: MAX_RUNS },
  seed: { type: 'seed' },
  searches: { type: 'integer', min: 1, max: 100 },
  'time-limit': { type: 'seconds', min: 0.001 },
  seeds: { type: 'integer', min: 1 },
  jobs: { type: 'integer', min: 1 },
  // These become Node timers, which take at most 2^31 - 1 ms and fire at once (with a
  // warning) for anything longer: a longer one is refused as a flag, not turned into 1 ms.
  heartbeat: { type: 'seconds', min: 0, max: TIMER_MAX_MS / 1000 },
  watchdog: { type: 'seconds', min: 0 },
  'hello-ms': { type: 'ms', min: 1, max: TIMER_MAX_MS },
  // Also a timer: the wait for a blackbox consumer's answer to an inspection.
  'stall-ms': { type: 'ms', min: 1, max: TIMER_MAX_MS },
  events: { type: 'integer', min: 1, max: MAX_EVENTS },
  'session-incarnations': { type: 'integer', min: 1 },
  'session-memory': { type: 'integer', min: 1 },
} as const satisfies Record<string, Bounds>;

/** The values a process consumer's `kills` takes. */
export const KILLS = ['real', 'sampled'] as const;

/**
 * What is wrong with a number given for an option, or null. `name` is how the option is
 * named to the user (`--runs` on the command line, `runs` in the API) and `shown` how the
 * value they gave is quoted; the rest of the sentence is the same for every front door.
 */
export function numberProblem(name: string, bounds: Bounds, value: number, shown: string, unit: { readonly word: string; readonly scale: number } = { word: 'seconds', scale: 1 }): string | null {
  if (bounds.type === 'seed') {
    if (Number.isInteger(value) && value >= SEED_MIN && value <= SEED_MAX) return null;
    return `${name} must be an integer from ${SEED_MIN} to ${SEED_MAX} (a 32-bit seed), got ${shown}`;
  }
  const whole = bounds.type !== 'seconds';
  const min = (bounds.min ?? 0) * unit.scale;
  const max = bounds.max === undefined ? Number.MAX_SAFE_INTEGER : bounds.max * unit.scale;
  if (Number.isFinite(value) && (!whole || Number.isSafeInteger(value)) && value >= min && value <= max) return null;
  const what = whole ? `an integer of at least ${min}` : `a number of ${unit.word} of at least ${min}`;
  return `${name} must be ${what}${bounds.max === undefined ? '' : ` and at most ${max.toLocaleString('en-US')}`}, got ${shown}`;
}

/** What is wrong with shard `index` of `count` (I/N, 1 <= I <= N <= MAX_SHARDS), or null; `text` is how it was given. */
export function shardProblem(name: string, index: number, count: number, text: string): string | null {
  if (!(Number.isInteger(count) && count >= 1 && count <= MAX_SHARDS)) return `${name} ${text}: N must be from 1 to ${MAX_SHARDS}`;
  if (!(Number.isInteger(index) && index >= 1 && index <= count)) return `${name} ${text}: I must be from 1 to ${count}, the number of shards (shards are numbered from 1)`;
  return null;
}

/** How a value given through the API is quoted in a message. */
export function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The API's options and the flags they stand for. An option named with `Ms` for a flag
 * counted in seconds (`timeLimitMs` for --time-limit) is the same bound in milliseconds.
 */
const API_OPTIONS: Readonly<Record<string, { readonly flag: keyof typeof BOUNDS; readonly unit?: { readonly word: string; readonly scale: number } }>> = {
  runs: { flag: 'runs' },
  seed: { flag: 'seed' },
  searches: { flag: 'searches' },
  seeds: { flag: 'seeds' },
  jobs: { flag: 'jobs' },
  timeLimit: { flag: 'time-limit' },
  timeLimitMs: { flag: 'time-limit', unit: { word: 'milliseconds', scale: 1000 } },
  heartbeat: { flag: 'heartbeat' },
  watchdog: { flag: 'watchdog' },
  helloMs: { flag: 'hello-ms' },
  stallMs: { flag: 'stall-ms' },
};

/**
 * Checks the options given to a front door of the package by the bounds the command line
 * uses: `runs`, `seed`, `searches`, `seeds`, `jobs`, `timeLimit` (seconds) or `timeLimitMs`,
 * `heartbeat`, `watchdog`, `helloMs`, `stallMs`, `kills` and `shard` (`{ index, count }` or
 * `'I/N'`). An option left undefined is not given; options it does not know are not its
 * business. Throws a UsageError naming the first bad one, its message prefixed by `where`
 * (`'registerConformance: '`, or a shard file's name), so `runs: 0` reads
 * `runs must be an integer of at least 1 and at most 1,000,000, got 0`, as `--runs 0` does.
 */
export function validateOptions(options: object, where = ''): void {
  const given = options as Readonly<Record<string, unknown>>;
  for (const [key, { flag, unit }] of Object.entries(API_OPTIONS)) {
    const value = given[key];
    if (value === undefined) continue;
    const problem = numberProblem(key, BOUNDS[flag], typeof value === 'number' ? value : Number.NaN, shown(value), unit);
    if (problem !== null) throw new UsageError(`${where}${problem}`);
  }
  if (given.kills !== undefined && !KILLS.includes(given.kills as (typeof KILLS)[number])) throw new UsageError(`${where}kills must be ${KILLS.join(' or ')}, got ${shown(given.kills)}`);
  if (given.shard !== undefined) validateShard(given.shard, where);
}

/**
 * Checks a shard as the API or a shard file gives it, `{ index, count }` (or `'I/N'`, as
 * --shard takes it), by the command line's rules; returns it. Throws a UsageError otherwise.
 */
export function validateShard(shard: unknown, where = ''): { readonly index: number; readonly count: number } {
  let index: unknown;
  let count: unknown;
  if (typeof shard === 'string') {
    const m = /^(\d+)\/(\d+)$/.exec(shard.trim());
    if (m) [index, count] = [Number(m[1]), Number(m[2])];
  } else if (typeof shard === 'object' && shard !== null) ({ index, count } = shard as { index?: unknown; count?: unknown });
  if (typeof index !== 'number' || typeof count !== 'number') throw new UsageError(`${where}shard must be { index: I, count: N } (or 'I/N'): the Ith of N shards, I from 1, got ${shown(shard)}`);
  const problem = shardProblem('shard', index, count, `${index}/${count}`);
  if (problem !== null) throw new UsageError(`${where}${problem}`);
  return { index, count };
}
