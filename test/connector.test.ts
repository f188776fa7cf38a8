/**
 * The pieces of the connector runner that are pure: the API description and its schema, the
 * cursor values, a request read as a fetch and a page rendered as a response, and the two
 * protocols' messages and states as a platform reads them.
 */
import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAGE_QUIRKS } from '../model/history.js';
import { planArb } from '../scenarios/arbitraries.js';
import { worldOptions } from '../scenarios/profiles.js';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { airbyteStateProblem } from '../src/connector/airbyte-state.js';
import { API_FIELDS, apiProblem, apiProfile, apiResumes, readApi, type ApiDescription } from '../src/connector/api.js';
import { UsageError } from '../src/run/options.js';
import { bookmarkClaim } from '../src/connector/bookmark.js';
import { bookmarkWatermark, EPOCH_SECONDS, KEY_LIMIT, MAX_SECONDS_PER_KEY, readCursor, readParameter, renderCursor, secondsPerKeyProblem, type CursorRange, type KeyPoint } from '../src/connector/cursor.js';
import { askedBy, errorResponse, pageResponse, recordOf } from '../src/connector/http.js';
import { bookmarkIn, persist, readMessage, stateProblem, syncArgs } from '../src/connector/messages.js';
import { connectorFlag, connectorOf } from '../src/connector/target.js';
import { LINE_LIMIT, LineSplitter, lineLimitText } from '../src/adapter/process/lines.js';

const singerApi = readApi('examples/singer/api.json');
const base = JSON.parse(readFileSync('examples/singer/api.json', 'utf8')) as Record<string, unknown>;

