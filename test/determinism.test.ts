import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planArb } from '../scenarios/arbitraries.js';
import { checkProperty } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { placeOf } from '../src/run/world-place.js';
import { SEED } from './support.js';

describe('one seed decides everything', () => {
  it('the same plan gives a byte-identical history, concurrency and faults included', async () => {
    const consumer = referenceConsumer({ concurrency: 3 });
    const plans = fc.sample(planArb(), { seed: SEED, numRuns: 50 });
    for (const plan of plans) {
      const a = await execute(plan, consumer);
      const b = await execute(plan, consumer);
      expect(b.hash).toBe(a.hash);
    }
  });

  it('several workers interleaved: the same plan gives the same history, and the schedule matters', async () => {
    const consumer = referenceConsumer();
    const plans = fc.sample(planArb({ families: ['generations', 'mutation', 'page'] }), { seed: SEED, numRuns: 40 });
    const differs: boolean[] = [];
    for (const plan of plans) {
      const a = await execute(plan, consumer);
      expect((await execute(plan, consumer)).hash).toBe(a.hash);
      const reversed = await execute({ ...plan, schedule: plan.schedule.map((c) => c + 1) }, consumer);
      differs.push(reversed.hash !== a.hash);
    }
    // Were the schedule ignored, no world would change when it does.
    expect(differs.some(Boolean)).toBe(true);
  });

  it('replaying a counterexample from its seed and path reproduces the identical history', async () => {
    const consumer = findMutant('completion-before-effect')!.consumer;
    const found = await checkProperty(consumer, { runs: 1000, seed: SEED });
    expect(found.status).toBe('fail');
    const replayed = await checkProperty(consumer, { seed: found.seed, path: found.path! });
    expect(replayed.runs).toBe(1);
    expect(replayed.counterexample!.hash).toBe(found.counterexample!.hash);
  });

  it('replaying a passing world by its seed and path runs that world alone, and says it passed', async () => {
    const consumer = findMutant('completion-before-effect')!.consumer;
    const found = await checkProperty(consumer, { runs: 1000, seed: SEED });
    for (const path of [found.path!, '3']) {
      let worlds = 0;
      const again = await checkProperty(referenceConsumer(), { seed: found.seed, path, progress: () => worlds++ });
      expect(again.status).toBe('pass');
      expect(again.interrupted).toBe(false);
      expect(again.replayed).toBeDefined();
      expect(worlds).toBe(1);
    }
  });

  it('an adapter error thrown in a generated world names the world, and its seed and path throw it again', async () => {
    const tornTail = (await import('./fixtures/blackbox-torn-tail.js')).default;
    const thrown = await checkProperty(tornTail, { runs: 200, seed: SEED }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toContain('no longer shows');
    const place = placeOf(thrown);
    expect(place).toMatchObject({ seed: SEED, path: expect.stringMatching(/^\d+(:\d+)*$/) });
    const again = await checkProperty(tornTail, { seed: SEED, path: (place as { path: string }).path }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((again as Error).message).toBe((thrown as Error).message);
    expect(placeOf(again)).toEqual(place);
  });

  it('a world that throws ends the generated worlds where a failure would: its shrinking steps are not counted as generated, and a shard tells its peers where', async () => {
    const tornTail = (await import('./fixtures/blackbox-torn-tail.js')).default;
    const seen: number[] = [];
    const told: number[] = [];
    const thrown = await checkProperty(tornTail, { runs: 300, seed: SEED, onWorld: (_, k) => seen.push(k) }).catch((error: unknown) => error);
    expect(placeOf(thrown)).not.toBeNull();
    // Generated worlds 0 to k - 1 passed, and k threw; fast-check's shrinking after it ran on.
    const k = seen.length;
    expect(seen).toEqual([...Array(k).keys()]);
    expect(k).toBeLessThan(300);
    // As shard 1 of 1 beside peers: told the index of the world that threw, once.
    await checkProperty(tornTail, { runs: 300, seed: SEED, shard: { index: 1, count: 1 }, peers: { failed: (n) => told.push(n), bound: () => null } }).catch(() => null);
    expect(told).toEqual([k]);
  });

  it('two searches from the same seed find the same minimal world', async () => {
    const consumer = findMutant('max-position-fetched')!.consumer;
    const a = await checkProperty(consumer, { runs: 200, seed: SEED });
    const b = await checkProperty(consumer, { runs: 200, seed: SEED });
    expect(b.path).toBe(a.path);
    expect(b.counterexample?.hash).toBe(a.counterexample?.hash);
  });
});
