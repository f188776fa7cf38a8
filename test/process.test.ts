import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { CallStep, History, LifeStep, Outcome } from '../model/history.js';
import { ALL_SCENARIOS, findScenario } from '../scenarios/named.js';
import { EXIT } from '../src/cli.js';
import { argvOf, cli, small } from './support.js';
import { execute } from '../src/run/execute.js';
import { processConsumer } from '../src/adapter/process/bridge.js';
import { MARK_VARIABLE, runMark } from '../src/adapter/process/marks.js';
import { renderFailure } from '../src/report/failure.js';

/**
 * docs/protocol.md, held to what it promises: consumers in Python (one keeping a SQLite ledger)
 * and plain Node pass through the process bridge; their buggy twins fail with a replay command that
 * reproduces the same history; crashes are real; and a process that misbehaves gets a clear
 * verdict or error quoting its stderr, never a hang, and never outlives the run. Every
 * incarnation here is a real process, so the runs are kept small.
 */
const execFileAsync = promisify(execFile);

/** Every failure printed in full: its history hash and the command that replays it. */
function printedReplays(out: string): { hash: string; replay: string }[] {
  return [...out.matchAll(/History sha256 (\w+)\n\s*Replay: (npx tidemark replay .*)$/gm)].map((m) => ({ hash: m[1]!, replay: m[2]! }));
}

/**
 * Waits until no process this worker's harness started runs the given file: the harness must
 * kill every process it started. Its own are told by the mark every process it starts
 * carries in its environment (src/adapter/process/marks.ts), for the same fixture may be
 * running, rightly, for a test of another file in another worker, or another run of the
 * suite on the machine.
 * For up to 30 s, as pidsGone waits (test/support.ts): a bound against a harness that never
 * kills them, not a timing; the wait ends as soon as they are gone, and on a loaded machine a
 * poll alone can take a second. ps runs without blocking the event loop: the tests here run
 * concurrently, and polls that block it longer than their interval keep Node in its timers
 * phase, so that nothing the harness left to the end of a turn (the sweep after a world that
 * ran to its end) could run until every poll gave up.
 */
async function gone(file: string): Promise<string[]> {
  let left: string[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; ) {
    left = (await execFileAsync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })).stdout
      .split('\n')
      .filter((l) => l.includes(file) && startedHere(Number.parseInt(l, 10)));
    if (left.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return left;
}

/** Whether a process carries a mark of this worker's harness; false once it has ended (a zombie's environment is empty). */
function startedHere(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').some((entry) => entry.startsWith(`${MARK_VARIABLE}=${runMark()}`));
  } catch {
    return false;
  }
}

const outcomes = (history: History): Outcome['kind'][] => history.steps.filter((s): s is CallStep => s.kind === 'call').map((s) => s.outcome.kind);

const PYTHON = 'python3 examples/python/ledger_consumer.py';
const PYTHON_BUGGY = 'python3 examples/python/ledger_consumer_buggy.py';
const NODE = 'node examples/node/consumer.mjs';
const SQLITE = 'python3 examples/python/sqlite_ledger.py';
const SQLITE_BUGGY = 'python3 examples/python/sqlite_ledger_buggy.py';
const FIXTURES = 'test/fixtures/process';

describe.concurrent('correct consumers pass through the process bridge', () => {
  it.each([
    [PYTHON, 'python-ledger', 'at-least-once'],
    [NODE, 'node-ledger', 'at-least-once'],
    [SQLITE, 'sqlite-ledger', 'exactly-once'],
  ])('check --command "%s" exits 0', async (command, name, delivery) => {
    const r = await cli('check', '--command', command, '--runs', '10', '--seed', '1');
    expect(r.err).toBe('');
    expect(r.code, r.out).toBe(EXIT.pass);
    expect(r.out).toContain(`consumer ${name} (--command '${command}'), seed 1, 10 generated worlds`);
    // A blackbox consumer makes its effects in its own store, so the scenarios whose faults
    // sit on effect or commit calls have nothing to land on: untested, never passed.
    expect(r.out).toMatch(delivery === 'exactly-once' ? /scenarios: \d+ of 17 passed, \d+ untested \(their adversity never fired\)/ : /scenarios: 17 of 17 passed$/m);
    expect(r.out).toContain('generated worlds: pass after 10 worlds');
    // The SQLite ledger books effect and completion record in one transaction: exactly-once
    // is claimed, so the duplicate check runs instead of being skipped.
    expect(r.out.includes('check duplicate-effect: untested')).toBe(delivery === 'at-least-once');
    expect(r.out).toMatch(/verdict: pass$/);
  });

  it('crashes are real: the named crash scenarios kill the Python consumer before and after calls, and it recovers', async () => {
    const consumer = await processConsumer(PYTHON);
    const seen = new Set<string>();
    for (const scenario of ALL_SCENARIOS.filter((s) => s.name.startsWith('crash-'))) {
      const run = await execute(scenario.plan, consumer);
      expect(run.result.verdict.status, scenario.name).toBe('pass');
      const kinds = outcomes(run.history);
      for (const k of kinds) seen.add(k);
      // After the crash, a new incarnation (a new process) picked up from durable state.
      const crash = run.history.steps.find((s): s is CallStep => s.kind === 'call' && s.outcome.kind.startsWith('crash'));
      expect(crash, scenario.name).toBeDefined();
      const reborn = run.history.steps.find((s): s is LifeStep => s.kind === 'life' && s.seq > crash!.seq && s.event.kind === 'start' && s.actor.worker === crash!.actor.worker);
      expect(reborn?.actor.incarnation, scenario.name).toBe(crash!.actor.incarnation + 1);
    }
    expect([...seen]).toEqual(expect.arrayContaining(['crash-before', 'crash-after']));
  });

  it('a blackbox process world with two workers is deterministic: the same history twice', async () => {
    const consumer = await processConsumer(SQLITE);
    const plan = findScenario('stale-generation-cannot-advance')!.plan;
    expect(plan.workers).toBe(2);
    const [a, b] = [await execute(plan, consumer), await execute(plan, consumer)];
    expect(a.result.verdict.status).toBe('pass');
    expect(a.history.steps.some((s) => s.kind === 'observed')).toBe(true);
    expect(b.hash).toBe(a.hash);
  });
});

