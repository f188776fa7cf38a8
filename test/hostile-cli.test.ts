import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verdictOf } from '../src/cli/supervised.js';
import { exitCode, watchdogMs } from '../src/cli/supervisor.js';
import { HANG_MS, BUILT_CLI, leftAndKilled, stillRuns } from './support.js';

/**
 * The `tidemark` command as CI runs it, a real process, against adapters that misbehave the
 * way careless or hostile third-party code does. Whatever the adapter does, the command ends
 * within a bounded time, with an exit code that means what it says (0 only after a printed
 * passing verdict), a message saying what happened, and no process of the run left behind.
 *
 * Only the test of the watchdog sets it short: the others end by their own mechanism, which
 * their messages name, and a short watchdog would race with them on a loaded machine. Each
 * run's time is bounded only against a hang (HANG_MS).
 */
const WATCHDOG_S = 5;
const FIXTURES = 'test/fixtures/hostile';
const SCENARIO = 'failed-event-holds-watermark';
const tmp = mkdtempSync(join(tmpdir(), 'tidemark-hostile-'));
let runs = 0;

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly out: string;
  readonly err: string;
  /** From spawn to exit. */
  readonly ms: number;
  /** Pids the adapter (or the consumer process) wrote down while running. */
  readonly pids: number[];
}

/**
 * Runs the CLI from source as a process of its own group, so that a run that never ends can
 * be killed whole when the bound passes. `whileRunning` is handed the process, to signal it.
 */
function tidemark(args: readonly string[], bound: number, whileRunning?: (pid: number, pidfile: string) => Promise<void>): Promise<Run> {
  const pidfile = join(tmp, `pids-${runs++}`);
  const started = performance.now();
  const child = spawn(process.execPath, [BUILT_CLI, ...args.map((a) => a.replace('PIDFILE', pidfile))], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOSTILE_PIDFILE: pidfile, CI: '1' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const timer = setTimeout(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, bound);
  if (whileRunning) void whileRunning(child.pid as number, pidfile);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      const ms = performance.now() - started;
      clearTimeout(timer);
      // Give the pipes a moment to deliver the last words; a grandchild holding them must not stall the test.
      setTimeout(() => {
        const pids = existsSync(pidfile) ? readFileSync(pidfile, 'utf8').split('\n').filter(Boolean).map((l) => (l.startsWith('{') ? (JSON.parse(l) as { pid: number }).pid : Number(l))) : [];
        resolve({ code, signal, out, err, ms, pids });
      }, 200);
    });
  });
}

/**
 * Waits for pids to disappear (up to 30 s: a loaded machine can be slow to let a killed process
 * go; the wait ends as soon as they are gone), then says which are still running and kills
 * them, so no test leaks them. A zombie has ended; only its parent (here often init) has yet to reap it.
 */
const leftOver = (pids: readonly number[]): Promise<number[]> => leftAndKilled(pids, stillRuns);

const check = (adapter: string, ...more: string[]): string[] => ['check', '--adapter', `${FIXTURES}/${adapter}`, '--scenario', SCENARIO, '--regressions', join(tmp, `r-${runs}.json`), ...more];

/** Raw Node crashes end with the Node version line; tidemark's own messages never do. */
const RAW_CRASH = /^Node\.js v\d+/m;

