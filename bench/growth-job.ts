import type { History } from '../model/history.js';
import { sizedWorlds } from '../scenarios/arbitraries.js';
import { execute } from '../src/run/execute.js';
import { reachedIn } from '../src/selftest/adversity-census.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { largeWorldPlan } from './large-world.js';
import type { Message } from './job.js';
import { peakRssMiB, timed } from './measure.js';

/**
 * The job of the growth row (bench/growth.ts): calm and adverse worlds of each size through
 * the reference consumer, each executed, judged and read by the adversity census as
 * `check --verbose` does. Every measurement runs one size's world often enough to cover
 * `perMeasurement` events, so that a small world's cost is not a few milliseconds lost in
 * the noise and every measurement takes about as long; the sizes and the two kinds of world
 * take turns within a round, so that a slow spell of the machine falls on all of them.
 */
export interface GrowthArgs {
  readonly sizes: readonly number[];
  readonly rounds: number;
  readonly perMeasurement: number;
}

export const KINDS = ['calm', 'adverse'] as const;
export type Kind = (typeof KINDS)[number];

/** Pages of 100, or the largest that worlds of this size are drawn with when smaller. */
export function pageSizeFor(events: number): number {
  return Math.min(100, sizedWorlds(events).size?.maxPageSize ?? 100);
}

export interface Measurement {
  readonly kind: Kind;
  readonly events: number;
  readonly pageSize: number;
  /** How many times the world ran in this measurement; the costs are their sum. */
  readonly worlds: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  /** Call steps of one run of the world (every run of it is the same). */
  readonly calls: number;
  readonly steps: number;
}

function calls(history: History): number {
  let n = 0;
  for (const s of history.steps) if (s.kind === 'call') n++;
  return n;
}

export async function growth(args: GrowthArgs, say: (message: Message) => void): Promise<void> {
  const consumer = referenceConsumer();
  const plans = new Map(args.sizes.flatMap((events) => KINDS.map((kind) => [`${kind}-${events}`, largeWorldPlan(events, { pageSize: pageSizeFor(events), adverse: kind === 'adverse' })] as const)));
  const run = async (kind: Kind, events: number) => {
    const execution = await execute(plans.get(`${kind}-${events}`) as ReturnType<typeof largeWorldPlan>, consumer);
    reachedIn(execution.history);
    const status = execution.result.verdict.status;
    if (status !== 'pass') throw new Error(`the reference consumer did not pass the ${kind} world of ${events} events: ${status}`);
    return execution.history;
  };
  // Warm-up, untimed: every world once, so that no size is measured on colder code than another.
  for (const events of args.sizes) for (const kind of KINDS) await run(kind, events);
  for (let round = 0; round < args.rounds; round++) {
    const measured: Measurement[] = [];
    for (const events of args.sizes) {
      for (const kind of KINDS) {
        const worlds = Math.max(1, Math.round(args.perMeasurement / events));
        // The garbage of the measurement before is collected now, not on this one's clock
        // (the bench runs with --expose-gc): after a 10,000-event world, that was most of the
        // 100-event world's time.
        (globalThis as { gc?: () => void }).gc?.();
        const t = await timed(async () => {
          let history = await run(kind, events);
          for (let i = 1; i < worlds; i++) history = await run(kind, events);
          return history;
        });
        measured.push({ kind, events, pageSize: pageSizeFor(events), worlds, ...t.cost, calls: calls(t.value), steps: t.value.steps.length });
      }
    }
    say({ type: 'round', round, measured });
  }
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: null });
}
