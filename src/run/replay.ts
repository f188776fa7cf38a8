import type { History } from '../../model/history.js';
import { checkProperty } from './conformance.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute, type Execution } from './execute.js';
import type { Plan } from '../../scenarios/plan.js';
import { sizedWorlds } from '../../scenarios/arbitraries.js';

/**
 * Replaying a world is trustworthy only if the consumer is deterministic: same plan, same
 * history, byte for byte. A consumer that reads `Math.random` or the clock replays to another
 * history, and its failure may vanish in the replay; saying PASS then would hide it. So a
 * replay runs the world more than once and compares; histories that differ make the verdict
 * `unknown`, naming the first step where they part.
 *
 * Runs that agree with each other may still all differ from the failure that was recorded:
 * a consumer that draws a coin agrees with itself often. When the record is known (its
 * history's hash, and the sha256 of the target's code then), a replay of unchanged code that
 * differs from it is also `unknown`: not deterministic. Only a changed target may replay to
 * another history and be judged on it.
 */
export interface Replayed {
  readonly execution: Execution;
  /** Set when the two runs differed (the verdict is then unknown, with this reason). */
  readonly nondeterministic: string | null;
}

export type WorldAddress = { readonly plan: Plan } | { readonly seed: number; readonly path: string; readonly events?: number | undefined };

/** What was recorded of a failure: its history's hash, and the sha256 of the target's code then and now. */
export interface Recorded {
  readonly hash: string;
  /** The target's code when it was recorded (absent in entries of older tidemarks). */
  readonly digest?: string | undefined;
  /** The target's code now (null for a built-in consumer, which is tidemark's own). */
  readonly current: string | null;
}

/** How many times a replay runs its world: enough that a coin-drawing consumer rarely agrees with itself every time. */
export const REPLAY_TIMES = 3;

export interface ReplayOptions {
  readonly times?: number;
  readonly recorded?: Recorded | undefined;
}

export async function replayWorld(consumer: AnyConsumer, address: WorldAddress, options: ReplayOptions = {}): Promise<Replayed | null> {
  const worlds = 'plan' in address || address.events === undefined ? {} : { worlds: sizedWorlds(address.events) };
  const once = async (): Promise<Execution | null> =>
    'plan' in address ? execute(address.plan, consumer) : ((await checkProperty(consumer, { seed: address.seed, path: address.path, ...worlds })).replayed ?? null);
  const first = await once();
  if (first === null) return null;
  const times = options.times ?? REPLAY_TIMES;
  let reason: string | null = null;
  for (let i = 1; i < times && reason === null; i++) {
    const again = await once();
    const differs = again === null ? 'a later replay reached no world' : again.hash === first.hash ? null : firstDifference(first.history, again.history);
    if (differs !== null) reason = `the consumer is not deterministic: ${times} replays of the same world gave different histories (${differs}); a replay cannot confirm or refute its failure`;
  }
  const r = options.recorded;
  if (reason === null && r !== undefined && r.hash !== first.hash && r.digest !== undefined && r.digest === r.current) {
    reason = `the consumer is not deterministic: its code is unchanged since the failure was recorded (sha256 ${r.digest.slice(0, 12)}), but its history is not the recorded one (${r.hash.slice(0, 12)}; now ${first.hash.slice(0, 12)}); the entry stands until the consumer replays as recorded or its code changes`;
  }
  if (reason === null) return { execution: first, nondeterministic: null };
  return { execution: { ...first, result: { ...first.result, verdict: { status: 'unknown', anomalies: [], reason } } }, nondeterministic: reason };
}

/** Where two histories of one world part: "from step N: ... / ...". */
export function firstDifference(a: History, b: History): string {
  if (JSON.stringify(a.header) !== JSON.stringify(b.header)) return 'their headers differ';
  const n = Math.max(a.steps.length, b.steps.length);
  for (let i = 0; i < n; i++) {
    const x = JSON.stringify(a.steps[i] ?? null);
    const y = JSON.stringify(b.steps[i] ?? null);
    if (x === y) continue;
    // Show where the two steps part, not their common beginning.
    let at = 0;
    while (at < x.length && x[at] === y[at]) at++;
    const from = Math.max(0, at - 60);
    const cut = (t: string): string => `${from > 0 ? '...' : ''}${t.slice(from, at + 80)}${t.length > at + 80 ? '...' : ''}`;
    return `from step ${i}: ${cut(x)} / ${cut(y)}`;
  }
  return 'they differ';
}
