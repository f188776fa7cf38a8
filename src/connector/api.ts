import { readFileSync, statSync } from 'node:fs';
import type { Contract, ResumeStyle } from '../../model/api.js';
import { PAGE_QUIRKS, type DeliveryOrder, type PageQuirk } from '../../model/history.js';
import { NEWEST_FIRST_QUIRKS } from '../../scenarios/plan.js';
import type { SourceProfile } from '../../scenarios/profiles.js';
import { UsageError } from '../run/options.js';
import { meaningProblem, type Shaped } from './api-meaning.js';
import { CURSOR_FORMATS, type CursorFormat, type CursorSpec } from './cursor.js';

/**
 * The HTTP API a connector reads, described as data (`--api FILE`, schema/api.schema.json):
 * where the records are, how a request says where to resume, what a response says about the
 * next page, which statuses mean what, and where the connector keeps its bookmark. tidemark
 * serves the simulated source through it, so the connector runs as it is, against an API
 * that looks like the real one.
 */
export interface ApiDescription {
  /** The stream's name, in the catalog and in the connector's messages. */
  readonly stream: string;
  readonly request: {
    /** The path the records are served at, such as `/v1/events`. */
    readonly path: string;
    /** Query parameter names; absent, the API has no such parameter. */
    readonly params: {
      /** The cursor value to read from (`updated_since`). */
      readonly since?: string;
      /** The opaque next-page token (`cursor`, `page_token`). */
      readonly token?: string;
      /** How many records to skip. */
      readonly offset?: string;
      /** The page number, from 1. */
      readonly page?: string;
      /** How many records a page may hold. */
      readonly limit?: string;
    };
    /**
     * The format the API reads `since` in, when not the records' cursor format (absent: that
     * one; see sinceSpec): an API whose records carry ISO 8601 timestamps may take
     * `start_time` in epoch seconds.
     */
    readonly sinceFormat?: CursorFormat;
  };
  readonly cursor: {
    readonly format: CursorFormat;
    /** Whether `since` serves records at the value itself (`>=`) or only after it (`>`). */
    readonly inclusive: boolean;
    /**
     * Seconds one unit of the source's key stands for. Default 1, and 21,600 for a date (four
     * keys a day, so that a day's keys tie). Bounded so that every key has a value of its own
     * that reads back as that key (cursor.ts, secondsPerKeyProblem).
     */
    readonly secondsPerKey: number;
  };
  readonly response: {
    /** The path of the records' array in the response body, such as `data`. */
    readonly records: string;
    /** The path of the next-page token; null at the end. */
    readonly next?: string;
    /** Whether the next page's URL is in a `Link: <...>; rel="next"` header. */
    readonly link: boolean;
    /** The path of a boolean that says whether more records follow. */
    readonly hasMore?: string;
    /** The dotted path of a boolean that is true on the last page (`end_of_stream`): hasMore the other way round. */
    readonly end?: string;
  };
  readonly record: {
    /** The field holding the record's unique, immutable id: a field at the record's top level, as are the two below. */
    readonly id: string;
    /** The field holding its cursor value (`updated_at`). */
    readonly cursor: string;
    /** The field holding its content, which the destination must receive as it was served. Default `payload`. */
    readonly payload: string;
  };
  /** The HTTP status of each error the simulated source can answer with. */
  readonly errors: { readonly unavailable: number; readonly rateLimited: number; readonly expiredToken: number; readonly badRequest: number };
  readonly state: {
    /** The path of the bookmark in the connector's state (a Singer STATE's value; for Airbyte, see docs/connectors.md). */
    readonly bookmark: string;
    /** Whether the bookmark claims every record at its value is done (`<=`), or only those before it (`<`). */
    readonly inclusive: boolean;
    /**
     * How the connector packs its state: `none` (plain JSON, the default), or `base64/gzip`, a
     * `{ "format": "base64/gzip", "data": BASE64 }` object holding gzipped JSON (as
     * faros-airbyte-cdk writes it), read through wherever it stands on the bookmark's path.
     */
    readonly compression: StateCompression;
    /**
     * How the connector writes its bookmark: a cursor format, by default the cursor's own. A
     * tap that stores epoch seconds for an ISO 8601 API says `epoch-seconds`; the bookmark is
     * read in it as the instant it names, keys spaced as the cursor's.
     */
    readonly format: CursorFormat;
    /**
     * Seconds the connector reads again behind its bookmark on every sync (a lookback window
     * for late records); default 0. Its bookmark then claims only what lies that far behind
     * it: the watermark judged is the bookmark's instant less the lookback.
     */
    readonly lookback: number;
  };
  readonly config: {
    /** The config key tidemark writes its server's base URL under. Default `base_url`. */
    readonly baseUrl: string;
    /** Every other config value the connector needs (a page size, a backoff of 0 for tests). */
    readonly values: Readonly<Record<string, unknown>>;
  };
  readonly source: {
    /** The stability contracts the real API has; default snapshot and insertion-stable. */
    readonly contracts: readonly Contract['kind'][];
    /** Whether records are updated (each update a new version with a new cursor value). Default true. */
    readonly mutable: boolean;
    /** The page quirks the real API shows (what it guarantees is what it leaves out); default all six. */
    readonly quirks: readonly PageQuirk[];
    /**
     * With a replay window: how far behind the newest record, in seconds, a late record can
     * land in the real API; worlds put none further back. Undefined: as far as worlds go.
     */
    readonly window?: number;
    /**
     * The order the API lists records in: `ascending` (oldest first, the default), or
     * `newest-first` (descending, as many list endpoints do), paged down by its token only: a
     * sync reads from the top down to its bookmark.
     */
    readonly order: DeliveryOrder;
  };
}

