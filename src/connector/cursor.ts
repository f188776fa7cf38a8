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
import { dayInstants, dayStartingAt, epochInstant, isoInstant, type Instant, type IsoReading } from './instant.js';

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
 * Where a value falls among the keys, which are whole numbers: exactly at key `floor`, or
 * (`exact` false) strictly between `floor` and `floor + 1`. Found in exact decimal
 * arithmetic (instant.ts), so a value a microsecond past a key is past it, never on it.
 */
export interface KeyPoint {
  readonly floor: number;
  readonly exact: boolean;
  /**
   * The point as a number, for a record's key and for messages: the key itself when exact,
   * else a number strictly between the two keys, never a whole number.
   */
  readonly approx: number;
}

/** What a cursor value stands for: an instant, or a day, the instants from its start up to (not at) its end. */
export type CursorRange = { readonly kind: 'instant'; readonly at: KeyPoint } | { readonly kind: 'day'; readonly from: KeyPoint; readonly to: KeyPoint };

/** The first key at or after a point. */
export function firstKeyFrom(point: KeyPoint): number {
  return point.exact ? point.floor : point.floor + 1;
}

/** Keys farther out than this are no world's, and past where a number tells a key from its neighbour. */
const FARTHEST_KEY = 2n ** 50n;

/**
 * An instant's point among the keys, `earlierMs` milliseconds before it (a lookback), or null
 * when it is farther than any key can be.
 */
function keyPoint(spec: CursorSpec, t: Instant, earlierMs = 0): KeyPoint | null {
  const per = 10n ** BigInt(t.scale);
  // key = (t in ms - earlierMs - EPOCH_MS) / msPerKey, a fraction num / den with den > 0; floored.
  const num = t.units * 1000n - (BigInt(EPOCH_MS) + BigInt(earlierMs)) * per;
  const den = BigInt(msPerKey(spec)) * per;
  let q = num / den;
  let r = num % den;
  if (r < 0n) {
    q -= 1n;
    r += den;
  }
  if (q > FARTHEST_KEY || q < -FARTHEST_KEY) return null;
  const floor = Number(q);
  if (r === 0n) return { floor, exact: true, approx: floor };
  let approx = floor + Number((r * 1_000_000_000n) / den) / 1e9;
  // Closer to a key than nine digits (or a double) tell: shown just past it, never on it.
  if (!(approx > floor && approx < floor + 1)) approx = floor + (Math.abs(floor) * Number.EPSILON || Number.MIN_VALUE);
  return { floor, exact: false, approx };
}

/**
 * What a cursor value a connector wrote (a record's, a bookmark) stands for among the keys:
 * an instant for a precise format, a day for a date. Null when the value is not in the
 * format. Read digit by digit (instant.ts), so a value the API rendered reads back as its key
 * exactly, and any other value as the point it names, however fine its digits, in any way
 * RFC 3339 writes it (instant.ts, IsoReading). A day written as a datetime at its midnight
 * (UTC) is that day: a connector that declares the field a date-time writes it so
 * (`2024-01-02T00:00:00.000000Z`), and its destination gets the same day.
 */
export function readCursor(spec: CursorSpec, value: unknown, earlierMs = 0): CursorRange | null {
  if (spec.format !== 'date' || dayInstants(value) !== null) return read(spec, value, 'written', earlierMs);
  const midnight = isoInstant(value, 'written');
  return dayRange(spec, midnight === null ? null : dayStartingAt(midnight), earlierMs);
}

/**
 * What a cursor value the API is sent (a `since` parameter) stands for: as readCursor, but
 * only a value written in the format, as the API itself reads it: a date-only API refuses a
 * datetime, and a date-time has its `T` and its `Z`.
 */
export function readParameter(spec: CursorSpec, value: unknown): CursorRange | null {
  return read(spec, value, 'parameter');
}

function read(spec: CursorSpec, value: unknown, reading: IsoReading, earlierMs = 0): CursorRange | null {
  if (spec.format === 'date') return dayRange(spec, dayInstants(value), earlierMs);
  const t = spec.format === 'iso8601' ? isoInstant(value, reading) : epochInstant(value, spec.format === 'epoch-millis' ? 1000 : 1);
  const at = t === null ? null : keyPoint(spec, t, earlierMs);
  return at === null ? null : { kind: 'instant', at };
}

function dayRange(spec: CursorSpec, day: { readonly start: Instant; readonly end: Instant } | null, earlierMs = 0): CursorRange | null {
  const [from, to] = day === null ? [null, null] : [keyPoint(spec, day.start, earlierMs), keyPoint(spec, day.end, earlierMs)];
  return from === null || to === null ? null : { kind: 'day', from, to };
}

/**
 * The watermark a bookmark claims, as a point of the order (docs/adapters.md, "What a
 * watermark may be"): inclusive, every event at or before the value is done; exclusive,
 * every event before it. A date covers its whole day when inclusive, none of it otherwise.
 * A value between two keys claims the same either way: every key before it. A value that is
 * not a cursor value is returned as it is, for the checker to judge (a page token kept as
 * the bookmark is a token-as-watermark).
 *
 * With a lookback (`lookbackMs`), the connector reads again, on every sync, what lies that
 * far behind its bookmark: it claims only what lies behind the bookmark by the lookback, and
 * the point claimed is that instant, read as exactly as the bookmark itself.
 */
export function bookmarkWatermark(spec: CursorSpec, value: unknown, inclusive: boolean, lookbackMs = 0): unknown {
  if (value === undefined || value === null) return null;
  const range = readCursor(spec, value, lookbackMs);
  if (range === null) return value;
  // A day claims every record before its end, or before its start.
  const [point, orAt] = range.kind === 'day' ? [inclusive ? range.to : range.from, false] : [range.at, inclusive];
  return point.exact ? { key: [point.floor], inclusive: orAt } : { key: [point.floor], inclusive: true };
}
