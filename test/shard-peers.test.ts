import { describe, expect, it } from 'vitest';
import { checkProperty, type PropertyOutcome, type ShardPeers } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';

/**
 * The jobs of `check --jobs` tell each other where they failed (ShardPeers): a job told of a
 * failure at index b stops past b, and stops shrinking a failure of its own found after b,
 * where it would otherwise search on and shrink for nothing the merge keeps. Scripted peers
 * here, so that when the news arrives is decided, not raced; the jobs themselves are tested
 * in jobs.test.ts.
 */
const consumer = findMutant('max-position-fetched')!.consumer;
const SEED = 4;
const RUNS = 300;

/** Peers whose bound is what `bound` says given what this shard has told so far; they keep what it told. */
function scripted(bound: (told: readonly number[]) => number | null): { readonly told: number[]; readonly peers: ShardPeers } {
  const told: number[] = [];
  return { told, peers: { failed: (k) => void told.push(k), bound: () => bound(told) } };
}

/** What a shard found, as the merge compares it. */
const found = (o: PropertyOutcome) => ({ status: o.status, runs: o.runs, seed: o.seed, path: o.path, shrinks: o.shrinks, searches: o.searches, hash: o.counterexample?.hash ?? null });

describe('a shard with peers', () => {
  // Seed 4 first fails at index 11, shard 2's of 2 (shard.test.ts relies on the same), and
  // shard 1 fails later on its own.
  const whole = checkProperty(consumer, { runs: RUNS, seed: SEED });
  const first = async (): Promise<number> => (await whole).runs - 1;
  // Each shard's search without peers, run once for the tests that compare with it.
  const searched = new Map<number, Promise<PropertyOutcome>>();
  const aloneAs = (shard: { readonly index: number; readonly count: number }): Promise<PropertyOutcome> => {
    let outcome = searched.get(shard.index);
    if (outcome === undefined) searched.set(shard.index, (outcome = checkProperty(consumer, { runs: RUNS, seed: SEED, shard })));
    return outcome;
  };

  it('that owns the first failure tells it once, and finds exactly what it finds without peers', async () => {
    const f = await first();
    const shard = { index: (f % 2) + 1, count: 2 };
    const alone = await aloneAs(shard);
    const p = scripted(() => null);
    const withPeers = await checkProperty(consumer, { runs: RUNS, seed: SEED, shard, peers: p.peers });
    expect(p.told).toEqual([f]);
    expect(found(withPeers)).toEqual(found(alone));
    expect(found(withPeers)).toEqual(found(await whole));
    expect(withPeers.stoppedBy).toBeUndefined();
  });

  it('told of an earlier failure runs its share up to it and none past it, and is no time limit', async () => {
    const f = await first();
    const shard = { index: ((f + 1) % 2) + 1, count: 2 };
    const alone = await aloneAs(shard);
    // Without peers it searches past f to a failure of its own, and shrinks it.
    expect(alone.status).toBe('fail');
    expect(alone.runs).toBeGreaterThan(f + 1);
    const ran: number[] = [];
    const p = scripted(() => f);
    const stopped = await checkProperty(consumer, { runs: RUNS, seed: SEED, shard, peers: p.peers, onWorld: (_, k) => ran.push(k) });
    expect(stopped.status).toBe('pass');
    expect(stopped.stoppedBy).toBe(f);
    expect(stopped.interrupted).toBe(false);
    // Every world of its share up to f, in order, and nothing else.
    expect(ran).toEqual(Array.from({ length: f + 1 }, (_, k) => k).filter((k) => k % 2 === shard.index - 1));
    expect(stopped.runs).toBe(f + 1);
    expect(p.told).toEqual([]);
  });

  it('that failed later itself stops shrinking when told of an earlier failure, and searches no further', async () => {
    const f = await first();
    const shard = { index: ((f + 1) % 2) + 1, count: 2 };
    const alone = await aloneAs(shard);
    expect(alone.shrinks).toBeGreaterThan(0);
    expect(alone.searches).toBeGreaterThan(1);
    // The news arrives just after this shard told its own failure.
    const p = scripted((told) => (told.length > 0 ? f : null));
    let worlds = 0;
    const stopped = await checkProperty(consumer, { runs: RUNS, seed: SEED, shard, peers: p.peers, progress: (n) => (worlds = n) });
    expect(p.told).toEqual([alone.runs - 1]);
    expect(stopped.status).toBe('fail');
    expect(stopped.stoppedBy).toBe(f);
    // Its own failure, as generated: no shrinking step ran, and no further search.
    expect({ runs: stopped.runs, path: stopped.path, shrinks: stopped.shrinks, searches: stopped.searches }).toEqual({ runs: alone.runs, path: String(alone.runs - 1), shrinks: 0, searches: 1 });
    expect(worlds).toBe(Array.from({ length: alone.runs }, (_, k) => k).filter((k) => k % 2 === shard.index - 1).length);
  });

  it('with a time limit, neither tells nor stops: a world abandoned when time is up may fail after its search ended as a pass', async () => {
    const f = await first();
    const shard = { index: ((f + 1) % 2) + 1, count: 2 };
    const alone = await aloneAs(shard);
    const p = scripted(() => f);
    // A limit no world comes near: the search runs whole, as without one.
    const limited = await checkProperty(consumer, { runs: RUNS, seed: SEED, shard, peers: p.peers, timeLimitMs: 3_600_000 });
    expect(found(limited)).toEqual(found(alone));
    expect(limited.stoppedBy).toBeUndefined();
    expect(p.told).toEqual([]);
  });

  it('ignores a bound at or past its own first failure: that failure is the earlier one', async () => {
    const f = await first();
    const shard = { index: (f % 2) + 1, count: 2 };
    const p = scripted((told) => (told.length > 0 ? f : null));
    const owner = await checkProperty(consumer, { runs: RUNS, seed: SEED, shard, peers: p.peers });
    expect(found(owner)).toEqual(found(await whole));
    expect(owner.stoppedBy).toBeUndefined();
  });
});
