import { gunzipSync } from 'node:zlib';
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
  | { readonly kind: 'state'; readonly message: Readonly<Record<string, unknown>> }
  /** Kept for the failure text: schemas, logs, traces, lines that are not JSON. */
  | { readonly kind: 'kept'; readonly text: string }
  /** The line shows the connector speaks another protocol. */
  | { readonly kind: 'foreign'; readonly why: string };

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
    if (type === 'STATE' && 'value' in msg) return { kind: 'state', message: msg };
    if (typeof type === 'string' && SINGER_KEPT.includes(type)) return { kind: 'kept', text: line };
    if ((type === 'RECORD' && isObject(msg.record) && 'data' in msg.record) || (type === 'STATE' && 'state' in msg) || AIRBYTE_KEPT.includes(type as string)) {
      return { kind: 'foreign', why: `an Airbyte ${String(type)} message, not a Singer one (check it with --airbyte): ${line.slice(0, 200)}` };
    }
  } else {
    if (type === 'RECORD' && isObject(msg.record) && typeof msg.record.stream === 'string' && isObject(msg.record.data)) return { kind: 'record', stream: msg.record.stream, data: msg.record.data };
    if (type === 'STATE' && isObject(msg.state)) return { kind: 'state', message: msg.state };
    if (typeof type === 'string' && AIRBYTE_KEPT.includes(type)) return { kind: 'kept', text: line };
    if ((type === 'RECORD' && typeof msg.stream === 'string') || (type === 'STATE' && 'value' in msg) || SINGER_KEPT.includes(type as string)) {
      return { kind: 'foreign', why: `a Singer ${String(type)} message, not an Airbyte one (check it with --singer): ${line.slice(0, 200)}` };
    }
  }
  if (type === 'hello' || type === 'call') return { kind: 'foreign', why: `a tidemark protocol message (check it with --command): ${line.slice(0, 200)}` };
  return { kind: 'foreign', why: `a message of type ${JSON.stringify(type)}, which ${kind === 'singer' ? 'Singer' : 'the Airbyte protocol'} does not have: ${line.slice(0, 200)}` };
}

/**
 * The platform's persisted state after a STATE message, given what it held before, and the
 * bookmark of the stream in it. Singer's state is the message's value, whole. Airbyte keeps
 * the latest state of each stream (STREAM), or the one global state (GLOBAL), or the legacy
 * blob (LEGACY, or a state with only `data`).
 */
export function persist(kind: ConnectorKind, api: ApiDescription, previous: unknown, message: Readonly<Record<string, unknown>>): { readonly state: unknown; readonly bookmark: unknown } {
  if (kind === 'singer') return { state: message.value, bookmark: bookmarkIn(api, message.value) };
  const type = message.type ?? (message.stream !== undefined ? 'STREAM' : message.global !== undefined ? 'GLOBAL' : 'LEGACY');
  if (type === 'STREAM') {
    const stream = message.stream as { stream_descriptor?: { name?: unknown } } | undefined;
    const name = stream?.stream_descriptor?.name;
    const kept = isStreamList(previous) ? previous.filter((s) => s.stream.stream_descriptor.name !== name) : [];
    const state = [...kept, { type: 'STREAM', stream } as StreamState];
    return { state, bookmark: streamBookmark(api, state) };
  }
  if (type === 'GLOBAL') {
    const global = message.global as { stream_states?: { stream_descriptor?: { name?: unknown }; stream_state?: unknown }[] } | undefined;
    const mine = global?.stream_states?.find((s) => s.stream_descriptor?.name === api.stream);
    return { state: [{ type: 'GLOBAL', global }], bookmark: bookmarkIn(api, mine?.stream_state) };
  }
  return { state: message.data, bookmark: bookmarkIn(api, message.data) };
}

interface StreamState {
  readonly type: 'STREAM';
  readonly stream: { readonly stream_descriptor: { readonly name: unknown }; readonly stream_state?: unknown };
}

function isStreamList(value: unknown): value is StreamState[] {
  return Array.isArray(value) && value.every((s) => (s as StreamState | null)?.type === 'STREAM' && typeof (s as StreamState).stream?.stream_descriptor === 'object');
}

function streamBookmark(api: ApiDescription, states: readonly StreamState[]): unknown {
  const mine = states.find((s) => s.stream?.stream_descriptor?.name === api.stream);
  return bookmarkIn(api, mine?.stream.stream_state);
}

/**
 * The value at the bookmark's path in a state, read through its compression: with
 * `base64/gzip`, every `{ "format": "base64/gzip", "data": BASE64 }` on the way (the whole
 * state, a stream's state) is the JSON it holds. What does not decompress holds no bookmark.
 */
export function bookmarkIn(api: ApiDescription, state: unknown): unknown {
  let at = unpacked(api, state);
  for (const part of api.state.bookmark.split('.')) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = unpacked(api, (at as Record<string, unknown>)[part]);
  }
  return at;
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
