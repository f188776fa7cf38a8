/**
 * An argument a consumer hands the world is checked and copied in one walk (checkedCopy). It
 * must find exactly what the check alone finds (jsonProblem: the same problem, with the same
 * path) and copy exactly what the copy alone copies (frozenCopy): the history records the
 * problem text of a malformed call, and the copy of every other argument.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonProblem } from '../../src/world/arguments.js';
import { checkedCopy, frozenCopy } from '../../src/world/frozen.js';
import { SEED } from '../support.js';

class Holder {}

/** Leaves JSON cannot carry, among ones it can. */
const leaf = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.constant(undefined)) },
  { weight: 1, arbitrary: fc.oneof(fc.bigInt(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY), fc.constant(() => 0), fc.constant(Symbol('s'))) },
);

const KEYS = fc.constantFrom('a', 'b', 'key', 'id', '__proto__', 'self', '0');

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('nullProto'), tie('instance'), tie('date')),
  array: fc.oneof(fc.array(tie('value'), { maxLength: 4 }), fc.sparseArray(tie('value'), { maxLength: 5 })),
  object: fc.dictionary(KEYS, tie('value'), { maxKeys: 4 }),
  nullProto: fc.dictionary(KEYS, tie('value'), { maxKeys: 3 }).map((d) => Object.assign(Object.create(null) as object, d)),
  // Not plain data: passed through as it is, though what it holds is checked.
  instance: fc.dictionary(KEYS, tie('value'), { maxKeys: 3 }).map((d) => {
    // Defined, not assigned: assigning `__proto__` would replace the instance's prototype.
    const holder = new Holder();
    for (const [k, x] of Object.entries(d)) Object.defineProperty(holder, k, { value: x, enumerable: true, writable: true, configurable: true });
    return holder;
  }),
  date: fc.constant(null).map(() => new Date(0)),
})) as { value: fc.Arbitrary<unknown> };

/** Sometimes the value contains itself: the first object found inside it points back at it. */
const maybeCyclic = fc.tuple(value, fc.boolean()).map(([v, cycle]) => {
  if (!cycle || v === null || typeof v !== 'object') return v;
  const inner = Object.values(v).find((x): x is object => x !== null && typeof x === 'object' && !(x instanceof Date) && !(x instanceof Holder));
  if (inner !== undefined && Object.isExtensible(inner)) (inner as Record<string, unknown>).back = v;
  else (v as Record<string, unknown>).self = v;
  return v;
});

/** Frozen all the way down, but for objects that are not plain data, which are passed through. */
function deeplyFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  const proto: unknown = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return true;
  return Object.isFrozen(v) && Object.values(v).every(deeplyFrozen);
}

describe('checkedCopy: one walk that checks like jsonProblem and copies like frozenCopy', () => {
  it('the same problem, or the same frozen copy', () => {
    fc.assert(
      fc.property(maybeCyclic, (v) => {
        const checked = checkedCopy(v, 'arg');
        const problem = jsonProblem(v, 'arg');
        expect(checked.problem).toBe(problem);
        if (problem !== null) {
          expect(checked.copy).toBeUndefined();
          return;
        }
        const copy = frozenCopy(v);
        expect(checked.copy).toStrictEqual(copy);
        expect(JSON.stringify(checked.copy)).toBe(JSON.stringify(v));
        expect(deeplyFrozen(checked.copy)).toBe(true);
        // A copy, never the consumer's own object (a primitive is its own copy).
        if (Array.isArray(v) || (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v)))) expect(checked.copy).not.toBe(v);
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('JSON data nested deeper than any real value is refused as frozenCopy refuses it, unless a problem comes first', () => {
    const deep = (depth: number, bottom: unknown): unknown => {
      let v: unknown = bottom;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    expect(() => frozenCopy(deep(300, 1))).toThrow(TypeError);
    expect(() => checkedCopy(deep(300, 1), 'arg')).toThrow('nested too deep');
    // The check goes all the way down: a BigInt at the bottom is the problem told.
    expect(checkedCopy(deep(300, 1n), 'arg').problem).toBe(jsonProblem(deep(300, 1n), 'arg'));
    expect(checkedCopy(deep(300, 1n), 'arg').problem).toMatch(/^arg(\[0\]){300} is a BigInt/);
  });

  it('each field is read once: a getter that answers a function the first time is refused, whatever it says next', () => {
    const fickle = (): object => {
      let reads = 0;
      return { get id(): unknown { return reads++ === 0 ? () => 1 : 'e41'; }, version: 1, nested: { a: 1 } };
    };
    expect(jsonProblem(fickle(), 'event')).toMatch(/^event\.id is a function/);
    expect(checkedCopy(fickle(), 'event').problem).toBe(jsonProblem(fickle(), 'event'));
  });

  it('a getter that throws is the argument that cannot be read', () => {
    const hostile = {
      get key(): never {
        throw new Error('no');
      },
    };
    expect(checkedCopy({ a: [hostile] }, 'arg').problem).toBe('arg cannot be read as JSON data: no');
    expect(jsonProblem({ a: [hostile] }, 'arg')).toBe('arg cannot be read as JSON data: no');
  });
});
