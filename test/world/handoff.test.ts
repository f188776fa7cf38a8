/**
 * Nothing an adapter holds is shared with the oracle. The world hands out frozen copies (the
 * binding, the source's offer, pages, events, load() results, completion flags) and copies
 * what it is handed before recording it, so whatever an adapter does to those objects, the
 * world serves the same and the history (which the oracle judges) says the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEligible } from '../../model/binding.js';
import type { ObservedStep } from '../../model/history.js';
import { FAMILIES, planArb } from '../../scenarios/arbitraries.js';
import { ALL_SCENARIOS } from '../../scenarios/named.js';
import type { BlackboxConsumer } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { meddling, type Tally } from '../fixtures/meddling.js';
import narrowing from '../fixtures/narrowing.js';
import { SEED } from '../support.js';

const generated = fc.sample(planArb({ families: [...FAMILIES] }), { seed: SEED, numRuns: 30 });
const worlds = [...ALL_SCENARIOS.map((s) => ({ name: s.name, plan: s.plan })), ...generated.map((plan, i) => ({ name: `generated world ${i} (seed ${SEED})`, plan }))];

describe('an adapter that tampers with everything it holds changes nothing the oracle reads', () => {
  it('the same history, byte for byte, and the same verdict as its twin that leaves everything alone', async () => {
    const tally: Tally = { tried: 0, took: 0, afterwards: 0 };
    const tampering = meddling({ tally });
    const twin = meddling({ meddle: false });
    for (const { name, plan } of worlds) {
      const a = await execute(plan, tampering);
      const b = await execute(plan, twin);
      expect(a.hash, name).toBe(b.hash);
      expect(a.result.verdict, name).toEqual(b.result.verdict);
    }
    // It did tamper, with every kind of object, and nothing the world handed out gave way.
    expect(tally.tried).toBeGreaterThan(1000);
    expect(tally.took).toBe(0);
    // Its own objects it could change after handing them over: the world had copied them.
    expect(tally.afterwards).toBeGreaterThan(100);
  });

  it('the history keeps the plan\u2019s binding and contract, however the adapter tried to narrow them', async () => {
    for (const { name, plan } of worlds.slice(0, ALL_SCENARIOS.length)) {
      const { history } = await execute(plan, narrowing);
      expect(history.header.binding, name).toEqual(plan.binding);
      expect(history.header.contract, name).toEqual(plan.source.contract);
      expect(plan.binding.upTo, name).not.toBe(-1e9);
    }
  });
});

describe('the adapter that narrows the binding and does no work does not pass', () => {
  it.each(ALL_SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_, scenario) => {
    const { result } = await execute(scenario.plan, narrowing);
    expect(result.verdict.status).not.toBe('pass');
  });

  it('nor on any generated world whose bound stream still holds an event when it claims', async () => {
    let judged = 0;
    for (const [i, plan] of generated.entries()) {
      const { result, history } = await execute(plan, narrowing);
      // The source as it stands at the end (every claim comes after every change the world
      // made): a mutation can take the only eligible event out of the stream, and then a
      // claim of caught-up with nothing done is true.
      const source = new Map(plan.events.map((e) => [e.id, e]));
      let binding = plan.binding;
      for (const s of history.steps) {
        if (s.kind === 'mutation') source.set(s.event.id, s.event);
        if (s.kind === 'rebind') binding = s.binding;
      }
      if (![...source.values()].some((e) => isEligible(binding, e))) continue;
      judged++;
      expect(result.verdict.status, `generated world ${i} (seed ${SEED})`).not.toBe('pass');
    }
    expect(judged).toBeGreaterThan(10);
  });
});

describe('a blackbox consumer\u2019s inspected watermark is recorded as it was', () => {
  interface Db {
    mark: { key: number[]; id: string };
    seen: boolean;
  }
  /** Emits every event and moves its watermark past it: in place, or by writing a new object. */
  const marking = (inPlace: boolean): BlackboxConsumer<Db> => ({
    name: inPlace ? 'watermark-in-place' : 'watermark-replaced',
    kind: 'blackbox',
    capabilities: { delivery: 'at-least-once' },
    open: () => ({ mark: { key: [], id: '' }, seen: false }),
    inspect: (db) => ({ watermark: db.seen ? db.mark : null, effects: [] }),
    run: async (world, db) => {
      let resume: Parameters<typeof world.fetch>[0]['resume'] = { kind: 'start' };
      for (;;) {
        const page = await world.fetch({ resume, limit: world.source.pageSize });
        for (const e of page.events) {
          await world.emit(e, e.payload);
          if (inPlace) {
            db.mark.key = [...e.key];
            db.mark.id = e.id;
          } else db.mark = { key: [...e.key], id: e.id };
          db.seen = true;
        }
        if (page.next === null) return world.caughtUp();
        resume = { kind: 'token', token: page.next };
      }
    },
  });

  it('changing the object in place later does not rewrite the steps that recorded it', async () => {
    const plan = ALL_SCENARIOS.find((s) => s.name === 'repeated-page')!.plan;
    const inPlace = await execute(plan, marking(true));
    const replaced = await execute(plan, marking(false));
    const marks = inPlace.history.steps.filter((s): s is ObservedStep => s.kind === 'observed' && s.watermark !== undefined);
    expect(marks.length).toBeGreaterThan(1);
    expect(inPlace.hash).toBe(replaced.hash);
  });
});
