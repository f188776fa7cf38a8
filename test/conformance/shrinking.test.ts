import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShrinkTwice, worldDrawArb } from '../../scenarios/arbitraries.js';
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
  const minimal = (arb: fc.Arbitrary<{ on: number; n: number }>) => {
    const out = fc.check(fc.property(arb, (d) => !fails(d)), { seed: SEED, numRuns: 1000, examples: [[{ on: 7, n: 30 }]] });
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
    const replay = fc.check(fc.property(arb, (d) => !fails(d)), { seed: SEED, numRuns: 1000, examples: [[{ on: 7, n: 30 }]], path: path ?? '' });
    expect(replay.counterexample?.[0]).toEqual({ on: 0, n: 0 });
  });
});