describe('the API description', () => {
  it.each([
    [{ cursor: { format: 'isoo', inclusive: true } }, 'cursor.format must be one of "iso8601", "epoch-seconds", "epoch-millis", "date", got "isoo"'],
    [{ cursor: { format: 'iso8601' } }, 'cursor.inclusive is missing'],
    [{ cursor: { format: 'iso8601', inclusive: 'yes' } }, 'cursor.inclusive must be a boolean, got "yes"'],
    [{ colour: 'blue' }, 'colour is not a field of the description'],
    // Names every object inherits are no fields either (they were accepted, found by `in`).
    [{ constructor: 'x' }, 'constructor is not a field of the description'],
    [{ cursor: { format: 'iso8601', inclusive: true, toString: 1 } }, 'cursor.toString is not a field of cursor'],
    [{ record: { id: 'id', cursor: 'updated_at', pk: 'id' } }, 'record.pk is not a field of record (its fields: id, cursor, payload)'],
    [{ request: { path: 'v1/events', params: { token: 'cursor' } } }, 'request.path must start with /'],
    [{ request: { path: '/v1/events', params: { limit: 'limit' } } }, 'request.params must name at least one of since, token, offset, page'],
    [{ request: { path: '/v1/events', params: { offset: 'o', page: 'p' } } }, 'request.params has both offset and page'],
    [{ response: { records: 'data' } }, 'request.params.token needs response.next'],
    [{ errors: { unavailable: 200 } }, 'errors.unavailable must be an HTTP error status (400 to 599), got 200'],
    [{ source: { contracts: ['eventually'] } }, 'source.contracts must list some of'],
    [{ state: { bookmark: '' , inclusive: false } }, 'state.bookmark must be a non-empty string, got ""'],
    [{ state: { bookmark: 'b', inclusive: false, compression: 'gzip' } }, 'state.compression must be one of "none", "base64/gzip", got "gzip"'],
    [{ state: { bookmark: 'b', inclusive: false, format: 'unix' } }, 'state.format must be one of "iso8601", "epoch-seconds", "epoch-millis", "date", got "unix"'],
    [{ state: { bookmark: 'b', inclusive: false, lookback: '5' } }, 'state.lookback must be a number, got "5"'],
    [{ state: { bookmark: 'b', inclusive: false, lookback: -1 } }, 'state.lookback must be a number of seconds from 0 to 3,155,760,000 (a century), a whole number of milliseconds: how far behind its bookmark the connector reads again on every sync, got -1'],
    [{ state: { bookmark: 'b', inclusive: false, lookback: 0.0005 } }, 'state.lookback must be a number of seconds from 0 to 3,155,760,000 (a century), a whole number of milliseconds: how far behind its bookmark the connector reads again on every sync, got 0.0005'],
    [{ source: { window: 5 } }, 'source.window is how far behind the newest record a late one lands in a replay window, and source.contracts has no "replay-window" (it has ["snapshot","insertion-stable"])'],
    [{ source: { contracts: ['replay-window'], window: 0 } }, 'source.window must be a number of seconds more than 0 and at most 3,155,760,000 (a century), a whole number of milliseconds, got 0'],
    [{ source: { contracts: ['replay-window'], window: 0.5 } }, 'source.window must span one key of the simulated source at least (cursor.secondsPerKey: 1 seconds), since a late record lands at a key, got 0.5'],
    [{ request: { path: '/v1/events', params: { since: 'updated_since', token: 'cursor' }, sinceFormat: 'unix' } }, 'request.sinceFormat must be one of "iso8601", "epoch-seconds", "epoch-millis", "date", got "unix"'],
    [{ request: { path: '/v1/events', params: { token: 'cursor' }, sinceFormat: 'epoch-seconds' } }, 'request.sinceFormat says how request.params.since is written, and the API has no since parameter (request.params.since)'],
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: 60 }, source: { contracts: ['replay-window'], window: 119 } }, 'source.window must be a whole number of keys of the simulated source (cursor.secondsPerKey: 60 seconds each), since worlds put late records at keys, got 119: say 60 or 120'],
    [{ source: { order: 'descending' } }, 'source.order must be one of "ascending", "newest-first", got "descending"'],
    [{ source: { order: 'newest-first' } }, 'request.params.since cannot go with source.order "newest-first": a newest-first API is read from the top down and paged by its token alone'],
    [{ request: { path: '/v1/events', params: { token: 'cursor' } }, source: { order: 'newest-first', quirks: ['short', 'reorder'] } }, 'source.quirks cannot hold "reorder" with source.order "newest-first": read from the top down, an API shows only "empty", "short", "stale"'],
  ])('%j is refused, naming the field: %s', (change, problem) => {
    expect(apiProblem({ ...base, ...change })).toContain(problem);
  });

  // Each of these was accepted, and then blew up later (a connector's failure, an unknown)
  // or silently meant something else than it says.
  const request = base.request as { path: string; params: Record<string, string> };
  const response = base.response as Record<string, unknown>;
  const record = base.record as Record<string, unknown>;
  it.each([
    // Fields that must differ: the record's fields, the response's paths, statuses told apart, the base URL's key.
    [{ record: { id: 'id', cursor: 'id' } }, 'record.cursor is "id", as record.id is: a record holds its id, its cursor value and its content in fields of their own'],
    [{ record: { id: 'id', cursor: 'updated_at', payload: 'updated_at' } }, 'record.payload is "updated_at", as record.cursor is'],
    [{ record: { id: 'payload', cursor: 'updated_at' } }, 'record.payload is "payload", as record.id is: a record holds its id, its cursor value and its content in fields of their own (record.payload defaults to "payload")'],
    [{ record: { id: 'kind', cursor: 'updated_at' } }, `record.id is "kind", the field every record's "kind" attribute is served in`],
    [{ response: { ...response, next: 'data' } }, 'response.next is "data", as response.records is'],
    [{ response: { ...response, next: 'data.next' } }, 'response.next "data.next" lies inside response.records "data"'],
    [{ response: { records: 'page.items', next: 'page', hasMore: 'more' } }, 'response.records "page.items" lies inside response.next "page"'],
    [{ response: { records: 'data', next: 'next_cursor', hasMore: 'meta.more', end: 'meta' } }, 'response.hasMore "meta.more" lies inside response.end "meta"'],
    [{ errors: { expiredToken: 503 } }, 'errors.expiredToken and errors.unavailable are both 503: a connector could not tell an expired token, never accepted again, from a call to retry'],
    [{ errors: { rateLimited: 410 } }, 'errors.expiredToken and errors.rateLimited are both 410'],
    [{ config: { values: { base_url: 'http://example.com' } } }, 'config.values has "base_url", the key config.baseUrl names'],
    // Seconds per key: within what every format can show for every key a world holds.
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: 0 } }, 'cursor.secondsPerKey must be more than 0 and at most 1,000,000 (every key a world can hold, up to 200,000, must be a timestamp before the year 10000), got 0'],
    [{ cursor: { format: 'epoch-millis', inclusive: true, secondsPerKey: 2_000_000 } }, 'must be more than 0 and at most 1,000,000'],
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: -1 } }, 'must be more than 0'],
    [{ cursor: { format: 'epoch-seconds', inclusive: true, secondsPerKey: 0.5 } }, 'cursor.secondsPerKey must be a whole number of seconds for epoch-seconds'],
    [{ cursor: { format: 'epoch-millis', inclusive: true, secondsPerKey: 0.0005 } }, 'cursor.secondsPerKey must be a whole number of milliseconds (a multiple of 0.001) for epoch-millis'],
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: 1.0001 } }, 'a whole number of milliseconds (a multiple of 0.001) for iso8601'],
    // Less than a millisecond a key: every key printed as the same value (accepted, it made every record a tie).
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: 1e-10 } }, 'cursor.secondsPerKey must be at least 0.001 (one millisecond) for iso8601, the finest step its values show: below it distinct keys would print as the same value, got 1e-10'],
    [{ cursor: { format: 'epoch-millis', inclusive: true, secondsPerKey: 4e-10 } }, 'cursor.secondsPerKey must be at least 0.001 (one millisecond) for epoch-millis'],
    [{ cursor: { format: 'date', inclusive: true, secondsPerKey: 7 } }, 'cursor.secondsPerKey must divide a day (86,400 seconds) for a date'],
    [{ cursor: { format: 'date', inclusive: true, secondsPerKey: 172_800 } }, 'must divide a day'],
    // request.path: a path as a client sends it, alone.
    [{ request: { ...request, path: '/v1/events?page=1' } }, 'request.path must be a path alone, got "/v1/events?page=1": it holds a query string'],
    [{ request: { ...request, path: '/v1/events#top' } }, 'it holds a fragment'],
    [{ request: { ...request, path: '/v1/my events' } }, 'request.path "/v1/my events" is not a path as a client sends it: a URL reads it as "/v1/my%20events"; write that'],
    [{ request: { ...request, path: '/v1/../events' } }, 'a URL reads it as "/events"'],
    [{ request: { ...request, path: '//api/events' } }, 'request.path must not start with //, got "//api/events": a URL reads what follows as a host'],
    // Dotted paths: names joined by dots.
    [{ response: { ...response, records: '.data' } }, 'response.records ".data" is not a dotted path of names: it starts with a dot'],
    [{ response: { ...response, records: 'data.' } }, 'it ends with a dot'],
    [{ response: { ...response, next: 'meta..next' } }, 'response.next "meta..next" is not a dotted path of names: it has two dots in a row'],
    [{ response: { ...response, hasMore: 'meta.has more' } }, 'response.hasMore "meta.has more" is not a dotted path of names: "has more" holds whitespace'],
    [{ response: { ...response, records: 'results.0' } }, '"0" would index an array, and tidemark builds the response\'s objects from the path'],
    [{ response: { ...response, records: '__proto__.data' } }, '"__proto__" is a name every object inherits, not a field'],
    [{ state: { bookmark: 'bookmarks..updated_at', inclusive: false } }, 'state.bookmark "bookmarks..updated_at" is not a dotted path of names: it has two dots in a row'],
    [{ state: { bookmark: 'bookmarks.events.', inclusive: false } }, 'it ends with a dot'],
    [{ state: { bookmark: 'constructor', inclusive: false } }, 'a name every object inherits'],
    [{ record: { ...record, cursor: 'attributes.updated_at' } }, "record.cursor \"attributes.updated_at\" holds a dot: a record's fields are named at its top level"],
    [{ record: { ...record, id: ' id' } }, 'record.id " id" is not a field name: " id" holds whitespace'],
    [{ record: { ...record, payload: '__proto__' } }, 'record.payload "__proto__" is not a field name'],
    [{ config: { baseUrl: 'api.url' } }, 'config.baseUrl "api.url" holds a dot: it names a key at the top of the config file'],
    [{ source: { quirks: ['reorder', 'shuffle'] } }, 'source.quirks must list each at most once of "overlap", "repeat", "empty", "stale", "reorder", "short", got ["reorder","shuffle"]'],
    [{ source: { quirks: ['short', 'short'] } }, 'source.quirks must list each at most once of'],
    // Fields that would mean nothing.
    [{ request: { path: '/v1/events', params: { since: 'updated_since' } } }, 'response.next needs request.params.token: a token in the body is of no use to a connector that has no parameter to send it back in'],
    [{ request: { path: '/v1/events', params: { since: 'updated_since' } }, response: { records: 'data', link: true } }, "response.link needs request.params.token: the next page's URL carries the token in that parameter"],
  ])('%j is refused, naming the field and why: %s', (change, problem) => {
    expect(apiProblem({ ...base, ...change })).toContain(problem);
  });

  it.each([
    [{ cursor: { format: 'iso8601', inclusive: true, secondsPerKey: 0.001 } }],
    [{ cursor: { format: 'epoch-millis', inclusive: true, secondsPerKey: 1_000_000 } }],
    [{ cursor: { format: 'epoch-seconds', inclusive: true, secondsPerKey: 3600 } }],
    [{ cursor: { format: 'date', inclusive: false, secondsPerKey: 86_400 } }],
    [{ state: { bookmark: 'streams.0.updated_at', inclusive: false } }],
    [{ state: { bookmark: 'b', inclusive: false, format: 'epoch-seconds' } }],
    [{ request: { ...request, path: '/v1/caf%C3%A9/events/' } }],
    [{ request: { path: '/v1/events', params: { offset: 'offset' } }, response: { records: 'data', hasMore: 'has_more' } }],
    [{ errors: { expiredToken: 400 } }],
    // A name objects inherit that is not a way into the prototype: read as the record's own field only.
    [{ record: { ...record, payload: 'toString' } }],
  ])('%j is accepted', (change) => {
    expect(apiProblem({ ...base, ...change })).toBeNull();
  });

  it('a directory or a device as the file is refused before it is read, as a usage error: /dev/zero would be read for ever', () => {
    for (const path of ['examples/singer', '/dev/zero']) expect(() => readApi(path)).toThrow(new UsageError(`--api ${path}: not a regular file; give the JSON file that describes the API`));
  });

  it('the shipped example is valid, and its defaults are filled in', () => {
    expect(apiProblem(base)).toBeNull();
    expect(singerApi.cursor.secondsPerKey).toBe(1);
    expect(singerApi.errors).toEqual({ unavailable: 503, rateLimited: 429, expiredToken: 410, badRequest: 400 });
    expect(singerApi.source).toEqual({ contracts: ['snapshot', 'insertion-stable'], mutable: true, quirks: ['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'], order: 'ascending' });
    expect(apiProfile(singerApi)).toEqual({ resumes: ['key-gte'], keyArity: 1, keyValues: 'whole', mutable: true, refusals: 'never', contracts: ['snapshot', 'insertion-stable'], quirks: ['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'] });
    // An API sorted by its cursor and paged by offset leaves out what it never does; worlds then serve only the rest.
    const file = join(mkdtempSync(join(tmpdir(), 'tidemark-api-')), 'api.json');
    writeFileSync(file, JSON.stringify({ ...base, source: { quirks: ['empty', 'short'] } }));
    const sorted = readApi(file);
    expect(apiProfile(sorted).quirks).toEqual(['empty', 'short']);
    const plans = fc.sample(planArb(worldOptions({ profile: apiProfile(sorted) })), { numRuns: 300, seed: 1 });
    const kinds = new Set(plans.flatMap((p) => p.faults.map((f) => f.kind)));
    expect([...kinds].filter((k) => (PAGE_QUIRKS as readonly string[]).includes(k)).sort()).toEqual(['empty', 'short']);
    expect(apiProfile({ ...singerApi, cursor: { ...singerApi.cursor, inclusive: false } }).resumes).toEqual(['key-gt']);
  });

  it('schema/api.schema.json lists exactly the fields the check knows, and is shipped', () => {
    type Node = { properties?: Record<string, Node> };
    const schema = JSON.parse(readFileSync('schema/api.schema.json', 'utf8')) as Node;
    const fields = (node: Node): unknown => (node.properties === undefined ? 'leaf' : Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, fields(v)])));
    const known = (node: unknown): unknown => (typeof node === 'object' && node !== null ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, known(v)])) : 'leaf');
    const { values: _, ...config } = (fields(schema) as { config: Record<string, unknown> }).config;
    expect({ ...(fields(schema) as object), config: { ...config, values: 'leaf' } }).toEqual(known(API_FIELDS));
    expect((JSON.parse(readFileSync('package.json', 'utf8')) as { files: string[] }).files).toContain('schema');
  });

  /**
   * The schema's string rules against the check's, on the same candidates: an editor that
   * validates with the schema flags what the check refuses. (What the schema cannot say, such
   * as fields that must differ, its descriptions say.)
   */
  describe('schema/api.schema.json refuses the strings the check refuses', () => {
    type StringRule = { $ref?: string; pattern?: string; not?: { pattern?: string; enum?: string[] }; maximum?: number };
    const schema = JSON.parse(readFileSync('schema/api.schema.json', 'utf8')) as { properties: Record<string, { properties: Record<string, StringRule> }>; $defs: Record<string, StringRule> };
    const rule = (object: string, field: string): StringRule => {
      const r = schema.properties[object]?.properties[field] as StringRule;
      return r.$ref === undefined ? r : { ...schema.$defs[r.$ref.replace('#/$defs/', '')], ...r };
    };
    const accepts = (r: StringRule, value: string): boolean =>
      (r.pattern === undefined || new RegExp(r.pattern, 'u').test(value)) && !(r.not?.pattern !== undefined && new RegExp(r.not.pattern, 'u').test(value)) && !(r.not?.enum ?? []).includes(value);
    const names = ['data', 'meta.next', 'a.b.c', '.data', 'data.', 'a..b', 'a b', 'a\tb', 'results.0', '0', 'v2', '__proto__.x', 'x.constructor', 'prototype', 'toString', 'kind', 'kind.x', 'x.kind'];
    const byApi = (change: Record<string, unknown>): boolean => apiProblem({ ...base, ...change }) === null;

    it.each(names)('a response path, the bookmark, a record field, the base URL key: %j', (name) => {
      expect(accepts(rule('response', 'next'), name), 'response.next').toBe(byApi({ response: { records: 'r_', next: name } }));
      expect(accepts(rule('state', 'bookmark'), name), 'state.bookmark').toBe(byApi({ state: { bookmark: name, inclusive: false } }));
      expect(accepts(rule('record', 'cursor'), name), 'record.cursor').toBe(byApi({ record: { id: 'i_', cursor: name, payload: 'p_' } }));
      expect(accepts(rule('config', 'baseUrl'), name), 'config.baseUrl').toBe(byApi({ config: { baseUrl: name } }));
    });

    it('cursor.secondsPerKey, in each format', () => {
      type Bounds = { exclusiveMinimum?: number; maximum?: number; multipleOf?: number };
      const cursor = schema.properties.cursor as unknown as { properties: { secondsPerKey: Bounds }; allOf: { if: { properties: { format: { const?: string; enum?: string[] } } }; then: { properties: { secondsPerKey: Bounds } } }[] };
      const within = (b: Bounds, n: number): boolean =>
        !(b.exclusiveMinimum !== undefined && n <= b.exclusiveMinimum) && !(b.maximum !== undefined && n > b.maximum) && !(b.multipleOf !== undefined && Math.abs(n / b.multipleOf - Math.round(n / b.multipleOf)) > 1e-6);
      for (const format of ['iso8601', 'epoch-seconds', 'epoch-millis', 'date']) {
        const rules = [cursor.properties.secondsPerKey, ...cursor.allOf.filter((a) => a.if.properties.format.const === format || a.if.properties.format.enum?.includes(format)).map((a) => a.then.properties.secondsPerKey)];
        for (const n of [-1, 0, 0.0005, 0.001, 0.3, 0.5, 1, 7, 60, 3600, 21_600, 43_200, 86_400, 172_800, 1_000_000, 1_000_000.5, 2_000_000]) {
          // A date's day must hold a whole number of keys: of the divisors of 86,400, these are a few.
          const schemaSays = rules.every((r) => within(r, n)) && (format !== 'date' || 86_400 % n === 0);
          expect(schemaSays, `${format} ${n}`).toBe(byApi({ cursor: { format, inclusive: true, secondsPerKey: n } }));
        }
      }
    });

    it('request.path, over every ASCII character and the dot segments', () => {
      const paths = [...Array.from({ length: 128 }, (_, c) => `/v1/a${String.fromCharCode(c)}b`), '/', '/v1/events/', '/caf\u00e9', '/caf%C3%A9', '/v1/./x', '/v1/../x', '/v1/%2e%2E/x', '/..', '/.x', 'v1/x', '//x'];
      for (const path of paths) expect(accepts(rule('request', 'path'), path), JSON.stringify(path)).toBe(byApi({ request: { path, params: { token: 'cursor' } } }));
    });
  });
});