describe.concurrent('buggy consumers fail, and the printed replay reproduces the history', () => {
  it.each([
    [PYTHON_BUGGY, 'python-ledger-buggy'],
    [SQLITE_BUGGY, 'sqlite-ledger-buggy'],
  ])('check --command "%s" exits 1 with premature-watermark', async (command, name) => {
    const r = await cli('check', '--command', command, '--runs', '20', '--seed', '1');
    expect(r.code, r.out).toBe(EXIT.fail);
    expect(r.out).toContain(`FAIL  ${name}: premature-watermark (R6 R7`);
    expect(r.out).toContain('fail     failed-event-holds-watermark');
    // A replay by ID never runs a command: the check points to the replay commands it printed.
    expect(r.out).toContain('each by its replay command printed above (a replay by ID never runs a command: the file is data)');
    expect(r.out).not.toContain('each by its ID with npx tidemark replay ID');
    const replays = printedReplays(r.out);
    expect(replays.length).toBeGreaterThan(0);
    for (const { hash, replay } of replays) {
      expect(replay).toContain(`--command '${command}'`);
      const again = await cli(...argvOf(replay));
      expect(again.code, replay).toBe(EXIT.fail);
      expect(again.out).toContain(`History sha256 ${hash}`);
    }
  });
});

describe.concurrent('misbehaving processes get a clear verdict or error, never a hang', () => {
  it('one that dies before its hello fails the load at once, quoting its stderr', async () => {
    await expect(processConsumer(`python3 -c "import sys; sys.stderr.write('no config file'); sys.exit(4)"`)).rejects.toThrow(
      /exited with code 4 before saying hello; stderr tail: no config file/,
    );
    // The exit itself ended the wait, not the 10 s hello limit: the message says so.
  });

  it('one that exits on its own mid-run (code 3): each incarnation ends quoting its exit and stderr; five in a row are a crash loop', async () => {
    const file = `${FIXTURES}/exits-midrun.py`;
    // Steps for fewer incarnations than a crash loop: the world runs out of budget first.
    const run = await execute({ ...small('failed-event-holds-watermark'), budget: { adversity: 3, drain: 3 } }, await processConsumer(`python3 ${file}`));
    expect(run.result.verdict.status).toBe('fail');
    expect(run.result.verdict.anomalies[0]?.kind).toBe('liveness');
    const text = renderFailure({ consumer: 'exits-midrun', execution: run, replay: '-' });
    expect(text).toContain('threw: Error: the consumer process exited with code 3 after lease (call 1); stderr tail: exits-midrun: out of disk space, giving up');
    // It never makes anything durable: given the steps, it dies five times in a row, and the run stops.
    await expect(execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`python3 ${file}`))).rejects.toThrow(
      /crash-looping: .*The last one: the consumer process exited with code 3 after lease \(call 1\); stderr tail: exits-midrun: out of disk space, giving up/,
    );
    expect(await gone(file)).toEqual([]);
  });

  it('one that prints a line that is not JSON on stdout: a protocol error quoting the line and its stderr', async () => {
    const file = `${FIXTURES}/non-json.py`;
    const run = await execute({ ...small('failed-event-holds-watermark'), budget: { adversity: 3, drain: 3 } }, await processConsumer(`python3 ${file}`));
    expect(run.result.verdict.status).toBe('fail');
    const text = renderFailure({ consumer: 'non-json', execution: run, replay: '-' });
    expect(text).toContain('threw: Error: protocol error: not JSON on stdout: "DEBUG fetched 3 events"; stderr tail: non-json: starting, about to print a debug line on stdout');
    expect(await gone(file)).toEqual([]);
  });

  it('a blackbox one that answers an inspection with an unknown id: exit 3 naming the id, with two workers too', async () => {
    const file = `${FIXTURES}/unknown-inspection.py`;
    for (const scenario of ['failed-event-holds-watermark', 'stale-generation-cannot-advance']) {
      const r = await cli('check', '--command', `python3 ${file}`, '--scenario', scenario);
      expect(r.code).toBe(EXIT.usage);
      expect(r.err).toContain('protocol error: an inspection answers unknown id "bogus"; stderr tail: unknown-inspection: started, will answer inspections with a made-up id');
      expect(await gone(file)).toEqual([]);
    }
  });

  it('one that stalls after start: verdict unknown, naming the stall and quoting its stderr', async () => {
    const file = `${FIXTURES}/stalls.py`;
    // The stall limit counts from the hello: the interpreter's start is under the hello limit.
    const run = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`python3 ${file}`, { stallMs: 2000 }));
    const verdict = run.result.verdict;
    expect(verdict.status).toBe('unknown');
    if (verdict.status !== 'unknown') return;
    expect(verdict.reason).toContain('incarnation w1#1 stopped calling the world and never returned');
    expect(verdict.reason).toContain('w1#1 sent no call for 2 s; last call none yet; stderr tail: stalls: waiting for a lock that is never released');
    expect(await gone(file)).toEqual([]);
  });

  it('two workers that both stall: the same history on every replay, naming the first worker, never a consumer called nondeterministic', async () => {
    // Which of the two runs out of time first depends on when each said its hello, by the
    // clock; before the stall waited for both, 5 of 8 replays were called nondeterministic.
    const hashes = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = await cli('replay', '--command', `python3 ${FIXTURES}/stalls.py`, '--scenario', 'stale-generation-cannot-advance', '--stall-ms', '500');
      expect(r.code, r.err).toBe(EXIT.unknown);
      expect(`${r.out}\n${r.err}`).not.toContain('not deterministic');
      expect(r.out).toContain('w1#1 sent no call for 0.5 s');
      hashes.add(r.out.match(/History sha256 (\w+)/)?.[1] ?? 'none');
    }
    expect([...hashes]).toHaveLength(1);
    expect(await gone(`${FIXTURES}/stalls.py`)).toEqual([]);
  });

  it('one whose processes start slower than the stall limit: judged, not stalled (the hello limit covers the start)', async () => {
    const file = `${FIXTURES}/slow-start.mjs`;
    const run = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`node ${file}`, { stallMs: 1500, warm: false }));
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it('one that says hello again after its start: a protocol error naming it, never a hang', async () => {
    const file = `${FIXTURES}/rehello.mjs`;
    const consumer = await processConsumer(`node ${file}`, { stallMs: 1500 });
    await expect(execute(findScenario('failed-event-holds-watermark')!.plan, consumer)).rejects.toThrow(/protocol error: a second hello; a process says hello once; stderr tail: rehello: hello again/);
    expect(await gone(file)).toEqual([]);
  });

  it('a blackbox one that stalls after a reply: verdict unknown; the harness does not wait on it to inspect', async () => {
    const file = `${FIXTURES}/blackbox-stalls.py`;
    const run = await execute(findScenario('failed-event-holds-watermark')!.plan, await processConsumer(`python3 ${file}`, { stallMs: 3000 }));
    const verdict = run.result.verdict;
    expect(verdict.status).toBe('unknown');
    if (verdict.status !== 'unknown') return;
    expect(verdict.reason).toContain('w1#1 sent no call for 3 s; last call lease (call 1); stderr tail: blackbox-stalls: deadlocked on the ledger lock');
    expect(await gone(file)).toEqual([]);
  });

  it('a blackbox one that never answers inspect: a clear error, its process killed', async () => {
    const file = `${FIXTURES}/blackbox-silent.py`;
    const consumer = await processConsumer(`python3 ${file}`, { stallMs: 5000 });
    await expect(execute(findScenario('failed-event-holds-watermark')!.plan, consumer)).rejects.toThrow(
      /protocol error: no inspection answers inspect i0 within 5000 ms; stderr tail: blackbox-silent: inspect\? never heard of it/,
    );
    expect(await gone(file)).toEqual([]);
  });

  it('one that never says hello: loading fails with exit 3 and a clear message', async () => {
    const file = `${FIXTURES}/no-hello.py`;
    const r = await cli('check', '--command', `python3 ${file}`, '--runs', '1');
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(`tidemark: cannot start consumer process \`python3 ${file}\`: no hello within 10000 ms; stderr tail: no-hello: listening on port 8080`);
    expect(await gone(file)).toEqual([]);
  });
});
