import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CallStep } from '../model/history.js';
import { findScenario } from '../scenarios/named.js';
import { AdapterLoadError } from '../src/adapter/load.js';
import { execute } from '../src/run/execute.js';
import { CRASH_LOOP_LIMIT, CrashLoopError, killAllConsumers, processConsumer, processStats } from '../src/adapter/process/bridge.js';
import { ConsumerUnrunnableError } from '../src/adapter/errors.js';
import { EXIT } from '../src/cli.js';
import { renderFailure } from '../src/report/failure.js';
import { lineLimitText } from '../src/adapter/process/lines.js';
import { cli, HANG_MS, killSighted, pidsGone, sight, small, stillRuns, BUILT_CLI, type Sighting } from './support.js';

/**
 * Consumer processes written to break the harness (test/fixtures/hostile/process/): each
 * must end in a clear error or verdict within a bound, and leave no process behind, checked
 * by pid.
 */
const HOSTILE = 'test/fixtures/hostile/process';
const scratch = mkdtempSync(join(tmpdir(), 'tidemark-hostile-'));
let files = 0;
const pidFile = (): string => join(scratch, `pids-${files++}`);

/** The pids in a fixture's pid file (the last number of each line). */
function pidsIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(l.split(' ').at(-1)));
}

/** Processes a fixture deliberately leaves outside the harness's reach, killed after the tests. */
const strays: Sighting[] = [];
afterAll(() => {
  for (const s of strays) killSighted(s);
});

