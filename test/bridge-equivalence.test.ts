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

type Design = { name: string; capabilities: Consumer['capabilities']; run: (world: WorkerWorld) => Promise<void> };
const FIXTURE = 'test/fixtures/process/ledger-design.mjs';

/** The history as JSON, with what an incarnation threw left out. */
function path(history: History): string {
  return JSON.stringify(history.steps.map((s: Step) => (s.kind === 'life' && s.event.kind === 'threw' ? { ...s, event: { kind: 'threw' } } : s)));
}

/** How many incarnations ended in this way, and how many of them before their first call. */
function ends(history: History, kind: 'threw' | 'returned'): { all: number; early: number } {
  let all = 0;
  let early = 0;
  const called = new Set<string>();
  for (const s of history.steps) {
    const who = 'actor' in s && s.actor ? `${s.actor.worker}#${s.actor.incarnation}` : '';
    if (s.kind === 'call') called.add(who);
    if (s.kind === 'life' && s.event.kind === kind) {
      all++;
      if (!called.has(who)) early++;
    }
  }
  return { all, early };
}

describe('one design, in process and through the bridge', () => {
  // Seed and count chosen so that incarnations end on their own in some worlds, and are born
  // again: the new process's first call must be waited for (the in-process one is there at
  // once), and a process that exits must be seen to have ended before the next pick.
  it.each<[string, Kills, 'threw' | 'returned', 'early' | 'all']>([
    ['ledger', 'real', 'threw', 'all'],
    ['ledger', 'sampled', 'threw', 'all'],
    ['flaky-start', 'sampled', 'threw', 'early'],
    ['async-flaky-start', 'sampled', 'threw', 'early'],
    ['returns', 'sampled', 'returned', 'all'],
  ])('%s takes the same path through each of 20 generated worlds (kills: %s)', async (name, kills, kind, which) => {
    const { design } = (await import(new URL('./fixtures/process/ledger-designs.mjs', import.meta.url).href)) as { design: (name: string) => Design };
    const d = design(name);
    const inside: Consumer = { name: d.name, capabilities: d.capabilities, run: (world) => d.run(world) };
    const outside = await processConsumer(`node ${FIXTURE} ${name}`, { kills });
    const plans = fc.sample(planArb(worldOptions(d.capabilities)), { seed: 20261129, numRuns: 20 });
    let ended = 0;
    for (const plan of plans) {
      const a = await execute(plan, inside);
      const b = await execute(plan, outside);
      expect(b.result.verdict.status).toBe(a.result.verdict.status);
      expect(path(b.history)).toBe(path(a.history));
      ended += ends(a.history, kind)[which];
    }
    expect(ended).toBeGreaterThan(0);
  });
});