describe('cursor values', () => {
  const iso = { format: 'iso8601', secondsPerKey: 1 } as const;
  const date = { format: 'date', secondsPerKey: 21_600 } as const;
  const key = (k: number): KeyPoint => ({ floor: k, exact: true, approx: k });
  const instant = (k: number): CursorRange => ({ kind: 'instant', at: key(k) });

  it('are anchored to a fixed epoch, in every format', () => {
    expect(renderCursor(iso, 42)).toBe('2024-01-01T00:00:42.000Z');
    expect(renderCursor({ format: 'epoch-seconds', secondsPerKey: 60 }, 2)).toBe(EPOCH_SECONDS + 120);
    expect(renderCursor({ format: 'epoch-millis', secondsPerKey: 1 }, 3)).toBe((EPOCH_SECONDS + 3) * 1000);
    // Four keys a day: keys 4 to 7 are all 2024-01-02, so they tie.
    expect([3, 4, 7, 8].map((k) => renderCursor(date, k))).toEqual(['2024-01-01', '2024-01-02', '2024-01-02', '2024-01-03']);
    expect(readCursor(iso, '2024-01-01T00:00:42.000Z')).toEqual(instant(42));
    expect(readCursor(date, '2024-01-02')).toEqual({ kind: 'day', from: key(4), to: key(8) });
    expect(readCursor(iso, 'Z_dyc4jR0')).toBeNull();
    expect(readCursor({ format: 'epoch-seconds', secondsPerKey: 1 }, `${EPOCH_SECONDS + 5}`)).toEqual(instant(5));
  });

  it('every key a world can hold reads back as itself, for every seconds per key the description accepts', () => {
    const keys = [0, 1, 41, 42, 999, 123_457, KEY_LIMIT];
    const specs = [
      ...[0.001, 0.3, 1, 1.1, 59.999, MAX_SECONDS_PER_KEY].flatMap((s) => [
        { format: 'iso8601', secondsPerKey: s } as const,
        { format: 'epoch-millis', secondsPerKey: s } as const,
      ]),
      ...[1, 60, MAX_SECONDS_PER_KEY].map((s) => ({ format: 'epoch-seconds', secondsPerKey: s }) as const),
      ...[1, 3600, 21_600, 86_400].map((s) => ({ format: 'date', secondsPerKey: s }) as const),
    ];
    for (const spec of specs) {
      expect(secondsPerKeyProblem(spec.format, spec.secondsPerKey), JSON.stringify(spec)).toBeNull();
      // Distinct keys print as distinct values, in every format but a date, where a day's keys tie on purpose.
      if (spec.format !== 'date') expect(new Set(keys.map((k) => renderCursor(spec, k))).size, JSON.stringify(spec)).toBe(keys.length);
      for (const k of keys) {
        const value = renderCursor(spec, k);
        const read = readCursor(spec, value);
        if (spec.format !== 'date') expect(read, `${JSON.stringify(spec)} key ${k} as ${value}`).toEqual(instant(k));
        else {
          // A day holds a whole number of keys, and its first key starts it.
          const day = read?.kind === 'day' ? read : null;
          expect(day !== null && day.from.exact && day.to.exact && day.from.floor <= k && k < day.to.floor, `${JSON.stringify(spec)} key ${k} as ${value}`).toBe(true);
        }
      }
    }
    // Past the bound, the last keys fall after the year 9999, which ISO 8601 writes with a sign and six digits.
    const past = { format: 'iso8601', secondsPerKey: MAX_SECONDS_PER_KEY * 1.3 } as const;
    expect(renderCursor(past, KEY_LIMIT)).toMatch(/^\+0\d{5}-/);
    expect(readCursor(past, renderCursor(past, KEY_LIMIT))).toBeNull();
  });

  it('are read digit by digit: a value finer than a millisecond is where its digits put it, never rounded onto a key', () => {
    const between = (floor: number, approx: number): CursorRange => ({ kind: 'instant', at: { floor, exact: false, approx } });
    // A microsecond past key 42 is past it (a Date read it as 42 itself), and so is a nanosecond...
    expect(readCursor(iso, '2024-01-01T00:00:42.000001Z')).toEqual(between(42, 42.000001));
    expect(readCursor(iso, '2024-01-01T00:00:42.000000001Z')).toEqual(between(42, 42.000000001));
    // ...and a digit a hundred places down; zeros, however many, are the key itself.
    expect(readCursor(iso, `2024-01-01T00:00:42.${'0'.repeat(99)}1Z`)).toMatchObject({ at: { floor: 42, exact: false } });
    expect(readCursor(iso, '2024-01-01T00:00:42.000000000Z')).toEqual(instant(42));
    expect(readCursor(iso, '2024-01-01T05:30:42.5+05:30')).toEqual(between(42, 42.5));
    expect(readCursor(iso, '2023-12-31T23:59:59.5Z')).toEqual(between(-1, -0.5));
    // A key a millisecond long: values a tenth of one apart are told apart, in order (a Date made them one tie).
    const milli = { format: 'iso8601', secondsPerKey: 0.001 } as const;
    expect(readCursor(milli, '2024-01-01T00:00:00.0421Z')).toEqual(between(42, 42.1));
    expect(readCursor(milli, '2024-01-01T00:00:00.0422Z')).toEqual(between(42, 42.2));
    // Epoch values, as JSON numbers (the digits the connector wrote) and as strings of digits.
    const seconds = { format: 'epoch-seconds', secondsPerKey: 1 } as const;
    expect(readCursor(seconds, 1_704_067_242.000001)).toEqual(between(42, 42.000001));
    expect(readCursor(seconds, `1704067242.${'0'.repeat(30)}1`)).toMatchObject({ at: { floor: 42, exact: false } });
    expect(readCursor(seconds, 1.704067242e9)).toEqual(instant(42));
    expect(readCursor({ format: 'epoch-millis', secondsPerKey: 1 }, 1_704_067_242_000.5)).toEqual(between(42, 42.0005));
    // A day or a time that does not exist is no value (a Date rolled it over into the next).
    expect(readCursor(iso, '2024-02-30T00:00:00Z')).toBeNull();
    expect(readCursor(iso, '2024-01-01T24:00:00Z')).toBeNull();
    expect(readCursor(iso, '2024-02-29T00:00:00Z')).toEqual(instant(59 * 86_400));
    expect(readCursor(seconds, 1e300)).toBeNull();
  });

  it('under a date, a datetime at midnight (UTC) is its day, as a connector that declares the field a date-time writes it; the API itself reads only a date', () => {
    const day = { kind: 'day', from: key(4), to: key(8) };
    expect(readCursor(date, '2024-01-02T00:00:00.000000Z')).toEqual(day);
    expect(readCursor(date, '2024-01-02T00:00:00+00:00')).toEqual(day);
    expect(readCursor(date, '2024-01-01T19:00:00-05:00')).toEqual(day);
    // Any other time of the day is not the day that was served.
    expect(readCursor(date, '2024-01-02T06:00:00Z')).toBeNull();
    expect(readCursor(date, '2024-01-02T00:00:00.000001Z')).toBeNull();
    expect(bookmarkWatermark(date, '2024-01-02T00:00:00.000000Z', false)).toEqual({ key: [4], inclusive: false });
    expect(bookmarkWatermark(date, '2024-01-02T00:00:00.000000Z', true)).toEqual({ key: [8], inclusive: false });
    const daily = { ...singerApi, cursor: { format: 'date', inclusive: true, secondsPerKey: 21_600 } } as const;
    expect(askedBy(daily, new URLSearchParams('updated_since=2024-01-02T00:00:00Z'), 5)).toEqual({ problem: 'updated_since must be a date cursor value, got "2024-01-02T00:00:00Z"' });
    expect(askedBy(daily, new URLSearchParams('updated_since=2024-01-02'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [4] }, limit: 5 } });
    // A page number counts pages of what the source serves: 100 asked, 5 a page served, page 3 starts at the eleventh record.
    const paged = { ...daily, request: { path: '/v1/events', params: { page: 'page', limit: 'per_page' } } } as ApiDescription;
    expect(askedBy(paged, new URLSearchParams('page=3&per_page=100'), 5)).toEqual({ fetch: { resume: { kind: 'offset', offset: 10 }, limit: 100 } });
    expect(askedBy(paged, new URLSearchParams('page=3&per_page=2'), 5)).toEqual({ fetch: { resume: { kind: 'offset', offset: 4 }, limit: 2 } });
  });

  it('a date-time a connector writes is read as RFC 3339 writes it (a space, a lowercase t or z); a since as the API reads it, with T and Z', () => {
    // Python's str() of a datetime: it carried no key, a divergent-duplicate, and a bookmark so written was a token-as-watermark.
    expect(readCursor(iso, '2024-01-01 00:00:42+00:00')).toEqual(instant(42));
    expect(readCursor(iso, '2024-01-01t00:00:42.000z')).toEqual(instant(42));
    expect(bookmarkWatermark(iso, '2024-01-01 00:00:42.000001+00:00', false)).toEqual({ key: [42], inclusive: true });
    expect(readCursor(date, '2024-01-02 00:00:00+00:00')).toEqual({ kind: 'day', from: key(4), to: key(8) });
    // Still no date-time: no zone (the instant it names depends on the reader's), two spaces, an underscore.
    for (const value of ['2024-01-01T00:00:42', '2024-01-01  00:00:42Z', '2024-01-01_00:00:42Z']) expect(readCursor(iso, value), value).toBeNull();
    expect(askedBy(singerApi, new URLSearchParams({ updated_since: '2024-01-01 00:00:42+00:00' }), 5)).toEqual({ problem: 'updated_since must be a iso8601 cursor value, got "2024-01-01 00:00:42+00:00"' });
    expect(readParameter(iso, '2024-01-01T00:00:42+00:00')).toEqual(instant(42));
  });

  it('a bookmark between two keys claims every key before it, inclusive or not; a since between two keys starts at the next', () => {
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000001Z', false)).toEqual({ key: [42], inclusive: true });
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:41.999999Z', true)).toEqual({ key: [41], inclusive: true });
    expect(bookmarkWatermark({ format: 'iso8601', secondsPerKey: 0.001 }, '2024-01-01T00:00:00.0425Z', false)).toEqual({ key: [42], inclusive: true });
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000000Z', false)).toEqual({ key: [42], inclusive: false });
    const q = (query: string): URLSearchParams => new URLSearchParams(query);
    expect(askedBy(singerApi, q('updated_since=2024-01-01T00:00:07.000001Z'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [8] }, limit: 5 } });
    const exclusive = { ...singerApi, cursor: { ...singerApi.cursor, inclusive: false } };
    expect(askedBy(exclusive, q('updated_since=2024-01-01T00:00:07.000001Z'), 5)).toEqual({ fetch: { resume: { kind: 'key-gt', key: [7] }, limit: 5 } });
  });

  it('a bookmark is a point of the order, inclusive or exclusive; anything else is left for the checker to judge', () => {
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000Z', false)).toEqual({ key: [42], inclusive: false });
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000Z', true)).toEqual({ key: [42], inclusive: true });
    // A date covers its whole day when inclusive, none of it otherwise.
    expect(bookmarkWatermark(date, '2024-01-02', true)).toEqual({ key: [8], inclusive: false });
    expect(bookmarkWatermark(date, '2024-01-02', false)).toEqual({ key: [4], inclusive: false });
    expect(bookmarkWatermark(iso, undefined, false)).toBeNull();
    // A next-page token kept as the bookmark: a token-as-watermark for the checker.
    expect(bookmarkWatermark(iso, 'Z_dyc4jR0', false)).toBe('Z_dyc4jR0');
  });
});

