/**
 * Generators for the order and binding properties: small values, so that ties, shared key
 * prefixes and ids that differ only in case or by a prefix come up often.
 */
import fc from 'fast-check';
import type { Binding, Filter } from '../../model/binding.js';
import type { AttrValue, SourceEvent } from '../../model/event.js';
import type { Position } from '../../model/order.js';

/** Ids that tie in every way but one: case only ('a', 'A'), a prefix ('a', 'ab'), the empty id, non-ASCII. */
export const idArb: fc.Arbitrary<string> = fc.oneof(fc.constantFrom('', 'a', 'A', 'ab', 'aB', 'Ab', 'AB', 'b', 'B', 'a0', 'a00', 'é', 'e\u0301', '\u{1F600}'), fc.string({ maxLength: 3 }));

/** One ordering field: mostly small integers (ties), sometimes any finite number, -0 included. */
export const fieldArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -2, max: 2 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constant(-0) },
);

/** Key tuples of up to three fields, so shorter tuples meet longer ones with a shared prefix. */
export const keyArb: fc.Arbitrary<number[]> = fc.array(fieldArb, { maxLength: 3 });

export const positionArb: fc.Arbitrary<Position> = fc.record({ key: keyArb, id: idArb });

const attrValueArb: fc.Arbitrary<AttrValue> = fc.oneof(fc.constantFrom('order', 'refund', 'Order', ''), fc.integer({ min: -1, max: 1 }), fc.boolean());

export const eventArb: fc.Arbitrary<SourceEvent> = fc.record({
  id: idArb,
  version: fc.integer({ min: 1, max: 3 }),
  key: keyArb,
  attrs: fc.dictionary(fc.constantFrom('kind', 'region', 'Kind'), attrValueArb, { maxKeys: 3 }),
  payload: fc.string({ maxLength: 4 }),
});

export const filterArb: fc.Arbitrary<Filter> = fc.oneof(
  fc.constant({ kind: 'all' } as const),
  fc.record({ kind: fc.constant('equals' as const), attr: fc.constantFrom('kind', 'region', 'Kind', 'missing'), value: attrValueArb }),
  fc.record({ kind: fc.constant('in' as const), attr: fc.constantFrom('kind', 'region', 'Kind', 'missing'), values: fc.array(attrValueArb, { maxLength: 3 }) }),
);

export const bindingArb: fc.Arbitrary<Binding> = fc.record({
  scope: fc.constantFrom('orders', 'refunds', 'Orders'),
  filter: filterArb,
  ordering: fc.array(fc.constantFrom('ts', 'shard', 'seq'), { minLength: 1, maxLength: 3 }),
  upTo: fc.option(fieldArb, { nil: null }),
});

/** The same value with every object's keys in another order, all the way down. */
export function reordered(value: unknown, flip: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => reordered(v, flip));
  if (value === null || typeof value !== 'object') return value;
  const names = Object.keys(value).sort();
  if (flip) names.reverse();
  else names.push(...names.splice(0, 1));
  return Object.fromEntries(names.map((k) => [k, reordered((value as Record<string, unknown>)[k], flip)]));
}
