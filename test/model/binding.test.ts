/**
 * R2, progress bound to what was read, as properties of model/binding.ts itself: the
 * fingerprint tells bindings apart whatever order their fields were written in, and
 * eligibility is the filter and the snapshot bound, nothing else.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, filterAdmits, fingerprint, isEligible, type Binding } from '../../model/binding.js';
import { SEED } from '../support.js';
import { bindingArb, eventArb, filterArb, reordered } from './values.js';

const run = { seed: SEED, numRuns: 300 };

/** JSON values with objects nested in arrays and arrays in objects, keys with awkward names included. */
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 3 }), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom('__proto__', 'constructor', 'a', 'A', 'ab')), tie('value'), { maxKeys: 4 }),
})).value;

describe('canonicalJson', () => {
  it('does not depend on the order of any object\u2019s keys, at any depth', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        expect(canonicalJson(reordered(v, true))).toBe(canonicalJson(v));
        expect(canonicalJson(reordered(v, false))).toBe(canonicalJson(v));
      }),
      run,
    );
  });

  it('is JSON of the same value, with every object\u2019s keys sorted', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        const printed = canonicalJson(v);
        expect(JSON.parse(printed)).toEqual(JSON.parse(JSON.stringify(v)));
        const keyLists: string[][] = [];
        JSON.parse(printed, function (this: unknown, _k, value: unknown) {
          // Object.keys lists array-index names first whatever the text said; the others keep the text's order.
          if (value !== null && typeof value === 'object' && !Array.isArray(value)) keyLists.push(Object.keys(value).filter((k) => !/^(0|[1-9]\d*)$/.test(k)));
          return value;
        });
        for (const keys of keyLists) expect(keys).toEqual([...keys].sort());
      }),
      run,
    );
  });

  it('tells values apart exactly when their JSON differs beyond key order', () => {
    fc.assert(
      fc.property(jsonArb, jsonArb, (a, b) => {
        // Deep equality of what JSON keeps, which ignores the order of keys.
        const same = isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
        expect(canonicalJson(a) === canonicalJson(b)).toBe(same);
      }),
      run,
    );
    expect(canonicalJson({ a: 1, b: [2, { d: 3, c: 4 }] })).toBe('{"a":1,"b":[2,{"c":4,"d":3}]}');
    expect(canonicalJson({ a: undefined })).toBe('{"a":null}');
  });
});

describe('fingerprint', () => {
  it('is the same for the same binding written in any field order', () => {
    fc.assert(
      fc.property(bindingArb, fc.boolean(), (b, flip) => {
        expect(fingerprint(reordered(b, flip) as Binding)).toBe(fingerprint(b));
      }),
      run,
    );
  });

  it('differs for bindings that differ in any field: scope, filter, ordering or bound', () => {
    fc.assert(
      fc.property(bindingArb, bindingArb, (a, b) => {
        const equal = JSON.stringify(reordered(a, true)) === JSON.stringify(reordered(b, true));
        expect(fingerprint(a) === fingerprint(b)).toBe(equal);
      }),
      run,
    );
  });
});

describe('eligibility', () => {
  it('a filter of all admits everything; in with one value admits what equals admits; in does not care for order', () => {
    fc.assert(
      fc.property(eventArb, filterArb, (e, f) => {
        expect(filterAdmits({ kind: 'all' }, e.attrs)).toBe(true);
        if (f.kind === 'equals') expect(filterAdmits({ kind: 'in', attr: f.attr, values: [f.value] }, e.attrs)).toBe(filterAdmits(f, e.attrs));
        if (f.kind === 'in') {
          expect(filterAdmits({ ...f, values: [...f.values].reverse() }, e.attrs)).toBe(filterAdmits(f, e.attrs));
          expect(filterAdmits(f, e.attrs)).toBe(f.values.some((v) => filterAdmits({ kind: 'equals', attr: f.attr, value: v }, e.attrs)));
        }
      }),
      run,
    );
  });

  it('an event is eligible exactly when the filter admits it and its first field is within the bound', () => {
    fc.assert(
      fc.property(eventArb, bindingArb, (e, b) => {
        const within = b.upTo === null || (e.key[0] ?? Number.NEGATIVE_INFINITY) <= b.upTo;
        expect(isEligible(b, e)).toBe(within && filterAdmits(b.filter, e.attrs));
      }),
      run,
    );
  });

  it('raising the bound never makes an event ineligible, and no bound admits the most', () => {
    fc.assert(
      fc.property(eventArb, bindingArb, fc.nat(5), (e, b, more) => {
        fc.pre(b.upTo !== null);
        if (isEligible(b, e)) {
          expect(isEligible({ ...b, upTo: (b.upTo as number) + more }, e)).toBe(true);
          expect(isEligible({ ...b, upTo: null }, e)).toBe(true);
        }
      }),
      run,
    );
  });

  it('scope and ordering names do not change which events are eligible, only the fingerprint', () => {
    fc.assert(
      fc.property(eventArb, bindingArb, bindingArb, (e, a, b) => {
        expect(isEligible({ ...b, filter: a.filter, upTo: a.upTo }, e)).toBe(isEligible(a, e));
      }),
      run,
    );
  });
});
