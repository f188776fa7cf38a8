/**
 * Cursor values: how an event's first ordering field (its key, a number) is shown to a
 * connector as a timestamp, and how a timestamp a connector sends back (a `since` parameter,
 * a bookmark in its state) is read as a point of the order again.
 *
 * Keys are anchored to a fixed epoch, so a connector sees the same timestamps in every run:
 * key k is EPOCH + k * secondsPerKey. A date-only format shows every key of one day as the
 * same value, which is how such APIs create ties: `since=2024-01-02` re-serves the whole day
 * (inclusive) or skips it (exclusive).
 */

import { MAX_EVENTS } from '../../scenarios/arbitraries.js';

/** 2024-01-01T00:00:00Z, in seconds: key 0. */
export const EPOCH_SECONDS = 1_704_067_200;
const EPOCH_MS = EPOCH_SECONDS * 1000;

export const CURSOR_FORMATS = ['iso8601', 'epoch-seconds', 'epoch-millis', 'date'] as const;
export type CursorFormat = (typeof CURSOR_FORMATS)[number];

export interface CursorSpec {
  readonly format: CursorFormat;
  /** How many seconds one unit of key is. */
  readonly secondsPerKey: number;
}

export const DAY_SECONDS = 86_400;
const DAY_MS = DAY_SECONDS * 1000;

/**
 * The largest key a world can hold, with room to spare: generated worlds draw keys up to
 * their event count (at most MAX_EVENTS) and each change to the source lands at most one
 * past the head.
 */
export const KEY_LIMIT = 2 * MAX_EVENTS;

/**
 * The most seconds a key may stand for: every key up to KEY_LIMIT then falls before the year
 * 10000 (9999-12-31T23:59:59Z is 253,402,300,799), the last a four-digit ISO 8601 year shows.
 */
export const MAX_SECONDS_PER_KEY = 1_000_000;

/**
 * Why a key of `seconds` cannot be shown in the format, or null. Every key must show as a
 * value of its own that reads back as exactly that key (a date excepted: a day's keys tie
 * there on purpose, so a day must hold a whole number of them), and every key a world can
 * hold must be a timestamp the format can write.
 */
export function secondsPerKeyProblem(format: CursorFormat, seconds: number): string | null {
  const got = `got ${JSON.stringify(seconds)}`;
  if (!(seconds > 0) || seconds > MAX_SECONDS_PER_KEY) {
    return `cursor.secondsPerKey must be more than 0 and at most ${MAX_SECONDS_PER_KEY.toLocaleString('en-US')} (every key a world can hold, up to ${KEY_LIMIT.toLocaleString('en-US')}, must be a timestamp before the year 10000), ${got}`;
  }
  switch (format) {
    case 'epoch-seconds':
      return Number.isInteger(seconds) ? null : `cursor.secondsPerKey must be a whole number of seconds for epoch-seconds: a key between two seconds has no value of its own there, ${got}`;
    case 'epoch-millis':
    case 'iso8601': {
      const ms = seconds * 1000;
      // Below one millisecond every key would round to the same one and print as the same
      // value: distinct keys would tie, which only a date means to do.
      if (Math.round(ms) < 1) return `cursor.secondsPerKey must be at least 0.001 (one millisecond) for ${format}, the finest step its values show: below it distinct keys would print as the same value, ${got}`;
      return Math.abs(ms - Math.round(ms)) < 1e-6 ? null : `cursor.secondsPerKey must be a whole number of milliseconds (a multiple of 0.001) for ${format}: a key between two milliseconds has no value of its own there, ${got}`;
    }
    case 'date':
      return Number.isInteger(seconds) && DAY_SECONDS % seconds === 0 ? null : `cursor.secondsPerKey must divide a day (86,400 seconds) for a date, so that each day holds a whole number of keys and a day's first key starts it, ${got}`;
  }
}

/** Milliseconds per key: whole for every description the check accepts, so keys and values convert exactly. */
function msPerKey(spec: CursorSpec): number {
  return Math.round(spec.secondsPerKey * 1000);
}

/** The cursor value of a key, as the API renders it in a record. */
export function renderCursor(spec: CursorSpec, key: number): string | number {
  const ms = EPOCH_MS + key * msPerKey(spec);
  switch (spec.format) {
    case 'epoch-seconds':
      return ms / 1000;
    case 'epoch-millis':
      return ms;
    case 'iso8601':
      return new Date(ms).toISOString();
    case 'date':
      return new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
  }
}

/**
 * The keys a cursor value stands for: one point for a precise format, the half-open range
 * of one day's keys [from, to) for a date. Null when the value is not in the format. The
 * arithmetic is in whole milliseconds, so a value the API rendered reads back as its key
 * exactly.
 */
export function readCursor(spec: CursorSpec, value: unknown): { readonly from: number; readonly to: number } | null {
  const key = (ms: number): number => (ms - EPOCH_MS) / msPerKey(spec);
  switch (spec.format) {
    case 'epoch-seconds':
    case 'epoch-millis': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
      if (!Number.isFinite(n)) return null;
      const k = key(spec.format === 'epoch-millis' ? n : n * 1000);
      return { from: k, to: k };
    }
    case 'iso8601': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(value)) return null;
      const ms = Date.parse(value);
      if (!Number.isFinite(ms)) return null;
      const k = key(ms);
      return { from: k, to: k };
    }
    case 'date': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
      const ms = Date.parse(`${value}T00:00:00Z`);
      if (!Number.isFinite(ms)) return null;
      return { from: key(ms), to: key(ms + DAY_MS) };
    }
  }
}

/**
 * The watermark a bookmark claims, as a point of the order (docs/adapters.md, "What a
 * watermark may be"): inclusive, every event at or before the value is done; exclusive,
 * every event before it. A date covers its whole day when inclusive, none of it otherwise.
 * A value that is not a cursor value is returned as it is, for the checker to judge (a page
 * token kept as the bookmark is a token-as-watermark).
 */
export function bookmarkWatermark(spec: CursorSpec, value: unknown, inclusive: boolean): unknown {
  if (value === undefined || value === null) return null;
  const range = readCursor(spec, value);
  if (range === null) return value;
  if (spec.format === 'date') return { key: [inclusive ? range.to : range.from], inclusive: false };
  return { key: [range.from], inclusive };
}