describe('a bookmark as a watermark', () => {
  const at = (bookmark: string, compression: 'none' | 'base64/gzip' = 'none'): ApiDescription => ({ ...singerApi, state: { ...singerApi.state, bookmark, inclusive: false, compression } });

  it('a value is a watermark: a cursor value a point of the order, anything else for the checker to judge', () => {
    expect(bookmarkClaim(singerApi, '2024-01-01T00:00:42.000Z')).toEqual({ watermark: { key: [42], inclusive: false } });
    expect(bookmarkClaim(singerApi, 'Z_dyc4jR0')).toEqual({ watermark: 'Z_dyc4jR0' });
    expect(bookmarkClaim(singerApi, 17)).toEqual({ watermark: 17 });
    expect(bookmarkClaim(singerApi, null)).toEqual({ watermark: null });
  });

  it('is read in state.format, by default the cursor\'s: a tap that stores epoch seconds for an ISO 8601 API says so', () => {
    expect(singerApi.state.format).toBe('iso8601');
    const seconds = { ...singerApi, state: { ...singerApi.state, format: 'epoch-seconds' } } as const;
    expect(bookmarkClaim(seconds, EPOCH_SECONDS + 42)).toEqual({ watermark: { key: [42], inclusive: false } });
    expect(bookmarkClaim(seconds, `${EPOCH_SECONDS + 42}.5`)).toEqual({ watermark: { key: [42], inclusive: true } });
    const days = { ...singerApi, state: { ...singerApi.state, format: 'date', inclusive: true } } as const;
    expect(bookmarkClaim(days, '2024-01-02')).toEqual({ watermark: { key: [2 * 86_400], inclusive: false } });
  });

  it('a bookmark another format reads as a key of a world cannot be judged, and the reason names the format to describe it with', () => {
    // It was a token-as-watermark: a correct tap failed for how it was described.
    expect(bookmarkClaim(singerApi, EPOCH_SECONDS + 42)).toEqual({
      unjudged: `the bookmark ${EPOCH_SECONDS + 42} at "bookmarks.events.updated_at" is no cursor value in the cursor's format, iso8601, but reads as one in epoch-seconds: set state.format to "epoch-seconds" in the API description, which reads the bookmark as the instant it names (docs/connectors.md, "The API description")`,
    });
    expect(bookmarkClaim(singerApi, `${(EPOCH_SECONDS + 42) * 1000}`)).toMatchObject({ unjudged: expect.stringContaining('reads as one in epoch-millis: set state.format to "epoch-millis"') });
    expect(bookmarkClaim(singerApi, '2024-01-02')).toMatchObject({ unjudged: expect.stringContaining('set state.format to "date"') });
    const seconds = { ...singerApi, state: { ...singerApi.state, format: 'epoch-seconds' } } as const;
    expect(bookmarkClaim(seconds, '2024-01-01T00:00:42Z')).toMatchObject({ unjudged: expect.stringContaining('is no cursor value in state.format, epoch-seconds, but reads as one in iso8601') });
    // What reads as no world's key in any format is still judged as it is: a page token, an offset, a count.
    expect(bookmarkClaim(singerApi, 'Z_dyc4jR0')).toEqual({ watermark: 'Z_dyc4jR0' });
    expect(bookmarkClaim(singerApi, 100)).toEqual({ watermark: 100 });
    expect(bookmarkClaim(singerApi, '1970-01-02')).toEqual({ watermark: '1970-01-02' });
  });

  it('an object or a list cannot be judged: the reason names the path, what it held, and the cursor values inside it', () => {
    const claim = (api: ApiDescription, bookmark: unknown): string => {
      const c = bookmarkClaim(api, bookmark);
      return 'unjudged' in c ? c.unjudged : `a watermark: ${JSON.stringify(c.watermark)}`;
    };
    expect(claim(at('bookmarks.events'), { updated_at: '2024-01-01T00:00:42.000Z', id: 'e42a' })).toBe(
      'the bookmark path "bookmarks.events" holds an object, not a value: {"updated_at":"2024-01-01T00:00:42.000Z","id":"e42a"}. A bookmark is a cursor value, and an object is no point of the order to judge as a watermark: set state.bookmark to the cursor value inside it: "bookmarks.events.updated_at" (docs/connectors.md, "What the platform does")',
    );
    expect(claim(at('bookmarks.events.history'), ['2024-01-01T00:00:41.000Z', '2024-01-01T00:00:42.000Z'])).toContain(
      'the bookmark path "bookmarks.events.history" holds a list, not a value: ["2024-01-01T00:00:41.000Z","2024-01-01T00:00:42.000Z"]. A bookmark is a cursor value, and a list is no point of the order to judge as a watermark: set state.bookmark to the cursor value inside it: "bookmarks.events.history.0" or "bookmarks.events.history.1"',
    );
    expect(claim(at('bookmarks'), { events: {} })).toContain('set state.bookmark to where the connector keeps its bookmark, a cursor value (iso8601)');
    expect(claim(at('bookmarks'), { format: 'base64/gzip', data: 'H4sI' })).toContain('it is a packed state: state.compression "base64/gzip" reads through it');
    // An object shaped as a watermark is no bookmark either: it was taken as the point it spells.
    expect(claim(at('bookmarks'), { key: [999], inclusive: true })).toContain('the bookmark path "bookmarks" holds an object, not a value');
    expect(claim(at('bookmarks'), [])).toContain('holds a list, not a value: []');
  });
});

