import type { AttrValue, SourceEvent } from './event.js';
import { kindsOf } from './kinds.js';

/**
 * R2: progress is bound to what was read. A binding names the stream (scope), the filter
 * the source applies, the ordering fields, and an optional upper bound that a snapshot
 * fixes. Progress recorded under one binding says nothing about another.
 */
export interface Binding {
  readonly scope: string;
  readonly filter: Filter;
  /** Names of the ordering fields; the event's `key` holds their values in this order. */
  readonly ordering: readonly string[];
  /** Snapshot upper bound on the first ordering field, inclusive; null for a live stream. */
  readonly upTo: number | null;
}

/** Filters are data, so a binding can be fingerprinted, shown and shrunk. */
export type Filter =
  | { readonly kind: 'all' }
  | { readonly kind: 'equals'; readonly attr: string; readonly value: AttrValue }
  | { readonly kind: 'in'; readonly attr: string; readonly values: readonly AttrValue[] };

export const FILTER_KINDS = kindsOf<Filter['kind']>()(['all', 'equals', 'in']);

/**
 * Whether the filter admits an event, as the oracle judges it. The world that serves the
 * stream decides with its own code (src/world/order.ts), so that a mistake here or there
 * shows as a disagreement instead of agreeing with itself; test/world/order.test.ts holds
 * the two to the same answers. The generators, the picture and consumers read this one.
 */
export function filterAdmits(filter: Filter, attrs: Readonly<Record<string, AttrValue>>): boolean {
  switch (filter.kind) {
    case 'all':
      return true;
    case 'equals':
      return attrs[filter.attr] === filter.value;
    case 'in':
      return filter.values.includes(attrs[filter.attr] as AttrValue);
  }
}

/** Eligibility in the bound stream: the filter admits it and it lies within the bound. */
export function isEligible(binding: Binding, e: SourceEvent): boolean {
  if (binding.upTo !== null && (e.key[0] ?? Number.NEGATIVE_INFINITY) > binding.upTo) return false;
  return filterAdmits(binding.filter, e.attrs);
}

/**
 * A stable fingerprint: canonical JSON (sorted keys) of the binding. Two bindings with the
 * same fingerprint select the same events in the same order. The world computes the same
 * string with its own code, and hands it to consumers to store beside their progress.
 */
export function fingerprint(binding: Binding): string {
  return `b:${canonicalJson(binding)}`;
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
