import type { FetchRequest, Page, Resume } from '../../model/api.js';
import type { SourceEvent } from '../../model/event.js';
import { setPath, sinceSpec, type ApiDescription } from './api.js';
import { firstKeyFrom, readParameter, renderCursor } from './cursor.js';

/**
 * The simulated source as an HTTP API: a request's query read as one world fetch, and the
 * page the world served rendered as the API's response. Pure functions of the description,
 * the request and the page, so the same world always puts the same bytes on the wire.
 */

/** What a request asks the world for, or why it cannot be read (answered 400, no world call). */
export type Asked = { readonly fetch: FetchRequest } | { readonly problem: string };

/** Reads a request's query as a fetch: a token first, else since (and an offset or page number counting from there), else offset or page, else the start. */
export function askedBy(api: ApiDescription, query: URLSearchParams, pageSize: number): Asked {
  const p = api.request.params;
  let limit = pageSize;
  if (p.limit !== undefined && query.has(p.limit)) {
    limit = Number(query.get(p.limit));
    if (!Number.isInteger(limit) || limit < 1) return { problem: `${p.limit} must be a positive integer, got ${JSON.stringify(query.get(p.limit))}` };
  }
  const resume = resumeOf(api, query, Math.min(limit, pageSize));
  return 'problem' in resume ? resume : { fetch: { resume, limit } };
}

/**
 * `perPage`: how many records a page holds, the limit asked for up to the source's page size.
 * A page number stands for the records before it in pages of that size: page 2 of 100 a page,
 * where the source serves 8, starts at the ninth record, where the source's first page ended.
 */
function resumeOf(api: ApiDescription, query: URLSearchParams, perPage: number): Resume | { readonly problem: string } {
  const p = api.request.params;
  const token = p.token === undefined ? null : query.get(p.token);
  if (token !== null && token !== '') return { kind: 'token', token };
  const skip = skipOf(api, query, perPage);
  if (skip !== null && typeof skip === 'object') return skip;
  const since = p.since === undefined ? null : query.get(p.since);
  if (since !== null) {
    const spec = sinceSpec(api);
    const range = readParameter(spec, since);
    if (range === null) return { problem: `${p.since} must be a ${spec.format} cursor value, got ${JSON.stringify(since)}` };
    // An offset or a page number beside it counts from where it starts: page N of the query.
    const past = skip === null ? {} : { skip };
    // A date stands for a whole day: inclusive starts at its first key, exclusive after its last.
    if (range.kind === 'day') return { kind: 'key-gte', key: [firstKeyFrom(api.cursor.inclusive ? range.from : range.to)], ...past };
    // A value between two keys: the first key past it, whether the API serves the value itself or not.
    return api.cursor.inclusive ? { kind: 'key-gte', key: [firstKeyFrom(range.at)], ...past } : { kind: 'key-gt', key: [range.at.floor], ...past };
  }
  return skip === null ? { kind: 'start' } : { kind: 'offset', offset: skip };
}

/** How many records an offset or a page number passes over (null: the request has neither), or why it cannot be read. */
function skipOf(api: ApiDescription, query: URLSearchParams, perPage: number): number | null | { readonly problem: string } {
  const p = api.request.params;
  const offset = p.offset === undefined ? null : query.get(p.offset);
  if (offset !== null) {
    const n = Number(offset);
    return Number.isInteger(n) && n >= 0 ? n : { problem: `${p.offset} must be a non-negative integer, got ${JSON.stringify(offset)}` };
  }
  const page = p.page === undefined ? null : query.get(p.page);
  if (page !== null) {
    const n = Number(page);
    return Number.isInteger(n) && n >= 1 ? (n - 1) * perPage : { problem: `${p.page} must be a page number from 1, got ${JSON.stringify(page)}` };
  }
  return null;
}

/** One event as the API's record: its id, its cursor value, its content and its attributes. */
export function recordOf(api: ApiDescription, event: SourceEvent): Record<string, unknown> {
  return { ...event.attrs, [api.record.id]: event.id, [api.record.cursor]: renderCursor(api.cursor, event.key[0] ?? 0), [api.record.payload]: event.payload };
}

export interface Response {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * A served page as the API's response: the records at their path, and the continuation as the
 * API gives it (a token in the body, a Link header, a has_more flag, an end-of-stream flag). `url` is the request's,
 * so a Link to the next page keeps every other parameter it had.
 */
export function pageResponse(api: ApiDescription, page: Page, url: URL): Response {
  const body: Record<string, unknown> = {};
  setPath(body, api.response.records, page.events.map((e) => recordOf(api, e)));
  if (api.response.next !== undefined) setPath(body, api.response.next, page.next);
  if (api.response.hasMore !== undefined) setPath(body, api.response.hasMore, page.next !== null);
  if (api.response.end !== undefined) setPath(body, api.response.end, page.next === null);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const tokenParam = api.request.params.token;
  if (api.response.link && page.next !== null && tokenParam !== undefined) {
    const next = new URL(url.href);
    next.searchParams.set(tokenParam, page.next);
    headers.link = `<${next.href}>; rel="next"`;
  }
  return { status: 200, headers, body: JSON.stringify(body) };
}

/** A world error as the API answers it: its status and a small JSON body. */
export function errorResponse(api: ApiDescription, code: string, message: string): Response {
  const status =
    code === 'stale-token' ? api.errors.expiredToken
    : code === 'timeout' ? api.errors.rateLimited
    : code === 'bad-request' ? api.errors.badRequest
    : api.errors.unavailable;
  // A rate limit says when to come back: at once, since the world's clock is its calls.
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '0' } : {}) };
  return { status, headers, body: JSON.stringify({ error: code, message }) };
}
