import { CURSOR_FORMATS, secondsPerKeyProblem, type CursorFormat } from './cursor.js';

/**
 * What an API description must mean, beyond its shape (api.ts checks the shape): a field the
 * shape accepts but that would later blow up, or silently mean something else than it says,
 * is refused here, naming it, before anything runs. Each rule says why in its message, so a
 * wrong description is a usage error (exit 3), never a connector's failure or an unknown later.
 */

/** A description whose shape api.ts has checked: every field present has its kind. */
export interface Shaped {
  readonly request: { readonly path: string; readonly params: Readonly<Record<string, string>> };
  readonly cursor: { readonly format: string; readonly secondsPerKey?: number };
  readonly response: { readonly records: string; readonly next?: string; readonly link?: boolean; readonly hasMore?: string; readonly end?: string };
  readonly record: { readonly id: string; readonly cursor: string; readonly payload?: string };
  readonly errors?: Readonly<Record<string, number>>;
  readonly state: { readonly bookmark: string; readonly compression?: string; readonly lookback?: number };
  readonly config?: { readonly baseUrl?: string; readonly values?: Readonly<Record<string, unknown>> };
  readonly source?: { readonly contracts?: readonly unknown[]; readonly window?: number };
}

/**
 * The attributes the simulated source gives its events (scenarios/: `kind`, which filters
 * read): every record carries them beside its id, cursor value and content, so a record field
 * of that name would be overwritten by one or the other.
 */
export const RECORD_ATTRIBUTES = ['kind'] as const;

/** Names every object inherits: as a path's segment they reach the prototype, not a field. */
const INHERITED = new Set(['__proto__', 'constructor', 'prototype']);

/** The first thing the description means wrongly, naming the field, or null. */
export function meaningProblem(d: Shaped): string | null {
  return requestProblem(d) ?? cursorProblem(d) ?? responseProblem(d) ?? recordProblem(d) ?? errorsProblem(d) ?? pathProblem('state.bookmark', d.state.bookmark, 'state') ?? lookbackProblem(d) ?? windowProblem(d) ?? configProblem(d);
}

/** The longest lookback or window a description may state: a century, far past any world's keys and any real API's. */
const CENTURY_SECONDS = 3_155_760_000;

/** Whether a number of seconds is a whole number of milliseconds, the finest step a cursor value shows. */
function wholeMillis(seconds: number): boolean {
  const ms = seconds * 1000;
  return Math.abs(ms - Math.round(ms)) < 1e-6;
}

function lookbackProblem(d: Shaped): string | null {
  const seconds = d.state.lookback;
  if (seconds === undefined) return null;
  if (!(seconds >= 0 && seconds <= CENTURY_SECONDS) || !wholeMillis(seconds)) {
    return `state.lookback must be a number of seconds from 0 to ${CENTURY_SECONDS.toLocaleString('en-US')} (a century), a whole number of milliseconds: how far behind its bookmark the connector reads again on every sync, got ${JSON.stringify(seconds)}`;
  }
  return null;
}

function windowProblem(d: Shaped): string | null {
  const seconds = d.source?.window;
  if (seconds === undefined) return null;
  const contracts = d.source?.contracts ?? ['snapshot', 'insertion-stable'];
  if (!contracts.includes('replay-window')) {
    return `source.window is how far behind the newest record a late one lands in a replay window, and source.contracts has no "replay-window" (it has ${JSON.stringify(contracts)})`;
  }
  if (!(seconds > 0 && seconds <= CENTURY_SECONDS) || !wholeMillis(seconds)) {
    return `source.window must be a number of seconds more than 0 and at most ${CENTURY_SECONDS.toLocaleString('en-US')} (a century), a whole number of milliseconds, got ${JSON.stringify(seconds)}`;
  }
  const perKey = d.cursor.secondsPerKey ?? (d.cursor.format === 'date' ? 21_600 : 1);
  const [ms, perKeyMs] = [Math.round(seconds * 1000), Math.round(perKey * 1000)];
  if (ms < perKeyMs) {
    return `source.window must span one key of the simulated source at least (cursor.secondsPerKey: ${perKey} seconds), since a late record lands at a key, got ${JSON.stringify(seconds)}`;
  }
  // Worlds count a window in keys: one of 119 s over keys of 60 s would be tested as 60 s.
  if (ms % perKeyMs !== 0) {
    return `source.window must be a whole number of keys of the simulated source (cursor.secondsPerKey: ${perKey} seconds each), since worlds put late records at keys, got ${JSON.stringify(seconds)}: say ${(Math.floor(ms / perKeyMs) * perKeyMs) / 1000} or ${(Math.ceil(ms / perKeyMs) * perKeyMs) / 1000}`;
  }
  return null;
}

