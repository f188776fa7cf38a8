import { compareKeys, comparePositions, type Position } from './order.js';

/**
 * What a committed watermark covers. A watermark is a cut in the bound order: every
 * position at or before it is claimed to have a durable outcome. Real consumers write it in
 * several correct forms, and each is judged by the positions it covers, not by its shape:
 *
 *   { key: [7, 2], id: 'e07' }        an event's position: covers it and everything before
 *   { key: [7, 2], id: '' }           just before every event at key [7, 2] (a cursor value
 *                                     written as a position; '' sorts before every id)
 *   { key: [7, 2], inclusive: true }  a cursor value alone: every event with key <= [7, 2]
 *   { key: [7, 2], inclusive: false } every event with key < [7, 2]
 *   null                              nothing yet: covers nothing
 *
 * A key tuple must have one number per ordering field of the binding. Anything else (an
 * opaque page token, an offset, a free string) is not a point of the order at all.
 */
export interface Cut {
  readonly key: readonly number[];
  /** The cut lies after this id at `key`; with `top`, after every id at `key`. */
  readonly id: string;
  readonly top: boolean;
}

/** The empty watermark: before every position. */
export const NOTHING: Cut = { key: [], id: '', top: false };

export type Reading = { readonly cut: Cut } | { readonly notAPoint: string };

/** Reads a watermark value as a cut of an order with `arity` ordering fields, or says why it is not one. */
export function readCut(value: unknown, arity: number): Reading {
  if (value === null) return { cut: NOTHING };
  if (typeof value === 'string') return { notAPoint: 'a string, such as an opaque page token' };
  if (typeof value === 'number') return { notAPoint: 'a bare number, such as an offset or a count' };
  if (typeof value !== 'object' || Array.isArray(value)) return { notAPoint: Array.isArray(value) ? 'a bare array; write a key tuple as { key, inclusive }' : `a ${typeof value}` };
  const v = value as { key?: unknown; id?: unknown; inclusive?: unknown };
  if (!Array.isArray(v.key) || !v.key.every((x) => typeof x === 'number' && Number.isFinite(x))) return { notAPoint: 'an object without a key tuple of finite numbers' };
  if (v.key.length !== arity) return { notAPoint: `a key tuple of ${v.key.length} field(s), where the binding orders by ${arity}` };
  const key = v.key as number[];
  if (typeof v.id === 'string') return { cut: { key, id: v.id, top: false } };
  if (v.id === undefined && typeof v.inclusive === 'boolean') return { cut: { key, id: '', top: v.inclusive } };
  return { notAPoint: 'an object with a key tuple but neither an id string nor inclusive: true|false' };
}

/** Whether the cut covers (lies at or after) a position. */
export function covers(cut: Cut, p: Position): boolean {
  return compareCutToPosition(cut, p) >= 0;
}

/** Negative when the cut lies before the position, else non-negative (0: exactly at it). */
function compareCutToPosition(cut: Cut, p: Position): number {
  if (cut === NOTHING) return -1;
  const k = compareKeys(cut.key, p.key);
  if (k !== 0) return k;
  if (cut.top) return 1;
  return comparePositions({ key: cut.key, id: cut.id }, p);
}

/** Orders two cuts: negative when `a` covers strictly less than `b`. */
export function compareCuts(a: Cut, b: Cut): number {
  if (a === NOTHING || b === NOTHING) return a === b ? 0 : a === NOTHING ? -1 : 1;
  const k = compareKeys(a.key, b.key);
  if (k !== 0) return k;
  if (a.top !== b.top) return a.top ? 1 : -1;
  if (a.top) return 0;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

export function formatCut(cut: Cut): string {
  if (cut === NOTHING) return 'nothing';
  const key = cut.key.join(',');
  if (cut.top) return `${key} (inclusive)`;
  return cut.id === '' ? `${key} (exclusive)` : `${key}#${cut.id}`;
}
