import { gunzipSync } from 'node:zlib';
import { airbyteStateProblem, airbyteStateType, type AirbyteStateType } from './airbyte-state.js';
import type { ApiDescription } from './api.js';

/**
 * The two connector protocols, as a platform reads them: which stdout lines are records and
 * states, what is only kept for the failure text, and what shows the connector speaks
 * another protocol. And the files a platform hands a connector for one sync.
 *
 * Singer (https://hub.meltano.com/singer/spec): `{"type":"RECORD","stream","record"}`,
 * `{"type":"STATE","value"}`, `SCHEMA`, `ACTIVATE_VERSION`, `BATCH`; the tap is run as
 * `CMD --config FILE --catalog FILE [--state FILE]`, the state file holding the last STATE's
 * value.
 *
 * Airbyte (https://docs.airbyte.com/understanding-airbyte/airbyte-protocol):
 * `{"type":"RECORD","record":{"stream","data","emitted_at"}}`, `{"type":"STATE","state":...}`
 * of type STREAM (one state per stream), GLOBAL (one for all streams) or LEGACY (`data`),
 * `LOG`, `TRACE`, `SPEC`, `CATALOG`, `CONNECTION_STATUS`, `CONTROL`; the source is run as
 * `CMD read --config FILE --catalog FILE [--state FILE]`, the state file holding the list of
 * the latest state message of each stream (or the global one, or the legacy blob).
 */
export type ConnectorKind = 'singer' | 'airbyte';

export type Message =
  | { readonly kind: 'record'; readonly stream: string; readonly data: Readonly<Record<string, unknown>> }
  /** A Singer STATE message, whole; an Airbyte one's `state`, whatever its shape (airbyte-state.ts judges it). */
  | { readonly kind: 'state'; readonly message: unknown }
  /** Kept for the failure text: schemas, logs, traces, lines that are not JSON. */
  | { readonly kind: 'kept'; readonly text: string }
  /** The line shows the connector speaks another protocol. */
  | { readonly kind: 'foreign'; readonly why: string }
  /** A RECORD of this protocol whose fields are not the protocol's: no platform could read it. */
  | { readonly kind: 'malformed'; readonly why: string };

const SINGER_KEPT = ['SCHEMA', 'ACTIVATE_VERSION', 'BATCH'];
const AIRBYTE_KEPT = ['LOG', 'TRACE', 'SPEC', 'CATALOG', 'CONNECTION_STATUS', 'CONTROL'];

/** Reads one stdout line as the given protocol's message. */
export function readMessage(kind: ConnectorKind, line: string): Message {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return { kind: 'kept', text: line };
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return { kind: 'foreign', why: `a JSON value that is not a message: ${line.slice(0, 200)}` };
  const msg = m as Record<string, unknown>;
  const type = msg.type;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (kind === 'singer') {
    if (type === 'RECORD' && typeof msg.stream === 'string' && isObject(msg.record)) return { kind: 'record', stream: msg.stream, data: msg.record };
    // A STATE without a value is Singer's all the same (an Airbyte one has a state): what is wrong with it is said as such.
    if (type === 'STATE' && !('state' in msg)) return { kind: 'state', message: msg };
    if (typeof type === 'string' && SINGER_KEPT.includes(type)) return { kind: 'kept', text: line };
    if ((type === 'RECORD' && isObject(msg.record) && 'data' in msg.record) || (type === 'STATE' && 'state' in msg) || AIRBYTE_KEPT.includes(type as string)) {
      return { kind: 'foreign', why: `an Airbyte ${String(type)} message, not a Singer one (check it with --airbyte): ${line.slice(0, 200)}` };
    }
  } else {
    if (type === 'RECORD' && isObject(msg.record) && typeof msg.record.stream === 'string' && isObject(msg.record.data)) return { kind: 'record', stream: msg.record.stream, data: msg.record.data };
    // A STATE of Airbyte's shape or not (a Singer one has a value): what is wrong with it is said as such.
    if (type === 'STATE' && !('value' in msg)) return { kind: 'state', message: msg.state };
    if (typeof type === 'string' && AIRBYTE_KEPT.includes(type)) return { kind: 'kept', text: line };
    if ((type === 'RECORD' && typeof msg.stream === 'string') || (type === 'STATE' && 'value' in msg) || SINGER_KEPT.includes(type as string)) {
      return { kind: 'foreign', why: `a Singer ${String(type)} message, not an Airbyte one (check it with --singer): ${line.slice(0, 200)}` };
    }
  }
  if (type === 'hello' || type === 'call') return { kind: 'foreign', why: `a tidemark protocol message (check it with --command): ${line.slice(0, 200)}` };
  // Both protocols have RECORD: one that is neither's is this one's, of the wrong shape.
  if (type === 'RECORD') {
    const shape = kind === 'singer' ? 'a Singer RECORD has a string stream and an object record' : 'an Airbyte RECORD has a record with a string stream and an object data';
    return { kind: 'malformed', why: `a RECORD of the wrong shape (${shape}): ${line.slice(0, 200)}` };
  }
  return { kind: 'foreign', why: `a message of type ${JSON.stringify(type)}, which ${kind === 'singer' ? 'Singer' : 'the Airbyte protocol'} does not have: ${line.slice(0, 200)}` };
}