function requestProblem(d: Shaped): string | null {
  const path = d.request.path;
  if (!path.startsWith('/')) return `request.path must start with /, got ${JSON.stringify(path)}`;
  if (path.includes('?')) return `request.path must be a path alone, got ${JSON.stringify(path)}: it holds a query string (the API's parameters are request.params; fixed ones the connector sends are its own)`;
  if (path.startsWith('//')) return `request.path must not start with //, got ${JSON.stringify(path)}: a URL reads what follows as a host`;
  if (path.includes('#')) return `request.path must be a path alone, got ${JSON.stringify(path)}: it holds a fragment, which a client never sends`;
  // The server compares the request's path as a URL parser reads it: a path it would read
  // otherwise (a space, `..`, a backslash, a character outside ASCII) would be answered 404.
  const read = new URL(path, 'http://127.0.0.1').pathname;
  if (read !== path) return `request.path ${JSON.stringify(path)} is not a path as a client sends it: a URL reads it as ${JSON.stringify(read)}; write that`;
  const params = d.request.params;
  if (!['since', 'token', 'offset', 'page'].some((p) => params[p] !== undefined)) return 'request.params must name at least one of since, token, offset, page: a connector needs some way to resume';
  if (params.offset !== undefined && params.page !== undefined) return 'request.params has both offset and page: an API pages by one of them';
  const names = Object.values(params);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) return `request.params names the parameter "${twice}" twice`;
  return null;
}

function cursorProblem(d: Shaped): string | null {
  const format = d.cursor.format;
  if (!CURSOR_FORMATS.includes(format as CursorFormat)) return `cursor.format must be one of ${CURSOR_FORMATS.map((f) => `"${f}"`).join(', ')}, got ${JSON.stringify(format)}`;
  return d.cursor.secondsPerKey === undefined ? null : secondsPerKeyProblem(format as CursorFormat, d.cursor.secondsPerKey);
}

function responseProblem(d: Shaped): string | null {
  const { response } = d;
  const token = d.request.params.token;
  if (token !== undefined && response.next === undefined && response.link !== true) return 'request.params.token needs response.next (the token in the body) or response.link: true (the next page in a Link header)';
  if (token === undefined && response.next !== undefined) return 'response.next needs request.params.token: a token in the body is of no use to a connector that has no parameter to send it back in';
  if (token === undefined && response.link === true) return 'response.link needs request.params.token: the next page\'s URL carries the token in that parameter';
  const paths: [string, string | undefined][] = [
    ['response.records', response.records],
    ['response.next', response.next],
    ['response.hasMore', response.hasMore],
    ['response.end', response.end],
  ];
  for (const [field, path] of paths) {
    const problem = path === undefined ? null : pathProblem(field, path, 'body');
    if (problem !== null) return problem;
  }
  return apartProblem(paths, 'a response holds each of them in a place of its own');
}

function recordProblem(d: Shaped): string | null {
  const fields: [string, string | undefined][] = [
    ['record.id', d.record.id],
    ['record.cursor', d.record.cursor],
    ['record.payload', d.record.payload ?? 'payload'],
  ];
  for (const [field, name] of fields) {
    const problem = name === undefined ? null : fieldProblem(field, name, 'a record\'s fields are named at its top level; a nested field is not supported');
    if (problem !== null) return problem;
    if ((RECORD_ATTRIBUTES as readonly string[]).includes(name as string)) return `${field} is ${JSON.stringify(name)}, the field every record's ${JSON.stringify(name)} attribute is served in: one would overwrite the other`;
  }
  return apartProblem(fields, 'a record holds its id, its cursor value and its content in fields of their own (record.payload defaults to "payload")');
}

