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
  // Ten generated worlds, half of them (where there are that many) worlds where incarnations
  // end on their own and are born again: the new process's first call must be waited for (the
  // in-process one is there at once), and a process that exits must be seen to have ended
  // before the next pick. Chosen by running the design in process, which is cheap, over forty.
  it.each<[string, Kills, 'threw' | 'returned', 'early' | 'all']>([
    ['ledger', 'real', 'threw', 'all'],
    ['ledger', 'sampled', 'threw', 'all'],
    ['flaky-start', 'sampled', 'threw', 'early'],
    ['async-flaky-start', 'sampled', 'threw', 'early'],
    ['returns', 'sampled', 'returned', 'all'],
  ])('%s takes the same path through 10 generated worlds, some where incarnations end on their own (kills: %s)', async (name, kills, kind, which) => {
    const { design } = (await import(new URL('./fixtures/process/ledger-designs.mjs', import.meta.url).href)) as { design: (name: string) => Design };
    const d = design(name);
    const inside: Consumer = { name: d.name, capabilities: d.capabilities, run: (world) => d.run(world) };
    const outside = await processConsumer(`node ${FIXTURE} ${name}`, { kills });
    const drawn = [];
    for (const plan of fc.sample(planArb(worldOptions(d.capabilities)), { seed: 20261129, numRuns: 40 })) {
      const run = await execute(plan, inside);
      drawn.push({ plan, run, ended: ends(run.history, kind)[which] });
    }
    const ending = drawn.filter((w) => w.ended > 0);
    const chosen = [...ending.slice(0, 5), ...drawn.filter((w) => w.ended === 0)].slice(0, 10);
    chosen.push(...ending.slice(5, 15 - chosen.length));
    expect(chosen.filter((w) => w.ended > 0).length).toBeGreaterThan(0);
    expect(chosen).toHaveLength(10);
    for (const { plan, run: a } of chosen) {
      const b = await execute(plan, outside);
      expect(b.result.verdict.status).toBe(a.result.verdict.status);
      expect(path(b.history)).toBe(path(a.history));
    }
  });
});