/**
 * What is wrong with a STATE message's shape, or null: a Singer STATE must have a value
 * (any JSON); an Airbyte state, a shape the protocol defines (airbyte-state.ts). No platform
 * persists another, so what the next sync would start from is undefined.
 */
export function stateProblem(kind: ConnectorKind, message: unknown): string | null {
  if (kind === 'airbyte') return airbyteStateProblem(message);
  return Object.hasOwn(message as object, 'value') ? null : 'it has no value';
}

/** The platform's state after a STATE message, and the stream's bookmark in it. */
export interface Persisted {
  readonly state: unknown;
  /** The value at the bookmark's path; undefined when the state holds none there. */
  readonly bookmark: unknown;
  /** Where the bookmark's path found no value, and what was there instead; null when it found one. */
  readonly miss: string | null;
}

/**
 * The platform's persisted state after a STATE message, given what it held before, and the
 * bookmark of the stream in it. Singer's state is the message's value, whole. Airbyte keeps
 * the latest state of each stream (STREAM), or the one global state (GLOBAL), or the legacy
 * blob (LEGACY, or a state with only `data`).
 */
export function persist(kind: ConnectorKind, api: ApiDescription, previous: unknown, message: unknown): Persisted {
  if (kind === 'singer') {
    const value = (message as { value?: unknown }).value;
    return { state: value, ...lookup(api, value, 'the STATE value') };
  }
  // A state of a shape the protocol does not define is refused before (airbyte-state.ts); this reads any shape without throwing.
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { state: message, bookmark: undefined, miss: 'the state is not an object' };
  const state = message as Readonly<Record<string, unknown>>;
  return persistAirbyte(api, previous, airbyteStateType(state), state);
}

function persistAirbyte(api: ApiDescription, previous: unknown, type: AirbyteStateType, message: Readonly<Record<string, unknown>>): Persisted {
  if (type === 'STREAM') {
    const stream = message.stream as { stream_descriptor?: { name?: unknown } } | undefined;
    const name = stream?.stream_descriptor?.name;
    const kept = isStreamList(previous) ? previous.filter((s) => s.stream.stream_descriptor.name !== name) : [];
    const state = [...kept, { type: 'STREAM', stream } as StreamState];
    const mine = state.find((s) => s.stream?.stream_descriptor?.name === api.stream);
    if (mine === undefined) return { state, bookmark: undefined, miss: `there is no STREAM state of the stream ${JSON.stringify(api.stream)} (the STREAM states are of ${names(state.map((s) => s.stream?.stream_descriptor?.name))})` };
    return { state, ...lookup(api, mine.stream.stream_state, `the ${JSON.stringify(api.stream)} stream_state`) };
  }
  if (type === 'GLOBAL') {
    const global = message.global as { stream_states?: { stream_descriptor?: { name?: unknown }; stream_state?: unknown }[] } | undefined;
    const state = [{ type: 'GLOBAL', global }];
    const entries = Array.isArray(global?.stream_states) ? global.stream_states : [];
    const mine = entries.find((s) => s?.stream_descriptor?.name === api.stream);
    if (mine === undefined) return { state, bookmark: undefined, miss: `the GLOBAL state has no stream_states entry for ${JSON.stringify(api.stream)} (it has entries for ${names(entries.map((s) => s?.stream_descriptor?.name))})` };
    return { state, ...lookup(api, mine.stream_state, `the ${JSON.stringify(api.stream)} stream_state of the GLOBAL state`) };
  }
  return { state: message.data, ...lookup(api, message.data, 'the legacy state data') };
}

function names(list: readonly unknown[]): string {
  return list.length === 0 ? 'no stream' : list.map((n) => JSON.stringify(n)).join(', ');
}

interface StreamState {
  readonly type: 'STREAM';
  readonly stream: { readonly stream_descriptor: { readonly name: unknown }; readonly stream_state?: unknown };
}

function isStreamList(value: unknown): value is StreamState[] {
  return Array.isArray(value) && value.every((s) => (s as StreamState | null)?.type === 'STREAM' && typeof (s as StreamState).stream?.stream_descriptor === 'object');
}

/**
 * The value at the bookmark's path in a state, read through its compression: with
 * `base64/gzip`, every `{ "format": "base64/gzip", "data": BASE64 }` on the way (the whole
 * state, a stream's state) is the JSON it holds. What does not decompress holds no bookmark.
 */
