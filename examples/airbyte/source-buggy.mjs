#!/usr/bin/env node
// source-buggy.mjs: source.mjs with one realistic bug, which tidemark catches. It checkpoints
// a STATE for every page as the page arrives, "so that a failed sync resumes where it
// stopped", with the newest `updated_at` on the page: before the page's records are written.
// That state claims records done that the destination never received; a sync killed right
// after it resumes past them. tidemark reports a premature-watermark.
//
// What follows is source.mjs's own description.
//
// source.mjs: a small Airbyte source in plain Node (no framework, no dependency), for the
// API that examples/airbyte/api.json describes:
//
//   GET {api_url}/events?updated_after=EPOCH_SECONDS&per_page=N
//   -> {"events": [{"id", "updated_at", "kind", "payload"}, ...]}, next page in a Link header
//
// Timestamps have a resolution of one second, so records share them, and a record can be
// written after a sync in the same second as the newest one it read. `updated_after` is
// exclusive (records after it, never at it), so the source asks for the records after one
// second before its bookmark: it reads the newest second again (the destination dedupes by
// id), and its bookmark claims only the records before it (`"inclusive": false` in
// api.json). It follows the Link header to the end and emits one STATE (per stream) at the
// end of the read, with the newest `updated_at` it read. A failed sync persists nothing and
// is read again from the previous bookmark.
//
// Run as any Airbyte source:  node source.mjs read --config config.json --catalog catalog.json [--state state.json]
// Check it with tidemark:     npx tidemark check --airbyte "node examples/airbyte/source-buggy.mjs" --api examples/airbyte/api.json
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const STREAM = 'events';

function emit(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function log(message) {
  emit({ type: 'LOG', log: { level: 'INFO', message } });
}

function args() {
  const [command, ...rest] = process.argv.slice(2);
  const flags = {};
  for (let i = 0; i < rest.length; i += 2) flags[rest[i].replace(/^--/, '')] = rest[i + 1];
  return { command, flags };
}

/** The stream's bookmark in a per-stream state list, or undefined. */
function bookmarkOf(state) {
  if (!Array.isArray(state)) return undefined;
  const mine = state.find((s) => s.type === 'STREAM' && s.stream?.stream_descriptor?.name === STREAM);
  return mine?.stream?.stream_state?.updated_at;
}

/** GET with retries on 429 and 5xx, after `backoff_ms` (0 in tests). */
async function get(config, url) {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url);
    if (response.ok) return response;
    if (!(response.status === 429 || response.status >= 500) || attempt >= (config.max_retries ?? 5)) {
      throw new Error(`GET ${url}: HTTP ${response.status}`);
    }
    await sleep((config.backoff_ms ?? 1000) * 2 ** attempt);
  }
}

function nextLink(response) {
  const link = response.headers.get('link');
  return link ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
}

/** The state to persist after the whole read: the newest updated_at read. */
function stateAfterRead(newest) {
  emit({ type: 'STATE', state: { type: 'STREAM', stream: { stream_descriptor: { name: STREAM }, stream_state: { updated_at: newest } } } });
}

async function read(config, state) {
  let newest = bookmarkOf(state);
  const first = new URL('/events', config.api_url);
  first.searchParams.set('per_page', String(config.per_page ?? 100));
  // One second back: more records may have the bookmark's timestamp than the last sync read.
  if (newest !== undefined) first.searchParams.set('updated_after', String(newest - 1));
  log(`reading ${STREAM} after ${newest ?? 'the beginning'}`);
  let url = first.href;
  while (url !== null) {
    const response = await get(config, url);
    const body = await response.json();
    onPage(newest, body.events);
    for (const data of body.events) {
      emit({ type: 'RECORD', record: { stream: STREAM, data, emitted_at: 0 } });
      if (newest === undefined || data.updated_at > newest) newest = data.updated_at;
    }
    url = nextLink(response);
  }
  if (newest !== undefined) stateAfterRead(newest);
}

/** When a page arrives: a checkpoint. */
function onPage(newest, records) {
  // BUG: the STATE comes before the page's RECORDs, which are not yet written.
  const pageNewest = records.reduce((n, r) => (n === undefined || r.updated_at > n ? r.updated_at : n), newest);
  if (pageNewest !== undefined) stateAfterRead(pageNewest);
}

const { command, flags } = args();
if (command !== 'read') {
  process.stderr.write(`only read is implemented, got ${command}\n`);
  process.exit(2);
}
const config = JSON.parse(readFileSync(flags.config, 'utf8'));
const state = flags.state ? JSON.parse(readFileSync(flags.state, 'utf8')) : [];
read(config, state).catch((error) => {
  emit({ type: 'TRACE', trace: { type: 'ERROR', emitted_at: 0, error: { message: error.message, failure_type: 'system_error' } } });
  process.exitCode = 1;
});