describe('a newest-first API', () => {
  it('is read from the top down, by its token alone: its worlds list newest first, with the quirks such an API can show', () => {
    const api = readApi('test/fixtures/connector/api-newest-first.json');
    expect(api.source.order).toBe('newest-first');
    expect(api.source.quirks).toEqual(['empty', 'short', 'stale']);
    expect(apiProfile(api)).toMatchObject({ order: 'newest-first', resumes: [], quirks: ['empty', 'short', 'stale'] });
    const plans = fc.sample(planArb(worldOptions({ profile: apiProfile(api) })), { numRuns: 100, seed: 2 });
    expect(plans.every((p) => p.source.order === 'newest-first' && p.source.resumes.length === 0)).toBe(true);
    expect(apiProfile(singerApi).order).toBeUndefined();
  });
});

describe('a lookback window', () => {
  const lookback = readApi('examples/singer/api-lookback.json');

  it('the shipped example states it: the bookmark claims only what lies the lookback behind it, and worlds keep late records within the API\'s window', () => {
    expect(lookback.state.lookback).toBe(10);
    expect(lookback.source.window).toBe(5);
    expect(singerApi.state.lookback).toBe(0);
    expect(bookmarkClaim(lookback, '2024-01-01T00:00:42.000Z')).toEqual({ watermark: { key: [32], inclusive: false } });
    expect(bookmarkClaim(singerApi, '2024-01-01T00:00:42.000Z')).toEqual({ watermark: { key: [42], inclusive: false } });
    expect(apiProfile(lookback).window).toBe(5);
    expect(apiProfile(singerApi).window).toBeUndefined();
    // The window in keys: whole keys within it.
    expect(apiProfile({ ...lookback, cursor: { ...lookback.cursor, secondsPerKey: 2 } }).window).toBe(2);
  });

  it('the instant claimed is the bookmark less the lookback, read as exactly as the bookmark', () => {
    const iso = { format: 'iso8601', secondsPerKey: 1 } as const;
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000Z', false, 5000)).toEqual({ key: [37], inclusive: false });
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000Z', true, 5000)).toEqual({ key: [37], inclusive: true });
    // Half a key back: everything at 39 and before, inclusive or not.
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000Z', false, 2500)).toEqual({ key: [39], inclusive: true });
    // A microsecond past a key, less a lookback of whole keys: still just past a key.
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:42.000001Z', false, 5000)).toEqual({ key: [37], inclusive: true });
    // Back past the epoch of the keys: below zero.
    expect(bookmarkWatermark(iso, '2024-01-01T00:00:02.000Z', false, 5000)).toEqual({ key: [-3], inclusive: false });
    // A day (four keys) claims through its end, less six hours: its third key.
    const date = { format: 'date', secondsPerKey: 21_600 } as const;
    expect(bookmarkWatermark(date, '2024-01-02', true, 21_600_000)).toEqual({ key: [7], inclusive: false });
    const seconds = { format: 'epoch-seconds', secondsPerKey: 1 } as const;
    expect(bookmarkWatermark(seconds, EPOCH_SECONDS + 42, false, 5000)).toEqual({ key: [37], inclusive: false });
    // What is no cursor value is judged as it is, lookback or not.
    expect(bookmarkWatermark(iso, 'Z_dyc4jR0', false, 5000)).toBe('Z_dyc4jR0');
  });

  it("generated worlds draw no replay window wider than the API's, and draw up to it", () => {
    const widest = (profile: ReturnType<typeof apiProfile>): number[] =>
      fc.sample(planArb(worldOptions({ profile })), { numRuns: 400, seed: 3 }).flatMap((p) => (p.source.contract.kind === 'replay-window' ? [p.source.contract.window] : []));
    const bounded = widest(apiProfile(lookback));
    expect(bounded.length).toBeGreaterThan(0);
    expect(Math.max(...bounded)).toBe(5);
    // Without the bound the same worlds are wider: the bound is what keeps them within it.
    expect(Math.max(...widest({ ...apiProfile(lookback), window: undefined } as ReturnType<typeof apiProfile>))).toBeGreaterThan(5);
  });

  it("an API's window wider than worlds draw is met as wide: windows and late records stretch onto it (a lookback of 12 s passed against an hour)", () => {
    const hour = { ...apiProfile(lookback), window: 3600 };
    const plans = fc.sample(planArb(worldOptions({ profile: hour })), { numRuns: 400, seed: 3 }).filter((p) => p.source.contract.kind === 'replay-window');
    const windows = plans.map((p) => (p.source.contract as { window: number }).window);
    expect(Math.max(...windows)).toBe(3600);
    expect(Math.min(...windows)).toBeGreaterThan(12);
    // Late records asked to land far beyond any 12 keys: the world puts them as far back as the window lets them.
    expect(Math.max(...plans.flatMap((p) => p.mutations.map((m) => m.back)))).toBeGreaterThan(600);
  });
});

