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

/** 2024-01-01T00:00:00Z, in seconds: key 0. */
export const EPOCH_SECONDS = 1_704_067_200;

export const CURSOR_FORMATS = ['iso8601', 'epoch-seconds', 'epoch-millis', 'date'] as const;
export type CursorFormat = (typeof CURSOR_FORMATS)[number];

export interface CursorSpec {
  readonly format: CursorFormat;
  /** How many seconds one unit of key is. */
  readonly secondsPerKey: number;
}

const DAY = 86_400;

/** The cursor value of a key, as the API renders it in a record. */
export function renderCursor(spec: CursorSpec, key: number): string | number {
  const seconds = EPOCH_SECONDS + key * spec.secondsPerKey;
  switch (spec.format) {
    case 'epoch-seconds':
      return seconds;
    case 'epoch-millis':
      return Math.round(seconds * 1000);
    case 'iso8601':
      return new Date(Math.round(seconds * 1000)).toISOString();
    case 'date':
      return new Date(Math.floor(seconds / DAY) * DAY * 1000).toISOString().slice(0, 10);
  }
}

/**
 * The keys a cursor value stands for: one point for a precise format, the half-open range
 * of one day's keys [from, to) for a date. Null when the value is not in the format.
 */
export function readCursor(spec: CursorSpec, value: unknown): { readonly from: number; readonly to: number } | null {
  const key = (seconds: number): number => (seconds - EPOCH_SECONDS) / spec.secondsPerKey;
  switch (spec.format) {
    case 'epoch-seconds':
    case 'epoch-millis': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
      if (!Number.isFinite(n)) return null;
      const k = key(spec.format === 'epoch-millis' ? n / 1000 : n);
      return { from: k, to: k };
    }
    case 'iso8601': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(value)) return null;
      const ms = Date.parse(value);
      if (!Number.isFinite(ms)) return null;
      const k = key(ms / 1000);
      return { from: k, to: k };
    }
    case 'date': {
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
      const ms = Date.parse(`${value}T00:00:00Z`);
      if (!Number.isFinite(ms)) return null;
      const day = ms / 1000;
      return { from: key(day), to: key(day + DAY) };
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
