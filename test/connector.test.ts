/**
 * The pieces of the connector runner that are pure: the API description and its schema, the
 * cursor values, a request read as a fetch and a page rendered as a response, and the two
 * protocols' messages and states as a platform reads them.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { API_FIELDS, apiProblem, apiProfile, readApi } from '../src/connector/api.js';
import { bookmarkWatermark, EPOCH_SECONDS, readCursor, renderCursor } from '../src/connector/cursor.js';
import { askedBy, errorResponse, pageResponse } from '../src/connector/http.js';
import { bookmarkIn, persist, readMessage, syncArgs } from '../src/connector/messages.js';
import { connectorFlag, connectorOf } from '../src/connector/target.js';

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
  ])('%j is refused, naming the field: %s', (change, problem) => {
    expect(apiProblem({ ...base, ...change })).toContain(problem);
  });

  it('the shipped example is valid, and its defaults are filled in', () => {
    expect(apiProblem(base)).toBeNull();
    expect(singerApi.cursor.secondsPerKey).toBe(1);
    expect(singerApi.errors).toEqual({ unavailable: 503, rateLimited: 429, expiredToken: 410, badRequest: 400 });
    expect(singerApi.source).toEqual({ contracts: ['snapshot', 'insertion-stable'], mutable: true });
    expect(apiProfile(singerApi)).toEqual({ resumes: ['key-gte'], keyArity: 1, mutable: true, refusals: 'never', contracts: ['snapshot', 'insertion-stable'] });
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
});

describe('cursor values', () => {
  const iso = { format: 'iso8601', secondsPerKey: 1 } as const;
  const date = { format: 'date', secondsPerKey: 21_600 } as const;

  it('are anchored to a fixed epoch, in every format', () => {
    expect(renderCursor(iso, 42)).toBe('2024-01-01T00:00:42.000Z');
    expect(renderCursor({ format: 'epoch-seconds', secondsPerKey: 60 }, 2)).toBe(EPOCH_SECONDS + 120);
    expect(renderCursor({ format: 'epoch-millis', secondsPerKey: 1 }, 3)).toBe((EPOCH_SECONDS + 3) * 1000);
    // Four keys a day: keys 4 to 7 are all 2024-01-02, so they tie.
    expect([3, 4, 7, 8].map((k) => renderCursor(date, k))).toEqual(['2024-01-01', '2024-01-02', '2024-01-02', '2024-01-03']);
    expect(readCursor(iso, '2024-01-01T00:00:42.000Z')).toEqual({ from: 42, to: 42 });
    expect(readCursor(date, '2024-01-02')).toEqual({ from: 4, to: 8 });
    expect(readCursor(iso, 'Z_dyc4jR0')).toBeNull();
    expect(readCursor({ format: 'epoch-seconds', secondsPerKey: 1 }, `${EPOCH_SECONDS + 5}`)).toEqual({ from: 5, to: 5 });
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
    expect(askedBy(paged, q('page=3&per_page=10'), 5)).toEqual({ fetch: { resume: { kind: 'offset', offset: 20 }, limit: 10 } });
    expect(askedBy(singerApi, q('updated_since=yesterday'), 5)).toEqual({ problem: 'updated_since must be a iso8601 cursor value, got "yesterday"' });
    expect(askedBy(singerApi, q('limit=0'), 5)).toEqual({ problem: 'limit must be a positive integer, got "0"' });
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
  });

  it('Airbyte: RECORD and STATE; LOG and TRACE are kept; a Singer message is named', () => {
    expect(readMessage('airbyte', '{"type":"RECORD","record":{"stream":"events","data":{"id":"e1"},"emitted_at":1}}')).toEqual({ kind: 'record', stream: 'events', data: { id: 'e1' } });
    expect(readMessage('airbyte', '{"type":"STATE","state":{"type":"LEGACY","data":{}}}')).toMatchObject({ kind: 'state' });
    expect(readMessage('airbyte', '{"type":"LOG","log":{"level":"INFO","message":"x"}}').kind).toBe('kept');
    expect(readMessage('airbyte', '{"type":"STATE","value":{}}')).toMatchObject({ kind: 'foreign', why: expect.stringContaining('a Singer STATE message') });
  });

  it("persists Singer's state whole, and Airbyte's per stream, global or legacy, each with the stream's bookmark", () => {
    const api = { ...singerApi, state: { bookmark: 'updated_at', inclusive: false, compression: 'none' } } as const;
    expect(persist('singer', singerApi, null, { type: 'STATE', value: { bookmarks: { events: { updated_at: 'X' } } } })).toEqual({ state: { bookmarks: { events: { updated_at: 'X' } } }, bookmark: 'X' });
    const other = { type: 'STREAM', stream: { stream_descriptor: { name: 'users' }, stream_state: { updated_at: 'U' } } };
    const first = persist('airbyte', api, [other], { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'A' } } });
    const second = persist('airbyte', api, first.state, { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'B' } } });
    // The other stream's state stays; this stream's latest replaces its earlier one.
    expect(second).toEqual({ state: [other, { type: 'STREAM', stream: { stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'B' } } }], bookmark: 'B' });
    const global = { type: 'GLOBAL', global: { shared_state: {}, stream_states: [{ stream_descriptor: { name: 'events' }, stream_state: { updated_at: 'G' } }] } };
    expect(persist('airbyte', api, null, global)).toEqual({ state: [global], bookmark: 'G' });
    expect(persist('airbyte', api, null, { data: { updated_at: 'L' } })).toEqual({ state: { updated_at: 'L' }, bookmark: 'L' });
  });

  it('reads the bookmark through gzipped state wherever it stands on the path, when the description says so', () => {
    const packed = (v: unknown): unknown => ({ format: 'base64/gzip', data: gzipSync(JSON.stringify(v)).toString('base64') });
    const api = { ...singerApi, state: { bookmark: 'events.updated_at', inclusive: false, compression: 'base64/gzip' } } as const;
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
