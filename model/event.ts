import type { Position } from './order.js';

/** A value that a filter can read. */
export type AttrValue = string | number | boolean;

/**
 * One version of an event as the source holds it. In an append-only log every event has
 * version 1 forever; in a mutable-records source a change is a new version, usually at a
 * new position (a flip may keep its position where the contract allows changes behind the
 * head), and each version must be delivered (omission is judged per id and version).
 */
export interface SourceEvent {
  readonly id: string;
  readonly version: number;
  /** The ordering tuple: the values of the binding's ordering fields, in order. */
  readonly key: readonly number[];
  readonly attrs: Readonly<Record<string, AttrValue>>;
  readonly payload: string;
}

/** Names one version of one event: the unit of delivery. */
export interface EventRef {
  readonly id: string;
  readonly version: number;
}

export function refOf(e: { id: string; version: number }): EventRef {
  return { id: e.id, version: e.version };
}

export function refKey(r: EventRef): string {
  return `${r.id}@${r.version}`;
}

/** How a person reads a ref: the bare id for a first version, id@version after that. */
export function formatRef(r: EventRef): string {
  return r.version === 1 ? r.id : refKey(r);
}

export function positionOf(e: SourceEvent): Position {
  return { key: e.key, id: e.id };
}
