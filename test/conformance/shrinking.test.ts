import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShrinkTwice, worldDrawArb } from '../../scenarios/arbitraries.js';
import { checkProperty } from '../../src/run/conformance.js';
import { findMutant } from '../../src/selftest/mutants.js';
import { isSmaller, sizeOf } from '../../src/selftest/shrunk-size.js';
import { SEED } from '../support.js';

describe('shrinking generated worlds', () => {
  it('every drawn world can be shrunk without the context it was drawn with, as the second pass needs', () => {
    const arb = worldDrawArb();
    const draws = fc.sample(arb, { numRuns: 300, seed: SEED });
    expect(draws.filter((d) => !arb.canShrinkWithoutContext(d))).toEqual([]);
  });

  /**
   * A family that was on ("on": a weight) and a count: the world fails when the family is on
   * and the count is positive, or when it is off and the count is small. Shrinking the weight
   * first makes fast-check stop offering "off"; only a second pass from scratch finds it.
   */
  const draw = fc.record({ on: fc.option(fc.integer({ min: 1, max: 10 }), { nil: 0, freq: 3 }), n: fc.nat(100) });
  const fails = ({ on, n }: { on: number; n: number }): boolean => (on === 0 ? n < 5 : n >= 1);
  const minimal = (arb: fc.Arbitrary<{ on: number; n: number }>, path?: string) => {
    // A fixed seed whose first draw has the family on and a count of 5 or more.
    const out = fc.check(fc.property(arb, (d) => !fails(d)), { seed: 3, numRuns: 1000, ...(path === undefined ? {} : { path }) });
    return { value: out.counterexample?.[0], path: out.counterexample === null ? null : out.counterexamplePath };
  };

  it('a second pass finds what one monotone pass cannot: the family switched off', () => {
    expect(minimal(draw).value).toEqual({ on: 1, n: 1 });
    expect(minimal(new ShrinkTwice(draw)).value).toEqual({ on: 0, n: 0 });
  });

  it('the second pass is part of the shrink tree, so the seed and path replay it', () => {
    const arb = new ShrinkTwice(draw);
    const { path } = minimal(arb);
    expect(path).not.toBeNull();
    expect(minimal(arb, path ?? '').value).toEqual({ on: 0, n: 0 });
  });
});

/** narrow-replay-window's single search from seed 23, run once for the tests below that compare with it. */
const narrow = findMutant('narrow-replay-window')!;
let narrowOne: ReturnType<typeof checkProperty> | undefined;
const searchedOnce = (): ReturnType<typeof checkProperty> => (narrowOne ??= checkProperty(narrow.consumer, { runs: 1000, seed: 23, searches: 1 }));

describe('the smallest of several searches', () => {
  const mutant = findMutant('watermark-across-bindings')!;

  it('a failure is searched for three times and the smallest shrunk world is reported (seed 23: 3 events down to 2)', async () => {
    const one = await searchedOnce();
    const three = await checkProperty(narrow.consumer, { runs: 1000, seed: 23 });
    expect([one.searches, three.searches]).toEqual([1, 3]);
    // Worlds to the first failure are the first search's; the smaller world came from another.
    expect(three.runs).toBe(one.runs);
    expect(three.seed).not.toBe(23);
    expect(sizeOf(one.counterexample!).events).toBe(3);
    expect(sizeOf(three.counterexample!)).toMatchObject({ events: narrow.minimal.events, faults: narrow.minimal.faults });
  });

  it('whatever the seed, the reported world is no larger than the first search found, and its seed and path replay it', async () => {
    const one = await checkProperty(mutant.consumer, { runs: 1000, seed: SEED, searches: 1 });
    const three = await checkProperty(mutant.consumer, { runs: 1000, seed: SEED });
    expect(isSmaller(sizeOf(one.counterexample!), sizeOf(three.counterexample!))).toBe(false);
    const replay = await checkProperty(mutant.consumer, { seed: three.seed, path: three.path! });
    expect(replay.searches).toBe(1);
    expect(replay.counterexample?.hash).toBe(three.counterexample?.hash);
  });
});

describe('a failure reported unshrunk (shrink: false)', () => {
  it('is the first failing world as generated: no shrinking step and no further search, and its seed and path replay it', async () => {
    const shrunk = await searchedOnce();
    const first = await checkProperty(narrow.consumer, { runs: 1000, seed: 23, shrink: false });
    expect([first.status, first.searches, first.shrinks]).toEqual(['fail', 1, 0]);
    expect(shrunk.shrinks).toBeGreaterThan(0);
    // The same generated world the shrinking search started from, and larger than where it ended.
    expect(first.runs).toBe(shrunk.runs);
    expect(first.path).toBe(String(first.runs - 1));
    expect(isSmaller(sizeOf(shrunk.counterexample!), sizeOf(first.counterexample!))).toBe(true);
    const replay = await checkProperty(narrow.consumer, { seed: first.seed, path: first.path! });
    expect(replay.counterexample?.hash).toBe(first.counterexample?.hash);
  });

  it('takes a boolean, as the other options take their types', async () => {
    await expect(checkProperty(narrow.consumer, { runs: 1, seed: 1, shrink: 'no' as unknown as boolean })).rejects.toThrow('checkProperty: shrink must be true or false, got "no"');
  });
});
