import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { History, Step } from '../model/history.js';
import { planArb } from '../scenarios/arbitraries.js';
import { worldOptions } from '../scenarios/profiles.js';
import type { Consumer, WorkerWorld } from '../src/adapter/consumer.js';
import { processConsumer, type Kills } from '../src/adapter/process/bridge.js';
import { execute } from '../src/run/execute.js';

/**
 * The process bridge offers the same world an in-process adapter gets (docs/protocol.md),
 * so one design run both ways takes the same path through every world: the same steps in
 * the same order, under real kills and under session crashes alike. Only what a thrown
 * error says may differ: in process it is the error, through the bridge it is the process's
 * exit and its stderr.
 */

type Served = { name: string; capabilities: Consumer['capabilities']; run: (world: WorkerWorld) => Promise<void> };

/** The history as JSON, with what an incarnation threw left out. */
function path(history: History): string {
  return JSON.stringify(history.steps.map((s: Step) => (s.kind === 'life' && s.event.kind === 'threw' ? { ...s, event: { kind: 'threw' } } : s)));
}

describe('the Node example, in process and through the bridge', () => {
  it.each<Kills>(['real', 'sampled'])('takes the same path through each of 20 generated worlds (kills: %s)', { timeout: 120_000 }, async (kills) => {
    const { ledger } = (await import(new URL('../examples/node/ledger.mjs', import.meta.url).href)) as { ledger: Served };
    const inside: Consumer = { name: ledger.name, capabilities: ledger.capabilities, run: (world) => ledger.run(world) };
    const outside = await processConsumer('node examples/node/consumer.mjs', { kills });
    // Seed and count chosen so that some world has an incarnation that throws (the ledger
    // gives up on a lost lease) and is born again: the first call of the new process must
    // be waited for, as the in-process one is there at once.
    const plans = fc.sample(planArb(worldOptions(ledger.capabilities)), { seed: 20261129, numRuns: 20 });
    let reborn = 0;
    for (const plan of plans) {
      const a = await execute(plan, inside);
      const b = await execute(plan, outside);
      expect(b.result.verdict.status).toBe('pass');
      expect(path(b.history)).toBe(path(a.history));
      reborn += a.history.steps.filter((s) => s.kind === 'life' && s.event.kind === 'threw').length;
    }
    expect(reborn).toBeGreaterThan(0);
  });
});