function errorsProblem(d: Shaped): string | null {
  const errors = { unavailable: 503, rateLimited: 429, expiredToken: 410, badRequest: 400, ...d.errors };
  for (const [name, status] of Object.entries(d.errors ?? {})) if (!(status >= 400 && status <= 599)) return `errors.${name} must be an HTTP error status (400 to 599), got ${status}`;
  // A connector retries what is unavailable or rate limited; an expired token it must not
  // retry, since it is never accepted again. Told apart by nothing, it loops forever.
  for (const retried of ['unavailable', 'rateLimited'] as const) {
    if (errors.expiredToken === errors[retried]) return `errors.expiredToken and errors.${retried} are both ${errors[retried]}: a connector could not tell an expired token, never accepted again, from a call to retry`;
  }
  return null;
}

function configProblem(d: Shaped): string | null {
  const baseUrl = d.config?.baseUrl ?? 'base_url';
  const problem = fieldProblem('config.baseUrl', baseUrl, 'it names a key at the top of the config file');
  if (problem !== null) return problem;
  if (d.config?.values !== undefined && Object.hasOwn(d.config.values, baseUrl)) return `config.values has ${JSON.stringify(baseUrl)}, the key config.baseUrl names: tidemark writes its server's URL there, over any value given`;
  return null;
}

/**
 * A dotted path's problem: a path is names joined by dots (`meta.next_cursor`), each name
 * non-empty, without whitespace, and no name every object inherits. Where tidemark builds the
 * body (`body`), a name of digits would index an array tidemark cannot build; a connector's
 * state (`state`) may hold arrays, which a number indexes.
 */
export function pathProblem(field: string, path: string, where: 'body' | 'state'): string | null {
  const problem = segmentsProblem(path.split('.'), where);
  return problem === null ? null : `${field} ${JSON.stringify(path)} is not a dotted path of names: ${problem}`;
}

function segmentsProblem(segments: readonly string[], where: 'body' | 'state' | 'field'): string | null {
  for (const [i, segment] of segments.entries()) {
    if (segment === '') return i === 0 ? 'it starts with a dot' : i === segments.length - 1 ? 'it ends with a dot' : 'it has two dots in a row';
    if (/\s/.test(segment)) return `${JSON.stringify(segment)} holds whitespace`;
    if (INHERITED.has(segment)) return `${JSON.stringify(segment)} is a name every object inherits, not a field`;
    if (where === 'body' && /^\d+$/.test(segment)) return `${JSON.stringify(segment)} would index an array, and tidemark builds the response's objects from the path`;
  }
  return null;
}

/** A single field name's problem (no dots: `why` says what it names). */
function fieldProblem(field: string, name: string, why: string): string | null {
  if (name.includes('.')) return `${field} ${JSON.stringify(name)} holds a dot: ${why}`;
  const problem = segmentsProblem([name], 'field');
  return problem === null ? null : `${field} ${JSON.stringify(name)} is not a field name: ${problem}`;
}

/** The first two paths that are the same place, or one inside the other, or null. */
function apartProblem(paths: readonly (readonly [string, string | undefined])[], why: string): string | null {
  const given = paths.filter((p): p is [string, string] => p[1] !== undefined);
  for (const [i, [a, pa]] of given.entries()) {
    for (const [b, pb] of given.slice(i + 1)) {
      if (pa === pb) return `${b} is ${JSON.stringify(pb)}, as ${a} is: ${why}`;
      if (pb.startsWith(`${pa}.`)) return `${b} ${JSON.stringify(pb)} lies inside ${a} ${JSON.stringify(pa)}: ${why}`;
      if (pa.startsWith(`${pb}.`)) return `${a} ${JSON.stringify(pa)} lies inside ${b} ${JSON.stringify(pb)}: ${why}`;
    }
  }
  return null;
}
