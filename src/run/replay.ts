import type { History } from '../../model/history.js';
import { checkProperty } from './conformance.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute, type Execution } from './execute.js';
import type { Plan } from '../../scenarios/plan.js';

/**
 * Replaying a world is trustworthy only if the consumer is deterministic: same plan, same
 * history, byte for byte. A consumer that reads `Math.random` or the clock replays to another
 * history, and its failure may vanish in the replay; saying PASS then would hide it. So a
 * replay runs the world twice and compares; two histories that differ make the verdict
 * `unknown`, naming the first step where they part.
 */
export interface Replayed {
  readonly execution: Execution;
  /** Set when the two runs differed (the verdict is then unknown, with this reason). */
  readonly nondeterministic: string | null;
}

export type WorldAddress = { readonly plan: Plan } | { readonly seed: number; readonly path: string };

export async function replayWorld(consumer: AnyConsumer, address: WorldAddress): Promise<Replayed | null> {
  const once = async (): Promise<Execution | null> => ('plan' in address ? execute(address.plan, consumer) : ((await checkProperty(consumer, { seed: address.seed, path: address.path })).replayed ?? null));
  const first = await once();
  if (first === null) return null;
  const second = await once();
  const differs = second === null ? 'the second replay reached no world' : second.hash === first.hash ? null : firstDifference(first.history, second.history);
  if (differs === null) return { execution: first, nondeterministic: null };
  const reason = `the consumer is not deterministic: two replays of the same world gave different histories (${differs}); a replay cannot confirm or refute its failure`;
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
