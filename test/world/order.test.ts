/**
 * The world's order and eligibility (src/world/order.ts) are written apart from the
 * oracle's (model/order.ts, model/binding.ts), so that a mistake in one cannot hide behind
 * the other. This holds them to the same answers on generated values: ties, shorter key
 * tuples, ids differing only in case or by a prefix, every filter, bounds and no bound.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as model from '../../model/binding.js';
import * as modelOrder from '../../model/order.js';
import * as world from '../../src/world/order.js';
import { SEED } from '../support.js';
import { bindingArb, eventArb, keyArb, positionArb, reordered } from '../model/values.js';

const run = { seed: SEED, numRuns: 1000 };

/** Anything a consumer could hand over as a position or a watermark, near misses included. */
const valueArb = fc.oneof(
  positionArb,
  fc.record({ key: fc.array(fc.oneof(fc.double(), fc.string({ maxLength: 1 }), fc.constant(null)), { maxLength: 2 }), id: fc.oneof(fc.string({ maxLength: 2 }), fc.integer()) }, { requiredKeys: [] }),
  fc.anything({ maxDepth: 2 }),
);

describe('the world orders events as the model does', () => {
  it('compareKeys: the same answer for every pair of key tuples', () => {
    fc.assert(
      fc.property(keyArb, keyArb, (a, b) => {
        expect(world.compareKeys(a, b)).toBe(modelOrder.compareKeys(a, b));
      }),
      run,
    );
  });

  it('comparePositions and compareEvents: the same answer for every pair, ties broken by id alike', () => {
    fc.assert(
      fc.property(eventArb, eventArb, fc.boolean(), (a, b, tie) => {
        const other = tie ? { ...b, key: [...a.key] } : b;
        const expected = modelOrder.comparePositions({ key: a.key, id: a.id }, { key: other.key, id: other.id });
        expect(world.comparePositions(a, other)).toBe(expected);
        expect(world.compareEvents(a, other)).toBe(expected);
      }),
      run,
    );
  });

  it('a request key that is not numbers compares as the model compares it', () => {
    // Consumers write what they like into a key-gt or key-gte request: the world must resume
    // where the model says it resumed.
    const junk = fc.array(fc.oneof(fc.double(), fc.constant(NaN), fc.string({ maxLength: 1 }), fc.constant(null), fc.constant(undefined)), { maxLength: 3 });
    fc.assert(
      fc.property(keyArb, junk, (a, b) => {
        expect(world.compareKeys(a, b as number[])).toBe(modelOrder.compareKeys(a, b as number[]));
      }),
      run,
    );
  });

  it('isPosition: the same answer for positions, near misses and anything else', () => {
    fc.assert(
      fc.property(valueArb, (v) => {
        expect(world.isPosition(v)).toBe(modelOrder.isPosition(v));
      }),
      run,
    );
  });
});

describe('the world decides eligibility as the model does', () => {
  it('eligible and admits: the same answer for every event under every binding', () => {
    fc.assert(
      fc.property(eventArb, bindingArb, (e, b) => {
        expect(world.eligible(b, e)).toBe(model.isEligible(b, e));
        expect(world.admits(b.filter, e.attrs)).toBe(model.filterAdmits(b.filter, e.attrs));
      }),
      run,
    );
  });

  it('fingerprint: the same string for every binding, in any field order', () => {
    fc.assert(
      fc.property(bindingArb, fc.boolean(), (b, flip) => {
        expect(world.fingerprint(b)).toBe(model.fingerprint(b));
        expect(world.fingerprint(reordered(b, flip) as model.Binding)).toBe(model.fingerprint(b));
      }),
      run,
    );
  });

  it('canonicalJson: the same string for anything a consumer could commit as a watermark', () => {
    fc.assert(
      fc.property(fc.oneof(valueArb, fc.anything({ maxDepth: 3, withNullPrototype: true, withSparseArray: true })), (v) => {
        expect(world.canonicalJson(v)).toBe(model.canonicalJson(v));
      }),
      run,
    );
  });
});

describe('the world resumes where a linear scan would', () => {
  it('firstWhere finds the first event past a position or key, as findIndex does, on streams with ties', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 30 }), positionArb, fc.constantFrom('after', 'gt', 'gte'), (events, at, form) => {
        const stream = [...events].sort(world.compareEvents);
        const past = (e: (typeof stream)[number]): boolean =>
          form === 'after' ? modelOrder.comparePositions(e, at) > 0 : form === 'gt' ? modelOrder.compareKeys(e.key, at.key) > 0 : modelOrder.compareKeys(e.key, at.key) >= 0;
        const linear = stream.findIndex(past);
        expect(world.firstWhere(stream, past)).toBe(linear === -1 ? stream.length : linear);
      }),
      run,
    );
  });
});

describe('the world does not run the oracle\u2019s code', () => {
  it('no module in src/world/ imports code from model/order.ts or model/binding.ts: types only', () => {
    const dir = new URL('../../src/world/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('source.ts');
    for (const file of files) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      const imports = text.match(/^(?:import|export)\s[^;]*?from\s+'[^']*model\/(?:order|binding)\.js'/gms) ?? [];
      for (const statement of imports) expect(statement, `${file}: ${statement}`).toMatch(/^import type\s/);
    }
  });
});
