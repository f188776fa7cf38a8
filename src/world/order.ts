import type { Binding, Filter } from '../../model/binding.js';
import type { AttrValue, SourceEvent } from '../../model/event.js';
import type { Position } from '../../model/order.js';

/**
 * The world's own order and eligibility: what the simulated source serves, and in what
 * order. The oracle in model/ judges what the world served against its own copy of these
 * rules; if both read one implementation, a mistake in it would make the world serve the
 * wrong stream and the oracle agree that it was right. So this module imports only types
 * from model/, and test/world/order.test.ts holds the two to the same answers on generated
 * events and bindings.
 */

/**
 * Key tuples field by field; on a shared prefix the shorter tuple comes first. A field is
 * compared by subtraction, so a request key holding something that is not a number (NaN
 * when subtracted) places every event after it, as the model does.
 */
export function compareKeys(a: readonly number[], b: readonly number[]): number {
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference < 0) return -1;
    if (difference !== 0) return 1;
  }
  if (a.length === b.length) return 0;
  return a.length < b.length ? -1 : 1;
}

/** The stable total order (R1): key tuple, then id in plain UTF-16 code-unit order. */
export function comparePositions(a: Position, b: Position): number {
  return compareKeys(a.key, b.key) || compareIds(a.id, b.id);
}

/** Two events of the source in the stable order, without building a position for either. */
export function compareEvents(a: SourceEvent, b: SourceEvent): number {
  return compareKeys(a.key, b.key) || compareIds(a.id, b.id);
}

function compareIds(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

/** Whether a consumer's value is shaped like a position: `{ key: finite numbers, id: string }`. */
export function isPosition(value: unknown): value is Position {
  if (value === null || typeof value !== 'object') return false;
  const { key, id } = value as { key?: unknown; id?: unknown };
  if (typeof id !== 'string' || !Array.isArray(key)) return false;
  for (const field of key) if (typeof field !== 'number' || !Number.isFinite(field)) return false;
  return true;
}

/** Whether the filter lets an event with these attributes through. An unknown filter admits nothing. */
export function admits(filter: Filter, attrs: Readonly<Record<string, AttrValue>>): boolean {
  if (filter.kind === 'all') return true;
  if (filter.kind === 'equals') return attrs[filter.attr] === filter.value;
  if (filter.kind === 'in') return filter.values.includes(attrs[filter.attr] as AttrValue);
  return false;
}

/** Whether the event belongs to the bound stream: within the snapshot bound, if any, and admitted by the filter. */
export function eligible(binding: Binding, event: SourceEvent): boolean {
  if (binding.upTo !== null) {
    const first = event.key.length > 0 ? (event.key[0] as number) : Number.NEGATIVE_INFINITY;
    if (first > binding.upTo) return false;
  }
  return admits(binding.filter, event.attrs);
}

/**
 * JSON with every object's keys sorted, so that equal data prints equal whatever order it
 * was built in. Anything JSON cannot print (undefined, a function) prints as null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  for (const name of Object.keys(record).sort()) fields.push(`${JSON.stringify(name)}:${canonicalJson(record[name])}`);
  return `{${fields.join(',')}}`;
}

/** The binding's fingerprint, as consumers store it beside their progress (R2): it must equal the model's. */
export function fingerprint(binding: Binding): string {
  return `b:${canonicalJson(binding)}`;
}

/**
 * The first index of a sorted array at which `past` holds, given that it holds from some
 * index to the end; the length when it holds nowhere. A binary search: resuming a page is
 * logarithmic in the stream, not linear.
 */
export function firstWhere<T>(sorted: readonly T[], past: (item: T) => boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (past(sorted[middle] as T)) high = middle;
    else low = middle + 1;
  }
  return low;
}
