#!/usr/bin/env node
// source-buggy.mjs: source.mjs with one realistic bug, which tidemark catches. It checkpoints
// a STATE after every page, "so that a failed sync resumes where it stopped". With an
// exclusive `updated_after`, a page that ends among records sharing the newest timestamp
// leaves the rest of them behind the bookmark: every later sync skips them. tidemark reports
// a premature-watermark.
//
// What follows is source.mjs's own description.
//
// source.mjs: a small Airbyte source in plain Node (no framework, no dependency), for the
// API that examples/airbyte/api.json describes:
//
//   GET {api_url}/events?updated_after=EPOCH_SECONDS&per_page=N
//   -> {"events": [{"id", "updated_at", "kind", "payload"}, ...]}, next page in a Link header
//
// `updated_after` is exclusive (records after it, never at it), so a bookmark must only ever
// be a timestamp whose every record was read: the source syncs incrementally from its
// bookmark, follows the Link header to the end, and emits one STATE (per stream) at the end
// of the read, with the newest `updated_at` it read. A failed sync persists nothing and is
// read again from the previous bookmark.
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
  if (newest !== undefined) first.searchParams.set('updated_after', String(newest));
  log(`reading ${STREAM} after ${newest ?? 'the beginning'}`);
  let url = first.href;
  while (url !== null) {
    const response = await get(config, url);
    const body = await response.json();
    for (const data of body.events) {
      emit({ type: 'RECORD', record: { stream: STREAM, data, emitted_at: 0 } });
      if (newest === undefined || data.updated_at > newest) newest = data.updated_at;
    }
    onPage(newest);
    url = nextLink(response);
  }
  if (newest !== undefined) stateAfterRead(newest);
}

/** After each page: a checkpoint. */
function onPage(newest) {
  // BUG: the next page may hold more records at `newest`; `updated_after=newest` skips them.
  if (newest !== undefined) stateAfterRead(newest);
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