describe('hostile consumer processes', () => {
  it(`a consumer that dies at start every time stops the run after ${CRASH_LOOP_LIMIT} incarnations, once, quoting its stderr`, async () => {
    const pids = pidFile();
    const consumer = await processConsumer(`python3 ${HOSTILE}/crash-on-start.py ${pids}`);
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain(`is crash-looping: ${CRASH_LOOP_LIMIT} incarnations in a row ended on their own without making anything durable`);
    expect((error as Error).message).toContain(
      'The last one: the consumer process exited with code 1 before its first world call; stderr tail: crash-on-start: cannot open /etc/ledger/config.toml',
    );
    // The probe and five incarnations, not thousands.
    expect(pidsIn(pids)).toHaveLength(1 + CRASH_LOOP_LIMIT);
    // The run is over for this consumer: the next world fails at once, without a process.
    await expect(execute(small('failed-event-holds-watermark'), consumer)).rejects.toBe(error);
    expect(pidsIn(pids)).toHaveLength(1 + CRASH_LOOP_LIMIT);
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it('a crash loop in one worker stops the run, and kills the live process of the other worker', async () => {
    const pids = pidFile();
    const consumer = await processConsumer(`python3 ${HOSTILE}/one-worker-crash-loops.py ${pids}`);
    const plan = findScenario('stale-generation-cannot-advance')!.plan;
    expect(plan.workers).toBe(2);
    await expect(execute(plan, consumer)).rejects.toThrow(/crash-looping: .*stderr tail: w2: cannot bind port 9000: address in use/);
    const lines = readFileSync(pids, 'utf8');
    expect(lines).toMatch(/^w1 \d+$/m);
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it('a consumer printing null, or any JSON value that is not an object, gets a protocol error naming it, not a harness crash', async () => {
    const pids = pidFile();
    const consumer = await processConsumer(`python3 ${HOSTILE}/prints-value.py ${pids}`);
    // Four incarnations (a start and a lease each), one value each, and the start of a fifth: fewer than a crash loop.
    const run = await execute({ ...small('failed-event-holds-watermark'), budget: { adversity: 9, drain: 1 } }, consumer);
    const threw = run.history.steps.flatMap((s) => (s.kind === 'life' && s.event.kind === 'threw' ? [s.event.message] : []));
    expect(threw).toHaveLength(4);
    ['null', '5', '"text"', '[1,2]'].forEach((shown, i) => expect(threw[i]).toContain(`protocol error: message must be an object, got ${shown}`));
    // The fifth protocol error in a row, with nothing durable made, is a crash loop: the run stops there.
    const again = await processConsumer(`python3 ${HOSTILE}/prints-value.py ${pids}`);
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, again).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toMatch(/The last one: protocol error: message must be an object, got (null|5|"text"|\[1,2\]|true) /);
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it('a consumer writing a line nested too deeply to check gets a protocol error, not a harness crash', async () => {
    const consumer = await processConsumer(`node ${HOSTILE}/deep-message.mjs`);
    const error = await execute(small('failed-event-holds-watermark'), consumer).catch((e: unknown) => e);
    // Every incarnation breaks the protocol before its first world call: a crash loop, the consumer's fault.
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain('The last one: protocol error: message is nested too deeply to check (schema/protocol.schema.json): [[[[');
  });

  it(`a consumer writing a line without end gets a protocol error naming the ${lineLimitText()} limit, not a harness out of memory; every time, a crash loop`, async () => {
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`node ${HOSTILE}/endless-line.mjs`)).catch((e: unknown) => e);
    // Before the limit, the harness buffered the line until V8 refused it: RangeError: Invalid string length, a harness error.
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain(`The last one: protocol error: a line of more than ${lineLimitText()} on its protocol channel: tidemark reads a line of at most ${lineLimitText()}`);
    expect((error as Error).message).toContain('endless-line: started, writing without a newline');
  });

  it('a consumer making a second call before the first one\'s reply gets a protocol error, not a stall; every time, a crash loop', async () => {
    const consumer = await processConsumer(`node ${HOSTILE}/two-in-flight.mjs`, { stallMs: 5_000 });
    // Few enough steps for four incarnations at most: fewer than a crash loop.
    const run = await execute({ ...small('failed-event-holds-watermark'), budget: { adversity: 4, drain: 1 } }, consumer);
    // No stall: the verdict below is a failure, not unknown.
    const threw = run.history.steps.flatMap((s) => (s.kind === 'life' && s.event.kind === 'threw' ? [s.event.message] : []));
    // Every incarnation: the two lines come in one write, so the second is always read first.
    // (Its stderr line may not have been read yet when the error is raised: it is not asserted.)
    expect(threw.length).toBeGreaterThan(2);
    for (const message of threw) {
      expect(message).toContain('protocol error: call load (call 2) while lease (call 1) has no reply yet; protocol 1 has one call in flight: wait for each reply before the next call');
    }
    expect(run.result.verdict.status).toBe('fail');
    // A whole scenario: once five in a row have died so, the run stops, naming the protocol error.
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`node ${HOSTILE}/two-in-flight.mjs`, { stallMs: 5_000 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain('The last one: protocol error: call load (call 2) while lease (call 1) has no reply yet');
  });

  it('the Node client refuses a second call while one is in flight, in the consumer\'s own stack', async () => {
    const consumer = await processConsumer('node test/fixtures/process/two-at-once.mjs', { stallMs: 5_000 });
    // Few enough steps for fewer incarnations than a crash loop, however the machine's timing
    // falls. Each incarnation is a start and a lease, then dies: with 7 steps the third dies
    // on its own and the fourth is stopped at its start by the budget, so at most the drain's
    // one can add a fourth death in a row. With 8, the fourth could die on its own before the
    // budget stop was seen, and the drain's a fifth: a crash loop (seen once on a loaded CI run).
    const run = await execute({ ...small('failed-event-holds-watermark'), budget: { adversity: 7, drain: 1 } }, consumer);
    // No stall: the verdict below is a failure, not unknown.
    const threw = run.history.steps.flatMap((s) => (s.kind === 'life' && s.event.kind === 'threw' ? [s.event.message] : []));
    expect(threw.length).toBeGreaterThan(2);
    for (const message of threw) expect(message).toMatch(/stderr tail: .*run threw: Error: protocol 1 has one call in flight: await each world call before making the next$/s);
    expect(run.result.verdict.status).toBe('fail');
  });

  it.each([
    ['python3', 'lease-then-exit.py', 'ledger.db is locked'],
    ['node', 'lease-then-exit.mjs', 'SQLITE_CANTOPEN'],
  ])('a consumer that takes its lease and then exits 1 (%s) is a crash loop, stopped within 50 incarnations', async (interpreter, file, why) => {
    const pids = pidFile();
    const consumer = await processConsumer(`${interpreter} ${HOSTILE}/${file} ${pids}`);
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain('The last one: the consumer process exited with code 1 after lease (call 1)');
    expect((error as Error).message).toContain(why);
    // The probe and the incarnations of the loop; before, a scenario started it thousands of
    // times. The loop's own incarnations, and one more at most: when the world ends its phase
    // on the step that answers a lease, whether the incarnation's exit or the world's end is
    // seen first is a matter of timing, and one ended by the world is not counted in the loop
    // (it was working), which then starts over. Under load that happened: 7 processes, not 6.
    const started = pidsIn(pids).length;
    expect(started).toBeGreaterThanOrEqual(1 + CRASH_LOOP_LIMIT);
    expect(started).toBeLessThanOrEqual(1 + CRASH_LOOP_LIMIT + 1);
    // A spare is started only while no incarnation in a row has died: once when the command
    // first calls the world, and once more if the count started over. Never one per death.
    expect(processStats(consumer)!.fromSpare).toBeLessThanOrEqual(2);
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it.each([
    ['a commit of no operation', 'empty', 'commit'],
    ['the same watermark committed again', 'watermark', 'commit'],
    ['the same effect emitted again', 'emit', 'emit'],
  ])('a consumer whose one call in every incarnation keeps nothing new (%s) is a crash loop: a call that changes no durable state is no progress', async (_, mode, method) => {
    const pids = pidFile();
    const consumer = await processConsumer(`node ${HOSTILE}/keeps-nothing-then-exit.mjs ${pids} ${mode}`);
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, consumer).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrashLoopError);
    expect((error as Error).message).toContain(`The last one: exited with code 0 after ${method} (call 1)`);
    // The probe, the first incarnation (whose call did change the store, the first time), the
    // loop's incarnations after it and one more at most, as above: not one per step of the budget.
    expect(pidsIn(pids).length).toBeLessThanOrEqual(1 + 1 + CRASH_LOOP_LIMIT + 1);
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it('a consumer that kills the checking process before it first told its supervisor of any process does not outlive the run', async () => {
    const pids = pidFile();
    const r = spawnSync(process.execPath, [BUILT_CLI, 'check', '--command', `node ${HOSTILE}/kills-checker.mjs ${pids}`, '--scenario', 'stale-token', '--regressions', join(scratch, 'kills-checker.json')], {
      encoding: 'utf8',
      timeout: HANG_MS,
      killSignal: 'SIGKILL',
    });
    // Looked at first: a failure below must not leave its processes running for the rest of the suite.
    const left = await pidsGone(pidsIn(pids));
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(r.status, r.stdout + r.stderr).toBe(EXIT.unknown);
    expect(r.stderr).toContain('was killed by SIGKILL');
    // The probe for its hello and the first incarnation, which killed the checking process
    // (and the spare, when the harness had started it by then). Before the supervisor knew the
    // run's mark from the start, one of them was left running in most runs: the checking
    // process tells of its processes every 200 ms, and had not told of these yet.
    expect(pidsIn(pids).length).toBeGreaterThanOrEqual(2);
    expect(left).toEqual([]);
  });

  it('through the CLI, the lease-then-exit loop is a usage error (exit 3) naming the loop, not a run that never ends', async () => {
    const r = await cli('check', '--command', `python3 ${HOSTILE}/lease-then-exit.py ${pidFile()}`, '--scenario', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('is crash-looping: 5 incarnations in a row ended on their own without making anything durable');
  });

  it('a blackbox consumer answering each inspect twice: a protocol error that stops the run, as docs/protocol.md says', async () => {
    const error = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`python3 ${HOSTILE}/answers-twice.py`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConsumerUnrunnableError);
    expect((error as Error).message).toMatch(/^protocol error: an inspection answers inspect "i0" a second time/);
  });

  it('a consumer speaking another protocol version is refused at load, naming both versions', async () => {
    const error = await processConsumer(`python3 ${HOSTILE}/old-protocol.py`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AdapterLoadError);
    expect((error as Error).message).toContain('it speaks protocol 2; this tidemark speaks protocol 1');
  });

  it('a key resume without a key over the bridge is a bad-request naming the field, recorded as MALFORMED, no deadlock', async () => {
    const pids = pidFile();
    const consumer = await processConsumer(`python3 ${HOSTILE}/key-without-key.py ${pids}`);
    const run = await execute(small('failed-event-holds-watermark'), consumer);
    const malformed = run.history.steps.find((s): s is CallStep => s.kind === 'call' && s.call.kind === 'malformed');
    expect(malformed?.call).toEqual({ kind: 'malformed', method: 'fetch', problem: 'resume.key must be an array of finite numbers for key-gt, got undefined' });
    expect(malformed?.outcome).toEqual({ kind: 'error', code: 'bad-request' });
    // The consumer got the error as a reply, and said so.
    const claim = run.history.steps.find((s): s is CallStep => s.kind === 'call' && s.call.kind === 'claim');
    expect(claim?.call).toEqual({ kind: 'claim', claim: { kind: 'failed', reason: 'bad-request: fetch: resume.key must be an array of finite numbers for key-gt, got undefined' } });
    expect(renderFailure({ consumer: 'key-without-key', execution: run, replay: '-' })).toContain('MALFORMED fetch: resume.key must be an array');
    expect(await pidsGone(pidsIn(pids))).toEqual([]);
  });

  it('killAllConsumers, as a signal handler calls it, kills every consumer process group and removes the blackbox stores', async () => {
    const pids = pidFile();
    const consumer = await processConsumer(`python3 ${HOSTILE}/sleeps.py ${pids}`, { stallMs: 3000 });
    const world = execute(small('failed-event-holds-watermark'), consumer).then(
      (run) => run.result.verdict.status,
      (error: unknown) => error,
    );
    for (let i = 0; !/^store /m.test(existsSync(pids) ? readFileSync(pids, 'utf8') : ''); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const first = readFileSync(pids, 'utf8');
    const store = /^store (.+)$/m.exec(first)![1]!;
    expect(existsSync(store)).toBe(true);
    expect(killAllConsumers()).toBeGreaterThan(0);
    expect(await pidsGone(pidsIn(pids).filter(Number.isInteger))).toEqual([]);
    expect(existsSync(store)).toBe(false);
    // The world itself goes on to its end (a real handler exits instead); nothing of it is left.
    expect(await world).toBe('unknown');
    expect(await pidsGone(pidsIn(pids).filter(Number.isInteger))).toEqual([]);
  });

  it('grandchildren holding the pipes do not keep the harness alive after the verdict; those in its group, and those that left it carrying its mark, are killed', async () => {
    const pids = pidFile();
    const regressions = join(scratch, 'grandchildren.json');
    const cli = spawn(
      process.execPath,
      [BUILT_CLI, 'check', '--command', `python3 ${HOSTILE}/grandchildren.py ${pids}`, '--scenario', 'failed-event-holds-watermark', '--regressions', regressions],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    cli.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    cli.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        cli.kill('SIGKILL');
        resolve(null);
      }, HANG_MS);
      cli.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const lines = existsSync(pids) ? readFileSync(pids, 'utf8') : '';
    const escaped = [...lines.matchAll(/^setsid (\d+)$/gm)].map((m) => Number(m[1]));
    const clean = [...lines.matchAll(/^clean (\d+)$/gm)].map((m) => Number(m[1]));
    const cleanSeen = clean.map(sight);
    strays.push(...escaped.map(sight), ...cleanSeen);
    // The grandchildren sleep 600 s; the harness must not wait on the pipes they hold. That it
    // did not is shown by the work, not the clock: the one with a clean environment is still
    // alive below.
    expect(code, out).not.toBeNull();
    expect(out).toMatch(/verdict: \w+/);
    const grouped = [...lines.matchAll(/^group (\d+)$/gm)].map((m) => Number(m[1]));
    expect(grouped.length).toBeGreaterThan(0);
    expect(await pidsGone(grouped)).toEqual([]);
    // What setsid escapes (docs/protocol.md): the group's SIGKILL; its pipes were let go, and
    // it carries the process's mark in its environment, by which it is killed all the same.
    expect(escaped.length).toBeGreaterThan(0);
    expect(await pidsGone(escaped)).toEqual([]);
    // What escapes both (src/adapter/process/marks.ts): a process started with a clean environment.
    expect(clean.length).toBeGreaterThan(0);
    expect(cleanSeen.some(stillRuns)).toBe(true);
  });
});