describe('the simulated source as an HTTP API', () => {
  const q = (query: string): URLSearchParams => new URLSearchParams(query);

  it('reads a request as one fetch: a token first, else since, else offset or page, else the start', () => {
    expect(askedBy(singerApi, q('limit=2'), 5)).toEqual({ fetch: { resume: { kind: 'start' }, limit: 2 } });
    expect(askedBy(singerApi, q(''), 5)).toEqual({ fetch: { resume: { kind: 'start' }, limit: 5 } });
    expect(askedBy(singerApi, q('cursor=abc&updated_since=2024-01-01T00:00:07.000Z'), 5)).toEqual({ fetch: { resume: { kind: 'token', token: 'abc' }, limit: 5 } });
    expect(askedBy(singerApi, q('updated_since=2024-01-01T00:00:07.000Z'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [7] }, limit: 5 } });
    const exclusive = { ...singerApi, cursor: { ...singerApi.cursor, inclusive: false } };
    expect(askedBy(exclusive, q('updated_since=2024-01-01T00:00:07.000Z'), 5)).toEqual({ fetch: { resume: { kind: 'key-gt', key: [7] }, limit: 5 } });
    const daily = { ...singerApi, cursor: { format: 'date', inclusive: false, secondsPerKey: 21_600 } } as const;
    // After 2024-01-02: from the first key of the next day.
    expect(askedBy(daily, q('updated_since=2024-01-02'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [8] }, limit: 5 } });
    const paged = { ...singerApi, request: { path: '/p', params: { page: 'page', limit: 'per_page' } } };
    expect(askedBy(paged, q('page=3&per_page=10'), 5)).toEqual({ fetch: { resume: { kind: 'offset', offset: 10 }, limit: 10 } });
    expect(askedBy(singerApi, q('updated_since=yesterday'), 5)).toEqual({ problem: 'updated_since must be a iso8601 cursor value, got "yesterday"' });
    expect(askedBy(singerApi, q('limit=0'), 5)).toEqual({ problem: 'limit must be a positive integer, got "0"' });
  });

  it('an offset or a page number beside since counts from where since starts: page N of the query', () => {
    const q = (query: string): URLSearchParams => new URLSearchParams(query);
    const paged = { ...singerApi, request: { path: '/v1/events', params: { since: 'updated_since', page: 'page', limit: 'limit' } } } as const;
    // 2 a page (the limit, under the source's 5): page 3 starts 4 records past 00:00:07.
    expect(askedBy(paged, q('updated_since=2024-01-01T00:00:07.000Z&page=3&limit=2'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [7], skip: 4 }, limit: 2 } });
    expect(askedBy(paged, q('updated_since=2024-01-01T00:00:07.000Z&page=1&limit=2'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [7], skip: 0 }, limit: 2 } });
    // Without since, a page number is an offset from the start, as it was.
    expect(askedBy(paged, q('page=3&limit=2'), 5)).toEqual({ fetch: { resume: { kind: 'offset', offset: 4 }, limit: 2 } });
    expect(askedBy(paged, q('updated_since=2024-01-01T00:00:07.000Z&page=0'), 5)).toEqual({ problem: 'page must be a page number from 1, got "0"' });
    const offset = { ...singerApi, cursor: { ...singerApi.cursor, inclusive: false }, request: { path: '/v1/events', params: { since: 'updated_since', offset: 'skip' } } } as const;
    expect(askedBy(offset, q('updated_since=2024-01-01T00:00:07.000Z&skip=3'), 5)).toEqual({ fetch: { resume: { kind: 'key-gt', key: [7], skip: 3 }, limit: 5 } });
    expect(apiResumes(paged)).toEqual(['key-gte', 'offset']);
  });

  it('reads since in request.sinceFormat when the API takes it in another format than its records carry', () => {
    const q = (query: string): URLSearchParams => new URLSearchParams(query);
    const epoch = { ...singerApi, request: { ...singerApi.request, sinceFormat: 'epoch-seconds' } } as const;
    expect(askedBy(epoch, q(`updated_since=${EPOCH_SECONDS + 42}`), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [42] }, limit: 5 } });
    expect(askedBy(epoch, q('updated_since=2024-01-01T00:00:42.000Z'), 5)).toEqual({ problem: 'updated_since must be a epoch-seconds cursor value, got "2024-01-01T00:00:42.000Z"' });
    // The records still carry the cursor's own format.
    expect(recordOf(epoch, { id: 'e42', version: 1, key: [42], attrs: { kind: 'order' }, payload: 'p' }).updated_at).toBe('2024-01-01T00:00:42.000Z');
    // A day as since, for a datetime cursor: from the day's first key, or after its last, whatever the cursor's inclusiveness.
    const days = { ...singerApi, cursor: { ...singerApi.cursor, inclusive: false }, request: { ...singerApi.request, sinceFormat: 'date' } } as const;
    expect(askedBy(days, q('updated_since=2024-01-02'), 5)).toEqual({ fetch: { resume: { kind: 'key-gte', key: [172_800] }, limit: 5 } });
    expect(apiResumes(days)).toEqual(['key-gte']);
    expect(apiResumes({ ...days, request: singerApi.request })).toEqual(['key-gt']);
  });

  it('renders a page: records with id, cursor and content, the token in the body or a Link header, has_more', () => {
    const page = { events: [{ id: 'e7', version: 2, key: [7], attrs: { kind: 'order' }, payload: 'p7' }], next: 'T1', head: 9 };
    const url = new URL('http://127.0.0.1:9/v1/events?limit=1');
    const r = pageResponse(singerApi, page, url);
    expect(JSON.parse(r.body)).toEqual({ data: [{ id: 'e7', updated_at: '2024-01-01T00:00:07.000Z', payload: 'p7', kind: 'order' }], next_cursor: 'T1' });
    const linked = { ...singerApi, response: { records: 'result.items', link: true, hasMore: 'meta.has_more' } };
    const l = pageResponse(linked, page, url);
    expect(l.headers.link).toBe('<http://127.0.0.1:9/v1/events?limit=1&cursor=T1>; rel="next"');
    expect(JSON.parse(l.body)).toEqual({ result: { items: [expect.objectContaining({ id: 'e7' })] }, meta: { has_more: true } });
    expect(pageResponse(linked, { ...page, next: null }, url).headers.link).toBeUndefined();
    // An end-of-stream flag is has_more the other way round: false until the last page.
    const ended = { ...singerApi, response: { records: 'data', next: 'next_cursor', link: false, end: 'meta.end_of_stream' } };
    expect(JSON.parse(pageResponse(ended, page, url).body).meta).toEqual({ end_of_stream: false });
    expect(JSON.parse(pageResponse(ended, { ...page, next: null }, url).body).meta).toEqual({ end_of_stream: true });
    expect(errorResponse(singerApi, 'stale-token', 'x').status).toBe(410);
    expect(errorResponse(singerApi, 'unavailable', 'x').status).toBe(503);
    expect(errorResponse(singerApi, 'timeout', 'x')).toMatchObject({ status: 429, headers: { 'retry-after': '0' } });
  });
});