export function bookmarkIn(api: ApiDescription, state: unknown): unknown {
  return lookup(api, state, 'the state').bookmark;
}

/**
 * The bookmark at its path in `root` (what `where` names), or where the path found nothing
 * and what stood there: the keys of the last object it reached, so that a path that is not
 * the connector's is told apart from a state that lacks the value.
 */
function lookup(api: ApiDescription, root: unknown, where: string): { readonly bookmark: unknown; readonly miss: string | null } {
  let at = unpacked(api, root);
  if (at === undefined && root !== undefined) return { bookmark: undefined, miss: `${where} is a packed value that does not unpack` };
  const walked: string[] = [];
  for (const part of api.state.bookmark.split('.')) {
    const name = walked.length === 0 ? where : `${walked.join('.')} in ${where}`;
    if (typeof at !== 'object' || at === null) return { bookmark: undefined, miss: `${name} is ${shape(at)}, not an object` };
    // Own fields only: `toString` is no bookmark of a state that lacks one.
    const next = Object.hasOwn(at, part) ? (at as Record<string, unknown>)[part] : undefined;
    if (next === undefined) return { bookmark: undefined, miss: `${name} has no ${JSON.stringify(part)}: ${keysOf(api, at)}` };
    walked.push(part);
    at = unpacked(api, next);
    if (at === undefined) return { bookmark: undefined, miss: `${walked.join('.')} in ${where} is a packed value that does not unpack` };
  }
  if (at === null) return { bookmark: null, miss: `${api.state.bookmark} in ${where} is null` };
  return { bookmark: at, miss: null };
}

function shape(value: unknown): string {
  return value === undefined ? 'absent' : value === null ? 'null' : Array.isArray(value) ? 'an array' : `${typeof value} ${JSON.stringify(value).slice(0, 40)}`;
}

/** What an object holds, for a reader looking for a bookmark path in it. */
function keysOf(api: ApiDescription, value: object): string {
  const keys = Object.keys(value);
  if (keys.length === 0) return Array.isArray(value) ? 'it is an empty array' : 'it is empty';
  const listed = `its keys are ${keys.slice(0, 8).map((k) => JSON.stringify(k)).join(', ')}${keys.length > 8 ? `, and ${keys.length - 8} more` : ''}`;
  const v = value as { format?: unknown; data?: unknown };
  // A state packed as faros-airbyte-cdk packs it, where the description does not say so.
  return api.state.compression === 'none' && v.format === 'base64/gzip' && typeof v.data === 'string' ? `${listed} (a packed state: state.compression "base64/gzip" reads through it)` : listed;
}

function unpacked(api: ApiDescription, value: unknown): unknown {
  if (api.state.compression !== 'base64/gzip') return value;
  const v = value as { format?: unknown; data?: unknown } | null;
  if (typeof v !== 'object' || v === null || v.format !== 'base64/gzip' || typeof v.data !== 'string') return value;
  try {
    return JSON.parse(gunzipSync(Buffer.from(v.data, 'base64')).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The catalog of the one stream, as each protocol's connectors read it. */
export function catalogOf(kind: ConnectorKind, api: ApiDescription): unknown {
  const schema = {
    type: 'object',
    properties: { [api.record.id]: { type: 'string' }, [api.record.cursor]: { type: ['string', 'integer'] }, [api.record.payload]: { type: 'string' } },
  };
  if (kind === 'singer') {
    return {
      streams: [
        {
          tap_stream_id: api.stream,
          stream: api.stream,
          schema,
          key_properties: [api.record.id],
          replication_key: api.record.cursor,
          replication_method: 'INCREMENTAL',
          metadata: [{ breadcrumb: [], metadata: { selected: true, 'replication-method': 'INCREMENTAL', 'replication-key': api.record.cursor, 'table-key-properties': [api.record.id] } }],
        },
      ],
    };
  }
  return {
    streams: [
      {
        stream: { name: api.stream, json_schema: schema, supported_sync_modes: ['full_refresh', 'incremental'], source_defined_cursor: true, default_cursor_field: [api.record.cursor], source_defined_primary_key: [[api.record.id]] },
        sync_mode: 'incremental',
        cursor_field: [api.record.cursor],
        destination_sync_mode: 'append',
        primary_key: [[api.record.id]],
      },
    ],
  };
}

/** The arguments after the command for one sync, given the files' paths. */
export function syncArgs(kind: ConnectorKind, files: { readonly config: string; readonly catalog: string; readonly state: string | null }): string[] {
  const state = files.state === null ? [] : ['--state', files.state];
  return [...(kind === 'airbyte' ? ['read'] : []), '--config', files.config, '--catalog', files.catalog, ...state];
}
