/**
 * A Singer tap, unmodified, through `tidemark check --singer CMD --api FILE`: the example tap
 * passes, its buggy twin is caught with the right anomaly and its printed replay gives the
 * same history, a bad API description is a usage error naming the field, a connector that
 * says nothing a platform can use is unknown with the reason, and an interrupt leaves no
 * connector process behind. Every connector here is a real process, killed for real.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { watchdogMs } from '../src/cli/supervisor.js';
import { lineLimitText } from '../src/adapter/process/lines.js';
import { argvOf, cli, HANG_MS, killSighted, sight, stillRuns, BUILT_CLI } from './support.js';
import type { SourceEvent } from '../model/event.js';
import { ev, plan } from '../scenarios/named.js';
import { readApi } from '../src/connector/api.js';
import { connectorConsumer } from '../src/connector/consumer.js';
import { execute } from '../src/run/execute.js';

const API = 'examples/singer/api.json';
const TAP = 'python3 examples/singer/tap_events.py';
const BUGGY = 'python3 examples/singer/tap_events_buggy.py';
const tmp = mkdtempSync(join(tmpdir(), 'tidemark-connector-'));

const hashOf = (out: string): string | undefined => /History sha256 ([0-9a-f]{64})/.exec(out)?.[1];

describe('the example Singer tap', () => {
  // Every named scenario its API allows, and a few generated worlds: each world is several
  // sync attempts, each a Python start (about 0.3 s of CPU here); what generated worlds add
  // here is the tap meeting the generator's shapes at all, not a soak.
  it('passes the scenarios its API allows and generated worlds, each incarnation a real process', async () => {
    const r = await cli('check', '--singer', TAP, '--api', API, '--runs', '3', '--seed', '7');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toContain('pass     ties-across-page-boundary (R1 R6)');
    expect(r.out).toContain('pass     crash-after-page-before-next-fetch (R8 R9)');
    expect(r.out).toMatch(/scenarios: 12 of 12 passed, 5 skipped/);
    expect(r.out).toMatch(/generated worlds: pass after 3 worlds \([1-9]\d* world calls\)/);
    expect(r.out).toMatch(/verdict: pass$/);
  });
});

describe('its buggy twin, one second past the newest record in its STATE', () => {
  it('is caught as a premature watermark, and the printed replay gives the same history', async () => {
    const r = await cli('check', '--singer', BUGGY, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  singer-tap: premature-watermark');
    // The bookmark 00:00:43 claims every record before it, and e42b, at 00:00:42, was not yet read.
    expect(r.out).toContain('committed the watermark 43 (exclusive) while e42b at 42#e42b had no durable outcome');
    // The tap's own log lines (on stderr) are in the failure text, for each sync attempt.
    expect(r.out).toMatch(/Connector output \(.*\):\n\s+w1#1\s+stderr: INFO syncing events from the beginning\n\s+w1#2\s+stderr: INFO syncing events from 2024-01-01T00:00:4\d\.000Z/);
    const replay = /Replay: (npx tidemark replay .*)$/m.exec(r.out)?.[1];
    expect(replay).toBe(`npx tidemark replay --singer '${BUGGY}' --api ${API} --scenario ties-across-page-boundary`);
    const again = await cli(...argvOf(replay as string));
    expect(again.code, again.out + again.err).toBe(EXIT.fail);
    expect(hashOf(again.out)).toBe(hashOf(r.out));
    expect(hashOf(r.out)).toBeDefined();
  });
});

describe('a bookmark finer than a millisecond', () => {
  const tap = (digits: string): string => `node test/fixtures/connector/bookmark-digits.mjs ${digits}`;

  it('is the instant its digits name: microseconds of zeros are the newest record, and the tap passes', async () => {
    const r = await cli('check', '--singer', tap('000'), '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
  });

  it('a microsecond past the newest record claims its ties done: a premature watermark (read as a Date, it was the record itself)', async () => {
    const r = await cli('check', '--singer', tap('001'), '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    // 00:00:42.000001, exclusive, claims every record at 42: e42b, on the next page, was not yet read.
    expect(r.out).toContain('committed the watermark 42 (inclusive) while e42b at 42#e42b had no durable outcome');
    // And the next sync's since of 42.000001 starts after 42, as the real API would.
    expect(r.out).toMatch(/fetch key >= 4[34], limit/);
  });
});

describe('a lookback window: the tap reads again, on every sync, what lies that far behind its bookmark', () => {
  // An API whose late records land up to 5 s behind the newest (a replay window), and the
  // example tap with a lookback of 10 s, described as examples/singer/api-lookback.json does.
  // ordering-field-change moves a record 3 s behind the newest once the tap has read past it.
  const LOOKBACK_API = 'examples/singer/api-lookback.json';
  let variants = 0;
  const described = (change: (api: { state: Record<string, unknown>; config: { values: Record<string, unknown> } }) => void): string => {
    const api = JSON.parse(readFileSync(LOOKBACK_API, 'utf8'));
    change(api);
    const file = join(tmp, `api-lookback-${variants++}.json`);
    writeFileSync(file, JSON.stringify({ ...api, $schema: undefined }));
    return file;
  };
  const scenario = (api: string, ...options: string[]): Promise<{ code: number | null; out: string; err: string }> => cli('check', '--singer', TAP, '--api', api, ...options, '--scenario', 'ordering-field-change');

  it('stated in the description, its bookmark claims only what lies the lookback behind it: the tap passes', async () => {
    const r = await scenario(LOOKBACK_API);
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toContain('pass     ordering-field-change (R1 R10)');
  });

  it('left out of the description, the bookmark claims the late record done: a premature watermark, as the bookmark alone says', async () => {
    const r = await scenario(described((api) => delete api.state.lookback));
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('committed the watermark 50 (exclusive) while e45@2 at 47#e45 had no durable outcome');
  });

  it('a since clamped to a start date before which nothing lies is no shorter lookback: the tap passes', async () => {
    // Nothing lies before 2024-01-01T00:00:00Z, the first key: a bookmark less than the
    // lookback after it asks from there, as max(bookmark - lookback, start_date) does.
    const r = await cli('check', '--singer', TAP, '--api', LOOKBACK_API, '--option', 'start_date=2024-01-01T00:00:00.000Z', '--runs', '3', '--seed', '7');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
  });

  it('stated but not done (the tap asks from its bookmark itself): not judged by the weaker claim, and the reason names the field', async () => {
    // Judged by bookmark less lookback, a bug the bookmark alone shows would pass.
    const r = await scenario(LOOKBACK_API, '--option', 'lookback_seconds=0');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.out + r.err).toContain('the API description says the connector reads again 10 s behind its bookmark (state.lookback)');
    expect(r.out + r.err).toMatch(/but it asked updated_since=2024-01-01T00:00:\d\d\.000Z, which starts after that/);
  });

  it('stated where no late record comes, it still must be done: a tap that claims its ties done one second early is not passed for the lookback it says it has', async () => {
    const r = await cli('check', '--singer', BUGGY, '--api', described((api) => Object.assign(api, { source: undefined })), '--option', 'lookback_seconds=0', '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.out + r.err).toContain('set state.lookback to what the connector reads again');
  });

  it('shorter than the API puts late records back (2 s for 5 s): what it claims covers the late record, a premature watermark', async () => {
    const r = await scenario(described((api) => ((api.state.lookback = 2), (api.config.values.lookback_seconds = 2))));
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('committed the watermark 48 (exclusive) while e45@2 at 47#e45 had no durable outcome');
  });
});

describe('an API that pages a since query by page number', () => {
  it('serves page N of the query from where since starts: a tap walking the pages of its bookmark passes (it looped on page 1 while the page number was ignored beside since)', async () => {
    const r = await cli('check', '--singer', 'node test/fixtures/connector/since-page.mjs', '--api', 'test/fixtures/connector/api-since-page.json', '--runs', '3', '--seed', '3');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toMatch(/generated worlds: pass after 3 worlds/);
  });
});

describe('a newest-first API: each sync reads from the top down to its bookmark', () => {
  const API_NF = 'test/fixtures/connector/api-newest-first.json';
  const tap = (when: 'end' | 'page' | 'exact'): string => `node test/fixtures/connector/newest-first.mjs ${when}`;

  it('a tap that saves its bookmark once the read has come down to it passes: its clean exit there is its caught-up claim', async () => {
    // It never reads the last page after its first sync: the read is complete where it meets
    // what its bookmark covers (it was failed for liveness, its exits never taken as a claim).
    const r = await cli('check', '--singer', tap('end'), '--api', API_NF, '--scenario', 'crash-before-first-effect');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toContain('pass     crash-before-first-effect (R3 R4 R6)');
  });

  it('one that stops at the very record its bookmark names (ties with it sort below it, and were read) passes: the page at its bookmark\'s key ends the read', async () => {
    // Two records tie at 42, pages of 2: the drain's first page holds the bookmark's own
    // record and nothing it covers. Its exits were never a claim, and it failed for liveness.
    const consumer = connectorConsumer('singer', tap('exact'), readApi(API_NF));
    const tie = (id: string): SourceEvent => ({ id, version: 1, key: [42], attrs: { kind: 'order' }, payload: `${id}:order` });
    const world = plan([ev(41), tie('e42a'), tie('e42b')], [], { source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' }, order: 'newest-first' } });
    const { result } = await execute(world, consumer);
    expect(result.verdict.status).toBe('pass');
  });

  it('one that saves it after every page claims the older records below the page before it reads them: a premature watermark', async () => {
    const r = await cli('check', '--singer', tap('page'), '--api', API_NF, '--scenario', 'crash-before-first-effect');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('premature-watermark: step 18 committed the watermark 43 (exclusive) while e41 at 41#e41 had no durable outcome');
  });
});

describe('what cannot be judged, or run', () => {
  it('an API description with a wrong field is a usage error naming it', async () => {
    const api = JSON.parse(readFileSync(API, 'utf8')) as { cursor: Record<string, unknown> };
    api.cursor.format = 'iso-8601';
    const file = join(tmp, 'bad-api.json');
    writeFileSync(file, JSON.stringify(api));
    const r = await cli('check', '--singer', TAP, '--api', file, '--scenario', 'ties-across-page-boundary');
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(`--api ${file}: cursor.format must be one of "iso8601", "epoch-seconds", "epoch-millis", "date", got "iso-8601"`);
    const missing = await cli('check', '--singer', TAP, '--scenario', 'ties-across-page-boundary');
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.err).toContain('--singer needs --api FILE');
  });

  it('a description whose fields contradict each other is a usage error before anything runs, and so is an option over the base URL', async () => {
    const api = JSON.parse(readFileSync(API, 'utf8')) as { record: Record<string, unknown> };
    api.record.cursor = 'id';
    const file = join(tmp, 'same-field-api.json');
    writeFileSync(file, JSON.stringify(api));
    const r = await cli('check', '--singer', TAP, '--api', file, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.usage);
    expect(r.err).toContain(`--api ${file}: record.cursor is "id", as record.id is`);
    const option = await cli('check', '--singer', TAP, '--api', API, '--option', 'base_url=http://example.com', '--scenario', 'ties-across-page-boundary');
    expect(option.code, option.out + option.err).toBe(EXIT.usage);
    expect(option.err).toContain("--option base_url=...: base_url is the key config.baseUrl names in examples/singer/api.json, where tidemark writes its server's URL");
  });

  it('a bookmark path that matches no STATE the tap writes is unknown, naming the path and what the STATE held', async () => {
    const api = JSON.parse(readFileSync(API, 'utf8')) as { state: Record<string, unknown> };
    api.state.bookmark = 'bookmarks.events.updatedAt';
    const file = join(tmp, 'wrong-bookmark-api.json');
    writeFileSync(file, JSON.stringify(api));
    const r = await cli('check', '--singer', TAP, '--api', file, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toMatch(/the run could not be judged: the bookmark path "bookmarks\.events\.updatedAt" matched no STATE the connector wrote: of the \d+ it wrote after its records, before it caught up, none held a value there/);
    expect(r.err).toContain('(in the first, bookmarks.events in the STATE value has no "updatedAt": its keys are "updated_at")');
    expect(r.err).toContain('set state.bookmark in the API description to where this connector keeps its bookmark');
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it('a bookmark path that names an object is unknown, naming the path, what it held and the value inside it (it was a token-as-watermark)', async () => {
    const api = JSON.parse(readFileSync(API, 'utf8')) as { state: Record<string, unknown> };
    api.state.bookmark = 'bookmarks.events';
    const file = join(tmp, 'object-bookmark-api.json');
    writeFileSync(file, JSON.stringify(api));
    const r = await cli('check', '--singer', TAP, '--api', file, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the run could not be judged: the bookmark path "bookmarks.events" holds an object, not a value: {"updated_at":"2024-01-01T00:00:4');
    expect(r.err).toContain('set state.bookmark to the cursor value inside it: "bookmarks.events.updated_at"');
    expect(r.out).not.toContain('token-as-watermark');
  });

  it('a connector that prints no RECORD or STATE line is unknown, with the reason', async () => {
    const r = await cli('check', '--singer', 'python3 -c "import sys; print(\'starting\', file=sys.stderr)"', '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the run could not be judged: the connector printed no Singer RECORD or STATE line: it exited with code 0');
    expect(r.err).toContain('stderr tail: starting');
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it.each(['stdout', 'stderr'])('a connector writing a line without end on %s is judged in bounded memory: on stdout unknown naming the limit, on stderr a stall quoting its end', async (pipe) => {
    const r = await cli('check', '--singer', `python3 test/fixtures/connector/endless-line.py ${pipe}`, '--api', API, '--scenario', 'ties-across-page-boundary', '--stall-ms', '3000');
    if (pipe === 'stdout') {
      // Before the limit, the line grew until V8 refused it: a harness error (exit 4), RangeError: Invalid string length.
      expect(r.code, r.out + r.err).toBe(EXIT.unknown);
      expect(r.err).toContain(`the run could not be judged: the connector wrote a line of more than ${lineLimitText()} on stdout (last: none yet): tidemark reads a line of at most ${lineLimitText()}`);
    } else {
      // Only the end of stderr is kept: a stall, quoting it.
      expect(r.code, r.out + r.err).toBe(EXIT.unknown);
      expect(r.out).toMatch(/w1#1 sent no call for 3 s; the connector's last: none yet; stderr tail: x{500}/);
    }
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it.each([
    ['same', 'asks for the first page again and again', 'GET /v1/events?limit=2 (x12)', 2],
    ['restart', 'starts over from the first page at the end, writing the records again', 'GET /v1/events?limit=2; a RECORD of e41', 6],
  ])('a connector that loops without progress (%s: it %s) is unknown as a loop (R9) within a bound, with the timeline', async (mode, _what, inputs, served) => {
    const r = await cli('check', '--singer', `python3 test/fixtures/connector/loops.py ${mode}`, '--api', API, '--scenario', 'ties-across-page-boundary');
    // Before the bound, it ran the whole step budget, some 3,500 real requests and records, to a liveness failure (exit 1).
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.out).toMatch(new RegExp(`UNKNOWN  singer-tap: the run could not be judged: incarnation w1#1 stopped calling the world and never returned \\(step \\d+\\): w1#1 made no progress in its last \\d+ inputs \\(requests, RECORD and STATE lines\\), more than the bound of 50 \\+ 2 x the ${served} event version\\(s\\) served to it`));
    expect(r.out).toContain('The connector loops (R9: a repeated or stale page proves no progress). Its last inputs: ');
    expect(r.out).toContain(inputs);
    // The timeline of the loop, ended where the bound was passed.
    expect(r.out).toMatch(/^\s+\d+\s+w1#1\s+hung: stopped calling the world without returning$/m);
    const fetches = r.out.split('\n').filter((l) => /^\s+\d+\s+w1#1\s+fetch /.test(l)).length;
    expect(fetches).toBeGreaterThan(0);
    // The first request, then one more than the bound.
    expect(fetches).toBeLessThanOrEqual(1 + 50 + 2 * served + 1);
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it('a daemon a connector leaves outside its process group (a double fork into a new session) is killed when its attempt ends, found by its mark', async () => {
    const pidfile = join(tmp, 'escaped.pids');
    const r = await cli('check', '--singer', `python3 test/fixtures/connector/escapes.py ${pidfile}`, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('stderr tail: INFO left a daemon behind');
    const daemons = readFileSync(pidfile, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(daemons.length).toBeGreaterThan(0);
    // Before the mark, each daemon slept its ten minutes: the group's SIGKILL never reached it.
    expect(daemons.filter((pid) => stillRuns(sight(pid)))).toEqual([]);
  });

  it('an exception in the platform\'s own code is a harness error with its stack, exit 4, not the connector\'s failed attempt retried', async () => {
    const started = join(tmp, 'deep-state.started');
    // A STATE nested 200,000 deep: tidemark's own code cannot walk it (RangeError), which is tidemark's failure to fix.
    const r = await cli('check', '--singer', `python3 test/fixtures/connector/deep-state.py ${started}`, '--api', API, '--scenario', 'ties-across-page-boundary');
    // Before, each attempt's RangeError was recorded as the connector's and retried: 388 attempts, 8 minutes, a liveness failure (exit 1).
    expect(r.code, r.out + r.err).toBe(EXIT.error);
    expect(r.err).toContain("tidemark: harness error: HarnessError: the Singer platform, running sync attempt w1#1 failed, in tidemark's own code: RangeError: Maximum call stack size exceeded");
    expect(r.err).toMatch(/Caused by: RangeError: Maximum call stack size exceeded\n\s+at /);
    expect(r.out).not.toContain('verdict: fail');
    expect(readFileSync(started, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('the failure of a connector that wrote a thousand records stays readable: like steps folded, the witnesses told kept, the story whole', async () => {
    const r = await cli('check', '--singer', 'python3 test/fixtures/connector/phantoms.py', '--api', API, '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  singer-tap: phantom-effect');
    const timeline = r.out.slice(r.out.indexOf('Timeline ('), r.out.indexOf('If this fails'));
    // Before, a line per step: 2,034 lines, every phantom record a line of its own.
    expect(timeline.split('\n').length).toBeLessThan(60);
    // The witnesses of the findings told in full, as they are; the rest folded and counted.
    for (const id of ['p0000', 'p0001', 'p0002']) expect(timeline).toMatch(new RegExp(`^  »\\s+\\d+  w1#2   emit effect ${id} at key 41 -> ok$`, 'm'));
    expect(timeline).toMatch(/\.\.\. 995 more steps like the line above: 995 emit \(p0004 to p0998\), 995 marked »$/m);
    // What happened around them is all there: the state, the claim, the next sync.
    expect(timeline).toMatch(/w1#2   claims CAUGHT UP -> ok$/m);
    expect(timeline).toContain('-- drain phase (faults off) --');
  });

  it('a STATE without a value is unknown, saying so (it was named a message Singer does not have)', async () => {
    const r = await cli('check', '--singer', `python3 -c "print('{\\"type\\": \\"STATE\\"}')"`, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the run could not be judged: the connector wrote a STATE whose shape Singer does not define (docs/connectors.md, "What the platform does"): it has no value; the line: {"type": "STATE"}');
  });

  it('a connector that speaks another protocol is unknown, naming it', async () => {
    const airbyte = `python3 -c "print('{\\"type\\": \\"RECORD\\", \\"record\\": {\\"stream\\": \\"events\\", \\"data\\": {}, \\"emitted_at\\": 0}}')"`;
    const r = await cli('check', '--singer', airbyte, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the connector speaks another protocol: its stdout holds an Airbyte RECORD message, not a Singer one (check it with --airbyte)');
    const tidemark = await cli('check', '--singer', 'python3 examples/python/ledger_consumer.py', '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(tidemark.code, tidemark.out + tidemark.err).toBe(EXIT.unknown);
    expect(tidemark.err).toContain('a tidemark protocol message (check it with --command)');
  });
});

describe('the process flags, for a connector', () => {
  it('--stall-ms is honoured: a tap silent for longer is stalled, unknown; the watchdog waits longer than it', async () => {
    const silent = 'python3 -c "import time; time.sleep(3)"';
    const r = await cli('check', '--singer', silent, '--api', API, '--scenario', 'ties-across-page-boundary', '--stall-ms', '300');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.out).toContain('w1#1 sent no call for 0.3 s');
    expect(watchdogMs(['check', '--airbyte', 'node s.mjs', '--stall-ms', '90000'], {})).toBe(100_000);
  });

  it.each([
    ['--hello-ms', '300', '--hello-ms means nothing for a --singer connector: a connector says no hello'],
    ['--kills', 'sampled', '--kills means nothing for a --singer connector: every sync attempt is its own process, killed with SIGKILL'],
    ['--session-memory', '100', '--session-memory means nothing for a --singer connector'],
  ])('%s is refused with exit 3, naming it', async (flag, value, message) => {
    const r = await cli('check', '--singer', TAP, '--api', API, '--scenario', 'ties-across-page-boundary', flag, value);
    expect(r.code, r.out + r.err).toBe(EXIT.usage);
    expect(r.err).toContain(message);
  });
});

describe('an interrupted connector check', () => {
  /**
   * Runs a check of a tap that writes down its pid and waits, ends the run as `end` says once
   * the tap runs, and tells how the command exited and whether the tap outlived it.
   */
  async function interrupt(name: string, end: (supervisor: number) => void): Promise<{ code: number | null; alive: boolean; err: string }> {
    const pidfile = join(tmp, `${name}.pid`);
    const waits = `python3 -c "import os, sys, time; open('${pidfile}', 'w').write(str(os.getpid())); time.sleep(600)"`;
    const child = spawn(process.execPath, [BUILT_CLI, 'check', '--singer', waits, '--api', API, '--scenario', 'ties-across-page-boundary', '--regressions', join(tmp, `${name}.json`)], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: '1' },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const bound = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), HANG_MS);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const written = (): string => (existsSync(pidfile) ? readFileSync(pidfile, 'utf8') : '');
    for (let i = 0; i < HANG_MS / 50 && !/^\d+$/.test(written()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = Number(written());
    expect(pid, err).toBeGreaterThan(1);
    const tap = sight(pid);
    end(child.pid as number);
    const code = await exited;
    clearTimeout(bound);
    let alive = true;
    for (let i = 0; i < 200 && alive; i++) {
      alive = stillRuns(tap);
      if (alive) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (alive) killSighted(tap);
    return { code, alive, err };
  }

  it('kills the connector process on SIGINT and exits 130', async () => {
    const r = await interrupt('sigint', (supervisor) => process.kill(supervisor, 'SIGINT'));
    expect(r.code, r.err).toBe(130);
    expect(r.alive).toBe(false);
  });

  it('kills it when the checking process dies at once, as when the watchdog kills it: the supervisor has it in the registry', async () => {
    const r = await interrupt('killed', (supervisor) => {
      // The checking process is the supervisor's one child; SIGKILL runs none of its exit hooks.
      const checking = Number(readFileSync(`/proc/${supervisor}/task/${supervisor}/children`, 'utf8').trim().split(/\s+/)[0]);
      // The registry reaches the supervisor every 200 ms; the tap is in it from its spawn.
      setTimeout(() => process.kill(checking, 'SIGKILL'), 1000);
    });
    expect(r.code, r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('was killed by SIGKILL');
    expect(r.alive).toBe(false);
  });
});

