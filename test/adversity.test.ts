import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refOf } from '../model/event.js';
import { planArb } from '../scenarios/arbitraries.js';
import { MINIMAL_WORLDS } from '../scenarios/minimal.js';
import { ev, plan } from '../scenarios/named.js';
import { adversityIn, CENSUS, type CensusItem } from '../src/selftest/adversity-census.js';
import type { Consumer } from '../src/adapter/consumer.js';
import { findMutant } from '../src/selftest/mutants.js';
import { Incarnation, referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { SEED } from './support.js';

/**
 * The adversity real sources show, and that generated worlds must reach, not only plan:
 * ties at the newest key under insertion-stable, several failures of one event's delivery,
 * lease hand-offs where the old holder comes back (A, B, A'), and changes of records as new
 * versions, in place or at new positions. bench/census.ts counts them over 1,000 worlds.
 */
describe('the adversity census reads what happened from the history', () => {
  const seen = async (p: Parameters<typeof execute>[0], consumer: Consumer = referenceConsumer()): Promise<CensusItem[]> => [...adversityIn((await execute(p, consumer)).history)].sort();

  it('a calm world shows none of it', async () => {
    expect(await seen(plan([ev(1), ev(2)], []))).toEqual([]);
  });

  it('a new row at the newest key, with a larger id, under insertion-stable', async () => {
    expect(await seen(MINIMAL_WORLDS['cursor-value-exclusive']!)).toEqual(['tie-at-newest-key']);
    // A clock tick (back 0) lands after the head: no tie.
    const tick = plan([ev(1)], [], { mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 0 }] });
    expect(await seen(tick)).toEqual([]);
  });

  it("an event's delivery failing twice; once is not enough", async () => {
    expect(await seen(MINIMAL_WORLDS['one-retry-per-event']!)).toEqual(['repeated-delivery-faults']);
    expect(await seen(plan([ev(1)], [{ call: 'emit', nth: 0, kind: 'error' }]))).toEqual([]);
  });

  it("A, B, A': the old holder takes the lease back after another held it, with calls in between", async () => {
    const world = MINIMAL_WORLDS['work-survives-lease-retake']!;
    expect(await seen(world, findMutant('work-survives-lease-retake')!.consumer)).toEqual(['lease-retake']);
    // One worker renewing its own lease, however late, never takes it back from anyone.
    expect(await seen({ ...world, workers: 1 })).toEqual([]);
  });

  it('a flip in place and a move to a new position', async () => {
    const window = { pageSize: 3, resumes: [], contract: { kind: 'replay-window', window: 4 } } as const;
    const flip = plan([ev(1), ev(2)], [], { source: window, mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'flip', target: 1, back: 0 }] });
    expect(await seen(flip)).toEqual(['in-place-flip']);
    const move = plan([ev(1), ev(2)], [], { mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'move', target: 0, back: 0 }] });
    expect(await seen(move)).toEqual(['moved-version']);
  });
});

describe('generated worlds reach each kind of adversity', () => {
  it('in a fair share of 300 worlds, counted in the executed histories', async () => {
    const plans = fc.sample(planArb(), { numRuns: 300, seed: SEED });
    const counts = Object.fromEntries(CENSUS.map((c) => [c, 0])) as Record<CensusItem, number>;
    for (const p of plans) for (const item of adversityIn((await execute(p, referenceConsumer())).history)) counts[item]++;
    // Measured over 300 worlds: 14% to 38% each. A floor of 1% leaves room for any seed, and
    // fails if an item stops happening. A newest-first error needs a newest-first source.
    for (const item of CENSUS.filter((c) => c !== 'newest-first-error')) expect(counts[item], `${item}: ${JSON.stringify(counts)}`).toBeGreaterThanOrEqual(3);
    expect(counts['newest-first-error']).toBe(0);
  });
});

/** Takes "completed" to mean "some version of this event was completed": the first version's record stands for all. */
class DedupesById extends Incarnation {
  protected override alreadyDone(events: Parameters<Incarnation['alreadyDone']>[0]): Promise<boolean[]> {
    return this.world.completed(events.map((e) => ({ ...refOf(e), version: 1 })));
  }
}

describe('a flip in place is a new version to deliver, at the position the old one held', () => {
  // e2 flips from order to refund inside the replay window, keeping its key and id. Bound to
  // every kind, the new version is eligible and must be delivered too.
  const window = { pageSize: 3, resumes: [], contract: { kind: 'replay-window', window: 4 } } as const;
  const world = plan([ev(1), ev(2)], [], { source: window, mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'flip', target: 1, back: 0 }] });

  it('the source keeps the position and the reference consumer delivers the new version', async () => {
    const run = await execute(world, referenceConsumer());
    const flip = run.history.steps.find((s) => s.kind === 'mutation');
    expect(flip).toMatchObject({ mutation: 'flip', event: { id: 'e2', version: 2, key: [2], attrs: { kind: 'refund' } } });
    expect(run.result.verdict.status).toBe('pass');
  });

  it('a consumer that dedupes by id skips it, and is caught', async () => {
    const consumer: Consumer = { name: 'dedupes-by-id', capabilities: { delivery: 'at-least-once' }, run: (w) => new DedupesById(w).run() };
    const run = await execute(world, consumer);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toContain('omission');
    expect(run.result.verdict.anomalies.find((a) => a.kind === 'omission')?.events).toEqual([{ id: 'e2', version: 2 }]);
  });
});
