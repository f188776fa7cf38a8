/**
 * The pieces of the supervised CLI that can be held in process: the watchdog's limit, the
 * clean-up a signal runs, the activity board the watchdog reads, and the progress lines a
 * CI log gets. The supervisor and its child themselves are run for real, as processes, by
 * test/hostile-cli.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { currentStage, describeActivity, doing, onStage, readCounters, testing, watched, whereNow } from '../../src/cli/activity.js';
import { Progress } from '../../src/cli/progress.js';
import { cleanUp } from '../../src/cli/supervised.js';
import { WATCHDOG_S, watchdogMs } from '../../src/cli/supervisor.js';
import { findScenario } from '../../scenarios/named.js';
import { execute } from '../../src/run/execute.js';
import { referenceConsumer } from '../../src/selftest/reference.js';

describe('the watchdog limit', () => {
  it('comes from --watchdog, else TIDEMARK_WATCHDOG, else the default; 0 turns it off', () => {
    expect(watchdogMs(['check'], {})).toBe(WATCHDOG_S * 1000);
    expect(watchdogMs(['check', '--watchdog', '5'], { TIDEMARK_WATCHDOG: '9' })).toBe(5000);
    expect(watchdogMs(['check', '--watchdog=7'], {})).toBe(7000);
    expect(watchdogMs(['check'], { TIDEMARK_WATCHDOG: '9' })).toBe(9000);
    expect(watchdogMs(['check'], { TIDEMARK_WATCHDOG: 'soon' })).toBe(WATCHDOG_S * 1000);
    // An empty value (a CI template with none) is no 0, which would turn it off; nor is 0x10 sixteen.
    expect(watchdogMs(['check'], { TIDEMARK_WATCHDOG: '' })).toBe(WATCHDOG_S * 1000);
    expect(watchdogMs(['check'], { TIDEMARK_WATCHDOG: '0x10' })).toBe(WATCHDOG_S * 1000);
    expect(watchdogMs(['check'], { TIDEMARK_WATCHDOG: '2.5' })).toBe(2500);
    expect(watchdogMs(['check', '--watchdog', '0'], {})).toBe(0);
  });

  it('is never shorter than a process consumer`s own hello and stall limits together, plus a margin', () => {
    expect(watchdogMs(['check', '--command', 'x', '--watchdog', '1'], {})).toBe(30_000);
    expect(watchdogMs(['check', '--command=x', '--watchdog', '1', '--stall-ms', '30000'], {})).toBe(50_000);
    expect(watchdogMs(['check', '--command=x', '--watchdog', '1', '--stall-ms', '1000', '--hello-ms', '2000'], {})).toBe(13_000);
    expect(watchdogMs(['check', '--command', 'x', '--watchdog', '100'], {})).toBe(100_000);
  });
});

describe('the clean-up a signal runs', () => {
  it('kills every consumer process group it is told of and removes the temporary stores', async () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const store = mkdtempSync(join(tmpdir(), 'tidemark-store-'));
    writeFileSync(join(store, 'db'), 'x');
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_, signal) => resolve(signal)));
    // A group that is long gone must not stop the rest from being cleaned.
    cleanUp([2 ** 22 + 12345, child.pid!], [store]);
    expect(await exited).toBe('SIGKILL');
    expect(existsSync(store)).toBe(false);
  });
});

describe('the activity board the watchdog reads', () => {
  it('says what is running and how many world calls it made, counted by a watched consumer', async () => {
    const told: string[] = [];
    onStage((s) => told.push(s.stage));
    testing('consumer watched', true);
    doing('scenario failed-event-holds-watermark', 'npx tidemark replay --scenario failed-event-holds-watermark');
    expect(currentStage()).toMatchObject({ target: 'consumer watched', inProcess: true, stage: 'scenario failed-event-holds-watermark' });
    expect(told.at(-1)).toBe('scenario failed-event-holds-watermark');
    const before = readCounters();
    const { result } = await execute(findScenario('failed-event-holds-watermark')!.plan, watched(referenceConsumer({ name: 'watched' })));
    expect(result.verdict.status).toBe('pass');
    const after = readCounters();
    expect(after.calls).toBeGreaterThan(before.calls);
    expect(after.lastCall).toMatch(/^w1#\d+ (caughtUp|fail)$/);
    expect(describeActivity(currentStage(), after)).toContain('scenario failed-event-holds-watermark of consumer watched');
    expect(whereNow()).toContain('failed-event-holds-watermark');
  });
});

describe('progress for people watching', () => {
  afterEach(() => vi.useRealTimers());

  it('on a terminal: one status line with done of total, the rate and the time left, shrinking counted apart', () => {
    vi.useFakeTimers();
    const status: (string | null)[] = [];
    const p = new Progress({ out: () => {}, err: () => {}, status: (line) => status.push(line) }, { runs: 100, heartbeatMs: 30_000 });
    p.scenarios(3, 17);
    expect(status.at(-1)).toMatch(/^scenarios: 3 of 17 done, 0 s elapsed$/);
    vi.advanceTimersByTime(1000);
    for (let i = 0; i < 10; i++) p.world(false);
    vi.advanceTimersByTime(1000);
    p.world(false);
    expect(status.at(-1)).toMatch(/^generated worlds: 11 of 100 \(\d+(\.\d)?\/s, about \d+ s left\), \d+ s elapsed$/);
    vi.advanceTimersByTime(200);
    p.world(true);
    expect(status.at(-1)).toMatch(/^a failure after 11 generated worlds: 1 more tried while shrinking and searching again/);
    p.stop();
    expect(status.at(-1)).toBeNull();
  });

  it('the heartbeat names the phase that runs now, never the one that has just finished', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const p = new Progress({ out: (l) => out.push(l), err: () => {} }, { runs: 100, heartbeatMs: 1000, scenarios: 17 });
    const beat = (): string => {
      vi.advanceTimersByTime(1000);
      return out.at(-1)!;
    };
    p.regressions(0, 2);
    expect(beat()).toMatch(/^ {2}\.\.\. regressions: 0 of 2 done/);
    p.regressions(2, 2);
    expect(beat()).toMatch(/^ {2}\.\.\. scenarios: 0 of 17 done/);
    p.scenarios(17, 17);
    expect(beat()).toMatch(/^ {2}\.\.\. generated worlds: 0 of 100 /);
    p.stop();
    const none = new Progress({ out: (l) => out.push(l), err: () => {} }, { runs: 100, heartbeatMs: 1000, scenarios: 17 });
    none.regressions(0, 0);
    expect(beat()).toMatch(/^ {2}\.\.\. scenarios: 0 of 17 done/);
    none.stop();
  });

  it('without a terminal: a plain heartbeat line, and the time limit caps the time left', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const p = new Progress({ out: (l) => out.push(l), err: () => {} }, { runs: 1000, heartbeatMs: 30_000, timeLimitMs: 5000 });
    p.world(false);
    vi.advanceTimersByTime(30_000);
    expect(out).toEqual([expect.stringMatching(/^ {2}\.\.\. generated worlds: 1 of 1000 \(.*\/s, about 0 s left\), 30 s elapsed$/)]);
    vi.advanceTimersByTime(150_000);
    expect(out.at(-1)).toMatch(/3 min 0 s elapsed$/);
    p.stop();
  });
});