/** Every field of the description, with its kind: what the validator and schema/api.schema.json both list. */
export const API_FIELDS = {
  stream: 'string',
  request: { path: 'string', params: { since: 'string', token: 'string', offset: 'string', page: 'string', limit: 'string' }, sinceFormat: 'enum' },
  cursor: { format: 'enum', inclusive: 'boolean', secondsPerKey: 'number' },
  response: { records: 'string', next: 'string', link: 'boolean', hasMore: 'string', end: 'string' },
  record: { id: 'string', cursor: 'string', payload: 'string' },
  errors: { unavailable: 'integer', rateLimited: 'integer', expiredToken: 'integer', badRequest: 'integer' },
  state: { bookmark: 'string', inclusive: 'boolean', compression: 'enum', format: 'enum', lookback: 'number' },
  config: { baseUrl: 'string', values: 'object' },
  source: { contracts: 'array', mutable: 'boolean', quirks: 'array', window: 'number', order: 'enum' },
  $schema: 'string',
} as const;

const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  '': ['stream', 'request', 'cursor', 'response', 'record', 'state'],
  request: ['path', 'params'],
  cursor: ['format', 'inclusive'],
  response: ['records'],
  record: ['id', 'cursor'],
  state: ['bookmark', 'inclusive'],
};

const CONTRACTS = ['snapshot', 'insertion-stable', 'replay-window', 'none'];

const ORDERS: readonly DeliveryOrder[] = ['ascending', 'newest-first'];

/** How a connector's state may be packed (see ApiDescription.state.compression). */
export const STATE_COMPRESSIONS = ['none', 'base64/gzip'] as const;
export type StateCompression = (typeof STATE_COMPRESSIONS)[number];

