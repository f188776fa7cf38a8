#!/usr/bin/env node
// source-faros.mjs: an Airbyte source built on a real connector framework, faros-airbyte-cdk
// (npm), for the same API as source.mjs (examples/airbyte/api.json):
//
//   GET {api_url}/events?updated_after=EPOCH_SECONDS&per_page=N
//   -> {"events": [{"id", "updated_at", "kind", "payload"}, ...]}, next page in a Link header
//
// The framework does the Airbyte side: the `read` command and its flags, the catalog, the
// state file, RECORD, STATE and LOG messages. The source only says how to read the stream.
//
// Timestamps have a resolution of one second, so records share them, and a record can be
// written after a sync in the same second as the newest one it read. `updated_after` is
// exclusive, so the stream asks for the records after one second before its bookmark: it
// reads the newest second again (the destination dedupes by id), and its bookmark claims
// only the records before it (`"inclusive": false` in api-faros.json). It keeps the
// framework's default of no checkpoint within a read (`stateCheckpointInterval` undefined),
// since the API does not promise a page in order: the framework emits the STATE once the
// read is complete, with the newest `updated_at` read.
//
// Install the framework beside it:  npm i faros-airbyte-cdk@0.23 lodash commander faros-js-client@0.7.1
// Check it with tidemark:           npx tidemark check --airbyte "node source-faros.mjs" --api api.json
//
// The framework writes its state gzip-compressed (`{"format": "base64/gzip", "data": ...}`),
// which api.json declares with `"compression": "base64/gzip"` in its `state`.
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { AirbyteSourceBase, AirbyteSourceLogger, AirbyteSourceRunner, AirbyteSpec, AirbyteStreamBase } from 'faros-airbyte-cdk';

export class Events extends AirbyteStreamBase {
  constructor(config, logger) {
    super(logger);
    this.config = config;
  }

  get name() {
    return 'events';
  }

  get primaryKey() {
    return 'id';
  }

  get cursorField() {
    return 'updated_at';
  }

  getJsonSchema() {
    return { type: 'object', properties: { id: { type: 'string' }, updated_at: { type: 'integer' }, kind: { type: 'string' }, payload: { type: 'string' } } };
  }

  /** The newest timestamp read: after the whole read, every record before it has been read. */
  getUpdatedState(current, record) {
    return { updated_at: Math.max(current?.updated_at ?? 0, record.updated_at) };
  }

  /** Where a sync resumes: one second before the bookmark, since more records may have its timestamp. */
  updatedAfter(state) {
    return state.updated_at - 1;
  }

  async *readRecords(_syncMode, _cursorField, _slice, state) {
    const url = new URL('/events', this.config.api_url);
    url.searchParams.set('per_page', String(this.config.per_page ?? 100));
    if (state?.updated_at !== undefined) url.searchParams.set('updated_after', String(this.updatedAfter(state)));
    let next = url.href;
    while (next !== null) {
      const response = await this.get(next);
      const body = await response.json();
      yield* body.events;
      const link = response.headers.get('link');
      next = link ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
    }
  }

  /** GET with retries on 429 and 5xx, after `backoff_ms` (0 in tests). */
  async get(url) {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(url);
      if (response.ok) return response;
      if (!(response.status === 429 || response.status >= 500) || attempt >= (this.config.max_retries ?? 5)) throw new Error(`GET ${url}: HTTP ${response.status}`);
      this.logger.warn(`GET ${url}: HTTP ${response.status}, retrying`);
      await sleep((this.config.backoff_ms ?? 1000) * 2 ** attempt);
    }
  }
}

export class EventsSource extends AirbyteSourceBase {
  get type() {
    return 'events';
  }

  async spec() {
    return new AirbyteSpec({
      connectionSpecification: {
        type: 'object',
        required: ['api_url'],
        properties: {
          api_url: { type: 'string' },
          per_page: { type: 'integer' },
          backoff_ms: { type: 'integer' },
          max_retries: { type: 'integer' },
        },
      },
    });
  }

  async checkConnection(config) {
    try {
      new URL(config.api_url);
      return [true, undefined];
    } catch (error) {
      return [false, error];
    }
  }

  streams(config) {
    return [new Events(config, this.logger)];
  }
}

// Run only as a program: the buggy twin imports the classes above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const logger = new AirbyteSourceLogger();
  new AirbyteSourceRunner(logger, new EventsSource(logger)).mainCommand().parseAsync(process.argv);
}
