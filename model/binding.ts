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

/**
 * Written as loops that append to one string: every ground truth replay fingerprints its
 * binding, and the version built of map, sort and join was a tenth of a small world's replay.
 * The text is the same, hole for hole: a hole in an array prints as nothing, as join prints it.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      if (i in value) out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = sortedKeys(value);
    let out = '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (i > 0) out += ',';
      out += `${quoted(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * An object's own keys in code-unit order, as `sort()` orders strings. A few keys, as a
 * binding or a watermark has, are sorted by insertion: `sort()` is built for long arrays and
 * took most of a fingerprint's time.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

/** A key as JSON: a key of letters, digits, `_` and `-` needs no escape, and is quoted as it is; any other as JSON.stringify quotes it. */
function quoted(key: string): string {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const plain = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;
    if (!plain) return JSON.stringify(key);
  }
  return `"${key}"`;
}