/** Reads and checks an API description file; any problem is a usage error naming the file and the field. */
export function readApi(file: string): ApiDescription {
  let text: string;
  try {
    // A FIFO or a device could be read for ever: an API description is a regular file.
    if (!statSync(file).isFile()) throw new UsageError(`--api ${file}: not a regular file; give the JSON file that describes the API`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--api ${file}: cannot read it: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--api ${file}: not JSON: ${(error as Error).message}`);
  }
  const problem = apiProblem(value);
  if (problem !== null) throw new UsageError(`--api ${file}: ${problem} (schema/api.schema.json)`);
  return withDefaults(value as Record<string, never>);
}

/** What is wrong with a description, naming the first wrong field, or null: its shape first, then what it means (api-meaning.ts). */
export function apiProblem(value: unknown): string | null {
  const shape = walk(value, API_FIELDS, '');
  if (shape !== null) return shape;
  const d = value as Shaped & { request: { sinceFormat?: unknown }; state: { compression?: unknown; format?: unknown }; source?: { contracts?: unknown[]; quirks?: unknown[]; order?: unknown } };
  const sinceFormat = d.request.sinceFormat;
  if (sinceFormat !== undefined) {
    if (!CURSOR_FORMATS.includes(sinceFormat as CursorFormat)) return `request.sinceFormat must be one of ${CURSOR_FORMATS.map((c) => `"${c}"`).join(', ')}, got ${JSON.stringify(sinceFormat)}`;
    if (d.request.params.since === undefined) return 'request.sinceFormat says how request.params.since is written, and the API has no since parameter (request.params.since)';
  }
  if (d.state.compression !== undefined && !STATE_COMPRESSIONS.includes(d.state.compression as StateCompression)) {
    return `state.compression must be one of ${STATE_COMPRESSIONS.map((c) => `"${c}"`).join(', ')}, got ${JSON.stringify(d.state.compression)}`;
  }
  if (d.state.format !== undefined && !CURSOR_FORMATS.includes(d.state.format as CursorFormat)) {
    return `state.format must be one of ${CURSOR_FORMATS.map((c) => `"${c}"`).join(', ')}, got ${JSON.stringify(d.state.format)}`;
  }
  const contracts = d.source?.contracts;
  if (contracts !== undefined && !(contracts.length > 0 && contracts.every((k) => CONTRACTS.includes(k as string)))) return `source.contracts must list some of ${CONTRACTS.map((c) => `"${c}"`).join(', ')}, got ${JSON.stringify(contracts)}`;
  const order = d.source?.order;
  if (order !== undefined && !ORDERS.includes(order as DeliveryOrder)) return `source.order must be one of ${ORDERS.map((o) => `"${o}"`).join(', ')}, got ${JSON.stringify(order)}`;
  const quirks = d.source?.quirks;
  if (quirks !== undefined && !(quirks.every((q) => (PAGE_QUIRKS as readonly unknown[]).includes(q)) && new Set(quirks).size === quirks.length)) return `source.quirks must list each at most once of ${PAGE_QUIRKS.map((q) => `"${q}"`).join(', ')}, got ${JSON.stringify(quirks)}`;
  if (order === 'newest-first') {
    const other = quirks?.find((q) => !NEWEST_FIRST_QUIRKS.includes(q as PageQuirk));
    if (other !== undefined) return `source.quirks cannot hold "${String(other)}" with source.order "newest-first": read from the top down, an API shows only ${NEWEST_FIRST_QUIRKS.map((q) => `"${q}"`).join(', ')}`;
    const ascending = (['since', 'offset', 'page'] as const).find((param) => d.request.params[param] !== undefined);
    if (ascending !== undefined) {
      return `request.params.${ascending} cannot go with source.order "newest-first": a newest-first API is read from the top down and paged by its token alone, so describe only request.params.token (a connector may still send other parameters; they are not read)`;
    }
  }
  return meaningProblem(d);
}

type Fields = { readonly [name: string]: string | Fields };

function walk(value: unknown, fields: Fields, at: string): string | null {
  const name = at === '' ? 'the description' : at;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${name} must be an object, got ${JSON.stringify(value)}`;
  const v = value as Record<string, unknown>;
  // Own fields only: `in` would find `constructor` or `__proto__` on every object.
  const unknown = Object.keys(v).find((k) => !Object.hasOwn(fields, k));
  if (unknown !== undefined) return `${at === '' ? '' : `${at}.`}${unknown} is not a field of ${name} (its fields: ${Object.keys(fields).filter((k) => k !== '$schema').join(', ')})`;
  for (const required of REQUIRED[at] ?? []) if (v[required] === undefined) return `${at === '' ? '' : `${at}.`}${required} is missing`;
  for (const [key, kind] of Object.entries(fields)) {
    const field = v[key];
    if (field === undefined) continue;
    const path = at === '' ? key : `${at}.${key}`;
    if (typeof kind === 'object') {
      const problem = walk(field, kind, path);
      if (problem !== null) return problem;
      continue;
    }
    const ok =
      kind === 'string' ? typeof field === 'string' && field.length > 0
      : kind === 'enum' ? typeof field === 'string'
      : kind === 'boolean' ? typeof field === 'boolean'
      : kind === 'number' ? typeof field === 'number'
      : kind === 'integer' ? Number.isInteger(field)
      : kind === 'array' ? Array.isArray(field)
      : typeof field === 'object' && field !== null && !Array.isArray(field);
    if (!ok) return `${path} must be ${kind === 'string' ? 'a non-empty string' : kind === 'enum' ? 'a string' : kind === 'integer' ? 'an integer' : kind === 'array' ? 'an array' : `a ${kind}`}, got ${JSON.stringify(field)}`;
  }
  return null;
}

function withDefaults(d: Record<string, never>): ApiDescription {
  const raw = d as unknown as {
    stream: string;
    request: ApiDescription['request'];
    cursor: { format: CursorFormat; inclusive: boolean; secondsPerKey?: number };
    response: { records: string; next?: string; link?: boolean; hasMore?: string; end?: string };
    record: { id: string; cursor: string; payload?: string };
    errors?: Partial<ApiDescription['errors']>;
    state: { bookmark: string; inclusive: boolean; compression?: StateCompression; format?: CursorFormat; lookback?: number };
    config?: { baseUrl?: string; values?: Record<string, unknown> };
    source?: { contracts?: Contract['kind'][]; mutable?: boolean; quirks?: PageQuirk[]; window?: number; order?: DeliveryOrder };
  };
  return {
    stream: raw.stream,
    request: raw.request,
    cursor: { format: raw.cursor.format, inclusive: raw.cursor.inclusive, secondsPerKey: raw.cursor.secondsPerKey ?? (raw.cursor.format === 'date' ? 21_600 : 1) },
    response: { records: raw.response.records, link: raw.response.link ?? false, ...(raw.response.next === undefined ? {} : { next: raw.response.next }), ...(raw.response.hasMore === undefined ? {} : { hasMore: raw.response.hasMore }), ...(raw.response.end === undefined ? {} : { end: raw.response.end }) },
    record: { id: raw.record.id, cursor: raw.record.cursor, payload: raw.record.payload ?? 'payload' },
    errors: { unavailable: 503, rateLimited: 429, expiredToken: 410, badRequest: 400, ...raw.errors },
    state: { bookmark: raw.state.bookmark, inclusive: raw.state.inclusive, compression: raw.state.compression ?? 'none', format: raw.state.format ?? raw.cursor.format, lookback: raw.state.lookback ?? 0 },
    config: { baseUrl: raw.config?.baseUrl ?? 'base_url', values: raw.config?.values ?? {} },
    source: {
      contracts: raw.source?.contracts ?? ['snapshot', 'insertion-stable'],
      mutable: raw.source?.mutable ?? true,
      quirks: raw.source?.quirks ?? [...(raw.source?.order === 'newest-first' ? NEWEST_FIRST_QUIRKS : PAGE_QUIRKS)],
      ...(raw.source?.window === undefined ? {} : { window: raw.source.window }),
      order: raw.source?.order ?? 'ascending',
    },
  };
}

/** How the API reads `since`: in request.sinceFormat, else the cursor's format; keys spaced as the cursor's. */
export function sinceSpec(api: ApiDescription): CursorSpec {
  return { format: api.request.sinceFormat ?? api.cursor.format, secondsPerKey: api.cursor.secondsPerKey };
}

/**
 * The resume forms the API offers, as tidemark's worlds name them: a `since` parameter is a
 * key resume (`key-gte` inclusive, `key-gt` exclusive; a date always starts at a day's
 * first key, so `key-gte`), an offset or page number is `offset`. Tokens every source has.
 */
export function apiResumes(api: ApiDescription): ResumeStyle[] {
  const out: ResumeStyle[] = [];
  if (api.source.order === 'newest-first') return out;
  if (api.request.params.since !== undefined) out.push(api.cursor.inclusive || sinceSpec(api).format === 'date' ? 'key-gte' : 'key-gt');
  if (api.request.params.offset !== undefined || api.request.params.page !== undefined) out.push('offset');
  return out;
}

/**
 * The source profile of worlds for this API: one cursor field, its resume forms, its
 * contracts, mutability and page quirks. A destination never refuses a record, so no poison events.
 */
export function apiProfile(api: ApiDescription): SourceProfile {
  // Keys are cursor values of whole units (cursor.secondsPerKey each, from the API's epoch).
  const window = api.source.window === undefined ? {} : { window: windowKeys(api) };
  const order = api.source.order === 'newest-first' ? { order: api.source.order } : {};
  return { resumes: apiResumes(api), keyArity: 1, keyValues: 'whole', mutable: api.source.mutable, refusals: 'never', contracts: [...api.source.contracts], quirks: [...api.source.quirks], ...window, ...order };
}

/** The API's replay window in keys: the whole keys within `source.window` seconds (api-meaning.ts holds it to one at least). */
export function windowKeys(api: ApiDescription): number {
  return Math.floor(Math.round((api.source.window ?? 0) * 1000) / Math.round(api.cursor.secondsPerKey * 1000));
}

/** Sets the value at a dotted path, making the objects on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = target;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (typeof next !== 'object' || next === null) at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts.at(-1) as string] = value;
}