describe.concurrent('a hostile adapter cannot make `tidemark check` lie, hang or crash', () => {
  it('a factory whose promise never settles: unknown (exit 2) at once, not a silent exit 0', async () => {
    const r = await tidemark(check('never-settling-factory.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('waits on a promise that nothing is left to settle');
    expect(r.err).toContain("the adapter's factory");
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(r.pids).toHaveLength(1);
    expect(left).toEqual([]);
  });

  it("a blackbox store whose open() never settles: unknown (exit 2) at once, naming open()", async () => {
    const r = await tidemark(check('open-never-settles.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain("waits on a promise that nothing is left to settle, during scenario failed-event-holds-watermark of adapter 'test/fixtures/hostile/open-never-settles.ts', inside the adapter's open()");
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(left).toEqual([]);
  });

  it('an adapter that calls process.exit(0): unknown (exit 2), naming where it was called', async () => {
    const r = await tidemark(check('exits-zero.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('process.exit(0)');
    expect(r.err).toContain('exits-zero.ts');
    expect(r.out).not.toContain('verdict: pass');
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(left).toEqual([]);
  });

  it('a passing adapter that leaves an interval open at import: exit 0 right after the verdict', async () => {
    const r = await tidemark(check('interval-at-import.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/verdict: pass\n$/);
    expect(left).toEqual([]);
  });

  it('an incarnation awaiting a one-hour timer: unknown (exit 2), and the timer does not hold the process', async () => {
    const r = await tidemark(check('hour-timer.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.out).toContain('stopped calling the world and never returned');
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(left).toEqual([]);
  });

  it('a synchronous infinite loop: the watchdog ends it as unknown (exit 2), naming the adapter and the last call', async () => {
    const r = await tidemark(check('sync-loop.ts', '--watchdog', String(WATCHDOG_S)), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`watchdog: no progress for ${WATCHDOG_S} s`);
    expect(r.err).toContain("adapter 'test/fixtures/hostile/sync-loop.ts'");
    expect(r.err).toContain('last world call: w1#1 load');
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(r.pids).toHaveLength(1);
    expect(left).toEqual([]);
  });

  it.each([
    ['unhandled-rejection.ts', 'stray rejection from the adapter', 'an unhandled rejection'],
    ['throws-in-timer.ts', 'thrown in a timer by the adapter', 'an uncaught exception'],
  ])('%s: unknown (exit 2) with the stack, never a raw crash with the fail code', async (adapter, message, kind) => {
    const r = await tidemark(check(adapter), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(kind);
    expect(r.err).toContain(message);
    expect(r.err).toContain(`${FIXTURES}/${adapter}`);
    expect(r.err).not.toMatch(RAW_CRASH);
    expect(r.out).toMatch(/verdict: unknown\n$/);
    expect(left).toEqual([]);
  });
});

describe.concurrent('the exit code is the printed verdict`s, told over a channel the adapter is not given', () => {
  it('a one-line forgery at import, process.send({ t: "done", code: 0, verdict: "pass" }), is ignored: the failing run exits 1 after its verdict', async () => {
    // The adapter waits at import after its forgery, three seconds longer than the grace a
    // supervisor that took the forged message would give the run to end.
    const r = await tidemark(check('forges-done.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/verdict: fail\n$/);
    expect(r.err).toContain("tidemark: ignored 1 message to the supervisor without this run's key");
    expect(left).toEqual([]);
  });

  it("forged messages between check --jobs and its jobs (a failure at world 0, without the key) stop no job: the run passes, as it does alone", async () => {
    // Were either forgery taken, a job would stop past world 0 with no failure found in any,
    // and the merge would refuse the run (exit 4).
    const r = await tidemark(['check', '--adapter', `${FIXTURES}/forges-bound.ts`, '--runs', '20', '--seed', '11', '--jobs', '2', '--regressions', join(tmp, `r-${runs}.json`)], HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/generated worlds: pass after 20 worlds/);
    expect(r.out).toMatch(/verdict: pass\n$/);
    expect(left).toEqual([]);
  });

  it('an adapter that listens to the messages its job of check --jobs is sent cannot speak for the job with what it hears: the run fails as one process fails it', async () => {
    // Seed 77 first fails at world 13 (job 2's) and next at 18 (job 1's): whichever job fails
    // first, the other is told, and its adapter speaks for it with the key of that message (a
    // failure at world 0, a passing verdict), then holds it past the grace a job has after its
    // verdict. Taken as the job's word, the job would be killed (exit 2). A run whose jobs
    // started so far apart that one had finished before the other failed told nobody, and is
    // run again: every run is judged, and one must have had the forgery tried.
    let heard = '';
    for (let attempt = 0; attempt < 5 && heard === ''; attempt++) {
      const told = join(tmp, `pids-${runs}.bound`);
      const r = await tidemark(['check', '--adapter', `${FIXTURES}/steals-peer-key.ts`, '--runs', '300', '--seed', '77', '--jobs', '2', '--regressions', join(tmp, `r-${runs}.json`)], HANG_MS);
      const left = await leftOver(r.pids);
      expect(r.code, r.err).toBe(1);
      expect(r.out).toMatch(/generated worlds: fail after 14 worlds/);
      expect(r.out).toMatch(/verdict: fail\n$/);
      expect(left).toEqual([]);
      heard = existsSync(told) ? readFileSync(told, 'utf8') : '';
    }
    expect(heard).toMatch(/"at":(13|18)/);
  });

  it("an adapter that rewrites the checking process's own last message cannot turn a failure into exit 0", async () => {
    const r = await tidemark(check('rewrites-done.ts'), HANG_MS);
    const left = await leftOver(r.pids);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/verdict: fail\n$/);
    expect(left).toEqual([]);
  });

  it.each([
    ['reference', 0, /^PASS {2}reference/m],
    ['skips-failed-event', 1, /^FAIL {2}skips-failed-event/m],
  ])('a supervised replay of %s exits %i, the code of the headline it printed', async (consumer, code, headline) => {
    const r = await tidemark(['replay', '--consumer', consumer, '--scenario', SCENARIO], HANG_MS);
    expect(r.code, r.err).toBe(code);
    expect(r.out).toMatch(headline);
  });
});

describe('the exit code from what the checking process reported', () => {
  it('is the verdict`s; a judging command that printed none is unknown; a usage or harness error stands', () => {
    expect(exitCode('check', 0, 'pass')).toEqual({ code: 0 });
    expect(exitCode('check', 0, 'fail')).toEqual({ code: 1 });
    expect(exitCode('check', 1, 'error')).toEqual({ code: 4 });
    expect(exitCode('check', 0, null).code).toBe(2);
    expect(exitCode('check', 0, null).problem).toContain('printed no verdict line');
    expect(exitCode('replay', 1, null).code).toBe(2);
    expect(exitCode('check', 4, 'pass')).toEqual({ code: 4 });
    expect(exitCode('check', 3, null)).toEqual({ code: 3 });
    // regressions lists and prunes: it prints no verdict, and its code is its own.
    expect(exitCode('regressions', 0, null)).toEqual({ code: 0 });
    expect(['verdict: pass', 'verdict: fail (shard 1 of 2 alone: ...)', 'PASS  reference', 'UNTESTED  x: scenario', 'HARNESS ERROR  x: the world', '  pass     scenario', 'FAIL'].map(verdictOf)).toEqual([
      'pass',
      'fail',
      'pass',
      'unknown',
      'error',
      null,
      null,
    ]);
  });
});

describe.concurrent('an interrupted check leaves nothing behind', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s kills the consumer processes, removes the temporary store, and exits %i', async (signal, code) => {
    let consumer: { pid: number; store: string } | null = null;
    const command = `node ${FIXTURES}/waits-forever.mjs PIDFILE`;
    const r = await tidemark(['check', '--command', command, '--scenario', SCENARIO, '--regressions', join(tmp, `r-${runs}.json`)], HANG_MS, async (pid, pidfile) => {
      // Interrupt once the consumer process is running its first incarnation (HANG_MS bounds the wait).
      for (let i = 0; i < HANG_MS / 50 && consumer === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const line = existsSync(pidfile) ? readFileSync(pidfile, 'utf8') : '';
        // Only a whole line: the consumer may be halfway through writing it.
        if (line.includes('\n')) consumer = JSON.parse(line.split('\n')[0]!) as { pid: number; store: string };
      }
      process.kill(pid, signal);
    });
    expect(consumer, r.err).not.toBeNull();
    const { pid, store } = consumer as unknown as { pid: number; store: string };
    // Looked at (and killed) before anything else is asserted, so a failing run leaks nothing.
    const left = await leftOver([pid]);
    expect(r.code, r.err).toBe(code);
    expect(r.err).toContain(`interrupted by ${signal}`);
    expect(left).toEqual([]);
    expect(existsSync(store)).toBe(false);
  });
});

describe('the watchdog limit', () => {
  it('comes from --watchdog, else TIDEMARK_WATCHDOG, else 60 s; never below a process consumer\'s own limits plus 10 s', () => {
    expect(watchdogMs(['check', '--adapter', 'x.ts'], {})).toBe(60_000);
    expect(watchdogMs(['check', '--adapter', 'x.ts'], { TIDEMARK_WATCHDOG: '5' })).toBe(5_000);
    // A flag given twice: the last, as the command's parser takes it.
    expect(watchdogMs(['check', '--adapter', 'x.ts', '--watchdog', '2', '--watchdog', '0'], {})).toBe(0);
    expect(watchdogMs(['check', '--adapter', 'x.ts', '--watchdog=0', '--watchdog', '7'], {})).toBe(7_000);
    expect(watchdogMs(['check', '--adapter', 'x.ts', '--watchdog', '2.5'], { TIDEMARK_WATCHDOG: '5' })).toBe(2_500);
    expect(watchdogMs(['check', '--adapter', 'x.ts', '--watchdog=0'], {})).toBe(0);
    expect(watchdogMs(['check', '--command', 'python3 c.py'], { TIDEMARK_WATCHDOG: '5' })).toBe(30_000);
    expect(watchdogMs(['check', '--command', 'python3 c.py', '--stall-ms', '90000'], {})).toBe(110_000);
  });
});
