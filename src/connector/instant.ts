/**
 * Timestamps as exact instants: a cursor value a connector writes (an ISO 8601 date-time,
 * a day, epoch seconds or milliseconds as a number or a string of digits) read digit by digit
 * into a decimal number of seconds since 1970-01-01T00:00:00Z. Never through a Date or a float
 * of seconds: a Date keeps milliseconds, so `00:00:42.000001Z`, a microsecond past 42, would
 * read as 42 itself, and two values a microsecond apart as one.
 */

/** `units / 10^scale` seconds since 1970-01-01T00:00:00Z, exactly. */
export interface Instant {
  readonly units: bigint;
  readonly scale: number;
}

/**
 * Fraction digits kept. Past them only whether any digit is not zero can matter (keys are
 * whole milliseconds apart, far coarser): the rest is kept as one digit 1, so a value a hair
 * past a key stays past it, and the digits a hostile value may hold cost nothing.
 */
const FRACTION_DIGITS = 40;

/** Integer digits beyond which a number is no timestamp of any world: never turned into a BigInt. */
const INTEGER_DIGITS = 30;

/** An exponent no number written as a JSON number or a double needs to exceed. */
const EXPONENT_LIMIT = 400;

const SECONDS_PER_DAY = 86_400;

function sticky(fraction: string): string {
  if (fraction.length <= FRACTION_DIGITS) return fraction;
  return fraction.slice(0, FRACTION_DIGITS) + (/[1-9]/.test(fraction.slice(FRACTION_DIGITS)) ? '1' : '0');
}

/** Whole seconds and the digits of their fraction (added: `-5` and `.25` is -4.75). */
function instantOf(wholeSeconds: bigint, fraction: string): Instant {
  const digits = sticky(fraction);
  return { units: wholeSeconds * 10n ** BigInt(digits.length) + (digits === '' ? 0n : BigInt(digits)), scale: digits.length };
}

/**
 * A decimal number of seconds (`perSecond` 1) or milliseconds (1000): a JSON number, as the
 * shortest decimal that reads back as it (the digits the connector's language wrote), or a
 * string of digits, read as written. Null for anything else.
 */
export function epochInstant(value: unknown, perSecond: 1 | 1000): Instant | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    text = String(value);
  } else if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) {
    text = value.trim();
  } else {
    return null;
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(text);
  if (m === null) return null;
  const negative = m[1] === '-';
  let whole = m[2] as string;
  let fraction = m[3] ?? '';
  const exponent = m[4] === undefined ? 0 : Number(m[4]);
  if (Math.abs(exponent) > EXPONENT_LIMIT) return null;
  // Move the point by the exponent, in the digits themselves.
  if (exponent > 0) {
    fraction = fraction.padEnd(exponent, '0');
    whole += fraction.slice(0, exponent);
    fraction = fraction.slice(exponent);
  } else if (exponent < 0) {
    whole = whole.padStart(1 - exponent, '0');
    fraction = whole.slice(whole.length + exponent) + fraction;
    whole = whole.slice(0, whole.length + exponent);
  }
  whole = whole.replace(/^0+(?=\d)/, '');
  if (whole.length > INTEGER_DIGITS) return null;
  const digits = sticky(fraction);
  const magnitude = BigInt(whole) * 10n ** BigInt(digits.length) + (digits === '' ? 0n : BigInt(digits));
  return { units: negative ? -magnitude : magnitude, scale: digits.length + (perSecond === 1000 ? 3 : 0) };
}

/**
 * How a date-time is read: as the API reads a parameter (`T` between date and time, `Z` for
 * UTC), or as a connector may write one: RFC 3339 also allows a space or a lowercase `t`
 * between them, and a lowercase `z` (Python's `str()` of a datetime writes
 * `2024-01-01 00:00:42+00:00`), the same instant.
 */
export type IsoReading = 'parameter' | 'written';

const ISO_DATE_TIME = {
  parameter: /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):?(\d{2}))$/,
  written: /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|([+-])(\d{2}):?(\d{2}))$/,
};
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * An ISO 8601 date-time with a zone (`Z` or an offset), seconds and their fraction optional,
 * as the instant it names; null for anything else, a day or a time that does not exist
 * (`2024-02-30`, `24:00`, a leap second) included, which a Date would roll over into the next.
 */
export function isoInstant(value: unknown, reading: IsoReading): Instant | null {
  if (typeof value !== 'string') return null;
  const m = ISO_DATE_TIME[reading].exec(value);
  if (m === null) return null;
  const day = daysOf(m[1] as string, m[2] as string, m[3] as string);
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (day === null || hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (m[9] !== undefined) {
    const [hours, minutes] = [Number(m[10]), Number(m[11])];
    if (hours > 23 || minutes > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
  }
  return instantOf(BigInt(day * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset), m[7] ?? '');
}

/** A day, `YYYY-MM-DD`, as its first and its next day's first instant (UTC); null for anything else. */
export function dayInstants(value: unknown): { readonly start: Instant; readonly end: Instant } | null {
  if (typeof value !== 'string') return null;
  const m = DATE.exec(value);
  const day = m === null ? null : daysOf(m[1] as string, m[2] as string, m[3] as string);
  if (day === null) return null;
  return { start: instantOf(BigInt(day * SECONDS_PER_DAY), ''), end: instantOf(BigInt((day + 1) * SECONDS_PER_DAY), '') };
}

/** The day an instant starts (midnight UTC, to its last digit), as dayInstants gives it; null for any other instant. */
export function dayStartingAt(t: Instant): { readonly start: Instant; readonly end: Instant } | null {
  const day = BigInt(SECONDS_PER_DAY) * 10n ** BigInt(t.scale);
  return t.units % day === 0n ? { start: t, end: { units: t.units + day, scale: t.scale } } : null;
}

/** Days since 1970-01-01 of a proleptic Gregorian date, or null when the month has no such day. */
function daysOf(y: string, m: string, d: string): number | null {
  const [year, month, day] = [Number(y), Number(m), Number(d)];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const length = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > length) return null;
  // Days from civil (H. Hinnant): the year starts in March, so a leap day ends it.
  const shifted = month <= 2 ? year - 1 : year;
  const era = Math.floor(shifted / 400);
  const yearOfEra = shifted - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