describe('the protocols as a platform reads them', () => {
  it('Singer: RECORD and STATE; SCHEMA and lines that are not JSON are kept; another protocol is named', () => {
    expect(readMessage('singer', '{"type":"RECORD","stream":"events","record":{"id":"e1"}}')).toEqual({ kind: 'record', stream: 'events', data: { id: 'e1' } });
    expect(readMessage('singer', '{"type":"STATE","value":{"a":1}}')).toMatchObject({ kind: 'state' });
    expect(readMessage('singer', '{"type":"SCHEMA","stream":"events","schema":{}}').kind).toBe('kept');
    expect(readMessage('singer', 'INFO starting').kind).toBe('kept');
    expect(readMessage('singer', '{"type":"RECORD","record":{"stream":"events","data":{},"emitted_at":1}}')).toMatchObject({ kind: 'foreign', why: expect.stringContaining('an Airbyte RECORD message') });
    expect(readMessage('singer', '{"type":"hello","protocol":1}')).toMatchObject({ kind: 'foreign', why: expect.stringContaining('a tidemark protocol message') });
    expect(readMessage('singer', '[1]')).toMatchObject({ kind: 'foreign' });
    // Both protocols have RECORD: one of neither's shape is malformed, not another protocol's.
    for (const line of ['{"type":"RECORD","stream":"events","record":null}', '{"type":"RECORD","record":{"x":1}}']) {
      expect(readMessage('singer', line)).toMatchObject({ kind: 'malformed', why: expect.stringContaining('a Singer RECORD has a string stream and an object record') });
    }
    expect(readMessage('airbyte', '{"type":"RECORD","record":{"stream":"events","data":null}}')).toMatchObject({ kind: 'malformed', why: expect.stringContaining('an Airbyte RECORD has a record with a string stream and an object data') });
  });

  it('a Singer STATE without a value is a STATE of a shape Singer does not define, not a message Singer does not have', () => {
    expect(readMessage('singer', '{"type":"STATE"}')).toEqual({ kind: 'state', message: { type: 'STATE' } });
    expect(stateProblem('singer', { type: 'STATE' })).toBe('it has no value');
    expect(stateProblem('singer', { type: 'STATE', value: null })).toBeNull();
    expect(stateProblem('airbyte', { type: 'LEGACY', data: 7 })).toBe('it is a LEGACY state whose data is number 7, not an object');
  });

  it('Airbyte: RECORD and STATE; LOG and TRACE are kept; a Singer message is named', () => {
    expect(readMessage('airbyte', '{"type":"RECORD","record":{"stream":"events","data":{"id":"e1"},"emitted_at":1}}')).toEqual({ kind: 'record', stream: 'events', data: { id: 'e1' } });
    expect(readMessage('airbyte', '{"type":"STATE","state":{"type":"LEGACY","data":{}}}')).toMatchObject({ kind: 'state' });
    expect(readMessage('airbyte', '{"type":"LOG","log":{"level":"INFO","message":"x"}}').kind).toBe('kept');
    expect(readMessage('airbyte', '{"type":"STATE","value":{}}')).toMatchObject({ kind: 'foreign', why: expect.stringContaining('a Singer STATE message') });
  });

  it("persists Singer's state whole, and Airbyte's per stream, global or legacy, each with the stream's bookmark", () => {
    const api = { ...singerApi, state: { ...singerApi.state, bookmark: 'updated_at', inclusive: false, compression: 'none' } } as const;
    expect(persist('singer', singerApi, null, { type: 'STATE', value: { bookmarks: { events: { updated_at: 'X' } } } })).toEqual({ state: { bookmarks: { events: { updated_at: 'X' } } }, bookmark: 'X', miss: null });
    const other = { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { updated_at: 'U' } } };
    const first = persist('airbyte', api, [other], { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'A' } } });
    const second = persist('airbyte', api, first.state, { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'B' } } });
    // The other stream's state stays; this stream's latest replaces its earlier one.
    expect(second).toEqual({ state: [other, { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'B' } } }], bookmark: 'B', miss: null });
    const global = { type: 'GLOBAL', global: { shared_state: {}, stream_states: [{ stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'G' } }] } };
    expect(persist('airbyte', api, null, global)).toEqual({ state: [global], bookmark: 'G', miss: null });
    expect(persist('airbyte', api, null, { data: { updated_at: 'L' } })).toEqual({ state: { updated_at: 'L' }, bookmark: 'L', miss: null });
  });

  it('an Airbyte state of a shape the protocol does not define is named, never read as a missing bookmark', () => {
    const events = { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 7 } };
    // Each was read as a state without the bookmark (or, for a list that is not one, threw, and the run hung).
    expect(airbyteStateProblem({ type: 'STREAM', stream: { stream_state: { updated_at: 7 } } })).toBe('its stream has no stream_descriptor (it is absent)');
    expect(airbyteStateProblem({ type: 'STREAM', stream: { stream_descriptor: {}, stream_state: {} } })).toBe('its stream.stream_descriptor has no name (it is absent)');
    expect(airbyteStateProblem({ type: 'STREAM' })).toBe('it is a STREAM state without a stream');
    expect(airbyteStateProblem({ type: 'STREAM', stream: { ...events, stream_state: 7 } })).toBe('its stream.stream_state is number 7, not an object');
    expect(airbyteStateProblem({ type: 'STREAM', stream: { ...events, stream_state: [7] } })).toBe('its stream.stream_state is an array [7], not an object');
    expect(airbyteStateProblem({ type: 'PER_STREAM', stream: events })).toBe('its type is string "PER_STREAM", not one of "STREAM", "GLOBAL", "LEGACY"');
    expect(airbyteStateProblem({ type: 'GLOBAL', global: {} })).toBe('its global has no list of stream_states (it is absent)');
    expect(airbyteStateProblem({ type: 'GLOBAL', global: { stream_states: { events } } })).toMatch(/^its global has no list of stream_states \(it is object /);
    expect(airbyteStateProblem({ type: 'GLOBAL', global: { stream_states: [null] } })).toBe('its global.stream_states[0] is null, not an object');
    expect(airbyteStateProblem({ type: 'GLOBAL', global: { shared_state: 'x', stream_states: [] } })).toBe('its global.shared_state is string "x", not an object');
    expect(airbyteStateProblem({ type: 'GLOBAL' })).toBe('it is a GLOBAL state whose global is absent, not an object');
    expect(airbyteStateProblem({ type: 'LEGACY', data: 7 })).toBe('it is a LEGACY state whose data is number 7, not an object');
    expect(airbyteStateProblem({ type: 'LEGACY' })).toBe('it is a LEGACY state whose data is absent, not an object');
    expect(airbyteStateProblem({})).toBe('it is a LEGACY state whose data is absent, not an object');
    expect(airbyteStateProblem(7)).toBe('its state is number 7, not an object');
    expect(airbyteStateProblem(undefined)).toBe('its state is absent, not an object');
    // The shapes the protocol defines, the type given or read from what the state carries.
    for (const state of [
      { type: 'STREAM', stream: events },
      { stream: { stream_descriptor: { name: 'events', namespace: null } } },
      { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: null } },
      { type: 'GLOBAL', global: { shared_state: { at: 1 }, stream_states: [events] } },
      { global: { stream_states: [] } },
      { type: 'LEGACY', data: {} },
      { data: { updated_at: 7 } },
    ]) {
      expect(airbyteStateProblem(state), JSON.stringify(state)).toBeNull();
    }
    // A STATE whose state is no object is a state all the same, not another protocol's message.
    expect(readMessage('airbyte', '{"type":"STATE","state":7}')).toEqual({ kind: 'state', message: 7 });
    // Read anyway, no shape throws.
    const api = { ...singerApi, state: { ...singerApi.state, bookmark: 'updated_at', inclusive: false, compression: 'none' } } as const;
    for (const state of [{ type: 'GLOBAL', global: { stream_states: [null] } }, { type: 'GLOBAL', global: { stream_states: {} } }, 7, null]) {
      expect(persist('airbyte', api, null, state).bookmark, JSON.stringify(state)).toBeUndefined();
    }
  });

  it('says where a bookmark path found nothing, and what stood there instead', () => {
    const miss = (kind: 'singer' | 'airbyte', bookmark: string, message: Record<string, unknown>, compression: 'none' | 'base64/gzip' = 'none'): string | null =>
      persist(kind, { ...singerApi, state: { ...singerApi.state, bookmark, inclusive: false, compression } }, null, message).miss;
    const singer = { type: 'STATE', value: { bookmarks: { events: { updated_at: 'X', id: 'e1' } } } };
    expect(miss('singer', 'bookmarks.events.updated_at', singer)).toBeNull();
    expect(miss('singer', 'bookmarks.events.updatedAt', singer)).toBe('bookmarks.events in the STATE value has no "updatedAt": its keys are "updated_at", "id"');
    expect(miss('singer', 'bookmark.events.updated_at', singer)).toBe('the STATE value has no "bookmark": its keys are "bookmarks"');
    expect(miss('singer', 'bookmarks.events.updated_at.day', singer)).toBe('bookmarks.events.updated_at in the STATE value is string "X", not an object');
    expect(miss('singer', 'bookmarks.events.updated_at', { type: 'STATE', value: { bookmarks: { events: { updated_at: null } } } })).toBe('bookmarks.events.updated_at in the STATE value is null');
    expect(miss('singer', 'a', { type: 'STATE', value: {} })).toBe('the STATE value has no "a": it is empty');
    // Inherited names are no fields of a state.
    expect(miss('singer', 'toString', { type: 'STATE', value: { x: 1 } })).toBe('the STATE value has no "toString": its keys are "x"');
    const users = { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { cursor: 1 } } };
    expect(miss('airbyte', 'updated_at', users)).toBe('there is no STREAM state of the stream "events" (the STREAM states are of "users")');
    const events = { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { cursor: 1 } } };
    expect(miss('airbyte', 'updated_at', events)).toBe('the "events" stream_state has no "updated_at": its keys are "cursor"');
    expect(miss('airbyte', 'updated_at', { type: 'GLOBAL', global: { stream_states: [] } })).toBe('the GLOBAL state has no stream_states entry for "events" (it has entries for no stream)');
    // A packed state, where the description does not say so, is named as one.
    const packed = { format: 'base64/gzip', data: gzipSync(JSON.stringify({ events: { updated_at: 7 } })).toString('base64') };
    expect(miss('airbyte', 'events.updated_at', { data: packed })).toBe('the legacy state data has no "events": its keys are "format", "data" (a packed state: state.compression "base64/gzip" reads through it)');
    expect(miss('airbyte', 'events.updated_at', { data: packed }, 'base64/gzip')).toBeNull();
    expect(miss('airbyte', 'events.updated_at', { data: { events: { format: 'base64/gzip', data: 'not gzip' } } }, 'base64/gzip')).toBe('events in the legacy state data is a packed value that does not unpack');
  });

  it('reads the bookmark through gzipped state wherever it stands on the path, when the description says so', () => {
    const packed = (v: unknown): unknown => ({ format: 'base64/gzip', data: gzipSync(JSON.stringify(v)).toString('base64') });
    const api = { ...singerApi, state: { ...singerApi.state, bookmark: 'events.updated_at', inclusive: false, compression: 'base64/gzip' } } as const;
    // faros-airbyte-cdk's legacy state: the whole connector state, packed.
    expect(persist('airbyte', api, null, { data: packed({ events: { updated_at: 7 } }) }).bookmark).toBe(7);
    const stream = { ...api, state: { ...api.state, bookmark: 'updated_at' } };
    expect(persist('airbyte', stream, null, { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: packed({ updated_at: 9 }) } }).bookmark).toBe(9);
    expect(bookmarkIn(api, { events: packed({ updated_at: 8 }) })).toBe(8);
    expect(bookmarkIn(api, { format: 'base64/gzip', data: 'not gzip' })).toBeUndefined();
    // Without the declaration a packed state is read as it is: no bookmark in it.
    expect(bookmarkIn({ ...api, state: { ...api.state, compression: 'none' } }, packed({ events: { updated_at: 7 } }))).toBeUndefined();
  });

  it('runs a Singer tap with --config --catalog [--state], an Airbyte source with read first', () => {
    expect(syncArgs('singer', { config: 'c', catalog: 'k', state: null })).toEqual(['--config', 'c', '--catalog', 'k']);
    expect(syncArgs('airbyte', { config: 'c', catalog: 'k', state: 's' })).toEqual(['read', '--config', 'c', '--catalog', 'k', '--state', 's']);
  });

  it('names a connector again from its key in the regression file', () => {
    const id = 'singer:python3 tap.py --api api.json';
    expect(connectorOf(id)).toEqual({ kind: 'singer', command: 'python3 tap.py', api: 'api.json' });
    expect(connectorFlag(id, { page_size: '2' })).toBe("--singer 'python3 tap.py' --api api.json --option page_size=2");
    expect(connectorOf('command:python3 tap.py')).toBeNull();
  });
});

