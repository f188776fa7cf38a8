/**
 * R1, the stable total order, as properties of model/order.ts itself: the oracle sorts and
 * compares with it, so it has to be a total order on positions, with ties broken by id.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, comparePositions, isPosition, type Position } from '../../model/order.js';
import { SEED } from '../support.js';
import { fieldArb, idArb, keyArb, positionArb } from './values.js';

const sign = (n: number): number => Math.sign(n);
const run = { seed: SEED, numRuns: 500 };

/** The properties every comparison of a total order has, for one comparison and one generator. */
function totalOrder<T>(name: string, compare: (a: T, b: T) => number, arb: fc.Arbitrary<T>, same: (a: T, b: T) => boolean): void {
  describe(`${name} is a total order`, () => {
    it('answers -1, 0 or 1, and 0 exactly for the same value (reflexive, and total: two values are never incomparable)', () => {
      fc.assert(
        fc.property(arb, arb, (a, b) => {
          expect([-1, 0, 1]).toContain(compare(a, b));
          expect(compare(a, a)).toBe(0);
          expect(compare(a, b) === 0).toBe(same(a, b));
        }),
        run,
      );
    });

    it('is antisymmetric: swapping the arguments flips the answer', () => {
      fc.assert(
        fc.property(arb, arb, (a, b) => {
          expect(sign(compare(b, a)) + sign(compare(a, b))).toBe(0);
        }),
        run,
      );
    });

    it('is transitive: a <= b and b <= c give a <= c', () => {
      fc.assert(
        fc.property(arb, arb, arb, (a, b, c) => {
          // Every arrangement of the three, so the premise holds in at least one of them.
          for (const [x, y, z] of [[a, b, c], [a, c, b], [b, a, c], [b, c, a], [c, a, b], [c, b, a]] as [T, T, T][]) {
            if (compare(x, y) > 0 || compare(y, z) > 0) continue;
            expect(compare(x, z)).toBeLessThanOrEqual(0);
            if (compare(x, y) < 0 || compare(y, z) < 0) expect(compare(x, z)).toBe(-1);
          }
        }),
        run,
      );
    });
  });
}

const sameKey = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const samePosition = (a: Position, b: Position): boolean => sameKey(a.key, b.key) && a.id === b.id;

totalOrder('compareKeys', compareKeys, keyArb, sameKey);
totalOrder('comparePositions', comparePositions, positionArb, samePosition);

describe('R1 positions: key first, id as tie-break', () => {
  it('a shorter key tuple sorts before any longer one it is a prefix of', () => {
    fc.assert(
      fc.property(keyArb, fc.array(fieldArb, { minLength: 1, maxLength: 2 }), (key, more) => {
        expect(compareKeys(key, [...key, ...more])).toBe(-1);
      }),
      run,
    );
  });

  it('keys that differ decide alone, whatever the ids', () => {
    fc.assert(
      fc.property(positionArb, positionArb, (a, b) => {
        fc.pre(!sameKey(a.key, b.key));
        expect(comparePositions(a, b)).toBe(compareKeys(a.key, b.key));
      }),
      run,
    );
  });

  it('tied keys are ordered by id in plain code-unit order: case and prefixes included', () => {
    fc.assert(
      fc.property(keyArb, idArb, idArb, (key, a, b) => {
        const expected = a === b ? 0 : a < b ? -1 : 1;
        expect(comparePositions({ key, id: a }, { key: [...key], id: b })).toBe(expected);
      }),
      run,
    );
    // Spelled out: upper case before lower case, and a prefix before what it prefixes.
    expect(comparePositions({ key: [1], id: 'B' }, { key: [1], id: 'a' })).toBe(-1);
    expect(comparePositions({ key: [1], id: 'a' }, { key: [1], id: 'ab' })).toBe(-1);
    expect(comparePositions({ key: [1], id: 'a' }, { key: [1], id: 'A' })).toBe(1);
  });

  it('sorting gives one order whatever order the positions came in', () => {
    fc.assert(
      fc.property(
        fc.array(positionArb, { maxLength: 12 }).chain((ps) => fc.tuple(fc.constant(ps), fc.shuffledSubarray(ps, { minLength: ps.length, maxLength: ps.length }))),
        ([ps, shuffled]) => {
          const print = (xs: Position[]): string => JSON.stringify([...xs].sort(comparePositions).map((p) => [p.key.map((k) => k + 0), p.id]));
          expect(print(shuffled)).toBe(print(ps));
        },
      ),
      run,
    );
  });
});

describe('isPosition', () => {
  it('accepts every { key: finite numbers, id: string }', () => {
    fc.assert(
      fc.property(positionArb, (p) => {
        expect(isPosition(p)).toBe(true);
      }),
      run,
    );
  });

  it('refuses anything else: a token, a key with NaN or Infinity, a missing or non-string id', () => {
    for (const v of [null, 'q8Zx1c', 3, [], { key: [1] }, { id: 'a' }, { key: [NaN], id: 'a' }, { key: [Infinity], id: 'a' }, { key: ['1'], id: 'a' }, { key: [1], id: 1 }, { key: 1, id: 'a' }]) {
      expect(isPosition(v), JSON.stringify(v)).toBe(false);
    }
  });
});