describe('lines read from a process (src/adapter/process/lines.ts)', () => {
  it('splits chunks at newlines, across chunks and inside a character, and drops the \\r of a \\r\\n', () => {
    const s = new LineSplitter(100);
    const euro = Buffer.from('€');
    expect(s.push(Buffer.concat([Buffer.from('{"a":1}\n{"b":'), euro.subarray(0, 1)])).lines).toEqual(['{"a":1}']);
    expect(s.push(Buffer.concat([euro.subarray(1), Buffer.from('2}\r\nlast')])).lines).toEqual(['{"b":€2}']);
    expect(s.end()).toBe('last');
  });

  it('a line longer than the limit, ended or not, is an overflow: the lines before it are told, nothing after', () => {
    const s = new LineSplitter(10);
    expect(s.push('short\n0123456789')).toEqual({ lines: ['short'], overflow: false });
    expect(s.push('X')).toEqual({ lines: [], overflow: true });
    expect(s.push('\nmore\n')).toEqual({ lines: [], overflow: false });
    expect(s.end()).toBeNull();
    const ended = new LineSplitter(10);
    expect(ended.push('ok\n0123456789AB\nnext\n')).toEqual({ lines: ['ok'], overflow: true });
    expect(lineLimitText()).toBe('64 MiB');
    expect(LINE_LIMIT).toBe(64 * 1024 * 1024);
  });
});
