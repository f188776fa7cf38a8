import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { MAX_JOBS } from '../src/run/options.js';
import { cli, HANG_MS, leftAndKilled, pidsGone, BUILT_CLI } from './support.js';

/**
 * `check --jobs N` runs the check as N shards at once, each a process with its own consumer
 * processes, and merges them. What it finds must be what one process finds: the same JSON,
 * byte for byte, the same regression entries, the same JUnit cases and the same printed
 * lines. Only what is measured may differ: times, and the world calls, which count the work
 * the jobs did (a job stops at another's failure once told of it: when it is told is a race).
 */
const dir = mkdtempSync(join(tmpdir(), 'tidemark-jobs-'));
const file = (name: string): string => join(dir, name);
const read = (path: string): string => readFileSync(path, 'utf8');

/**
 * Printed output without what is measured: the world-call count, JUnit's times, and the
 * progress lines a run without a terminal prints every --heartbeat seconds.
 */
const decided = (text: string): string =>
  text
    .replace(/\d+ world calls/g, 'N world calls')
    .replace(/ (time|timestamp)="[^"]*"/g, '')
    .split('\n')
    .filter((l) => !/^ *\.\.\. /.test(l))
    .join('\n');

/**
 * Runs the same check with --jobs 1 and then --jobs N, each from an empty regression file and
 * into the same output files (read and removed after each), so that both print the same paths.
 */
async function bothWays(name: string, argv: readonly string[], jobs = 2, between?: () => void) {
  const out = (ext: string): string => file(`${name}.${ext}`);
  const run = async (j: number) => {
    const r = await cli('check', ...argv, '--jobs', String(j), '--json', out('json'), '--junit', out('xml'), '--regressions', out('regressions.json'));
    const files = { json: read(out('json')), junit: read(out('xml')), regressions: existsSync(out('regressions.json')) ? read(out('regressions.json')) : null };
    for (const ext of ['json', 'xml', 'regressions.json']) rmSync(out(ext), { force: true });
    return { ...r, ...files };
  };
  const one = await run(1);
  between?.();
  return { one, many: await run(jobs) };
}

/** The processes that started consumer processes, as a --command wrapper wrote them down; the file is removed. */
function parents(path: string): Set<string> {
  const found = new Set(read(path).split('\n').filter(Boolean));
  rmSync(path);
  return found;
}

describe('check --jobs N', () => {
  it('a seed of 2^31 and above, which the check takes as a negative 32-bit seed, reaches every job: the same JSON as one process', async () => {
    const { one, many } = await bothWays('negative-seed', ['--consumer', 'max-position-fetched', '--runs', '50', '--seed', '3000000000']);
    expect(one.out).toContain('seed -1294967296');
    expect(one.code, one.err).toBe(EXIT.fail);
    expect(many.code, many.err).toBe(EXIT.fail);
    expect(many.json).toBe(one.json);
  });

  it('a failing built-in consumer: the same JSON, JUnit and printed lines as one process', async () => {
    const { one, many } = await bothWays('builtin', ['--consumer', 'max-position-fetched', '--runs', '300', '--seed', '3']);
    expect(one.code).toBe(EXIT.fail);
    expect(many.code).toBe(EXIT.fail);
    expect(many.json).toBe(one.json);
    expect(decided(many.junit)).toBe(decided(one.junit));
    expect(decided(many.out)).toBe(decided(one.out));
    expect(many.out).toMatch(/verdict: fail$/);
  });

  it('a passing adapter over 3 jobs: the same JSON and lines, and a passing verdict', async () => {
    const { one, many } = await bothWays('adapter', ['--adapter', 'examples/ledger-consumer.ts', '--runs', '60', '--seed', '11'], 3);
    expect(one.code).toBe(EXIT.pass);
    expect(many.code).toBe(EXIT.pass);
    expect(many.json).toBe(one.json);
    expect(decided(many.junit)).toBe(decided(one.junit));
    expect(decided(many.out)).toBe(decided(one.out));
    expect(many.out).toMatch(/verdict: pass$/);
  });

  it('a failing --command consumer: its own processes per job, and the same results, final replays and regression entries', async () => {
    // The wrapper notes the process that started each consumer process: with --jobs 2 that is
    // the checking process (its hello) and each job, with --jobs 1 only the checking process.
    const ppids = file('ppids');
    const command = `echo $PPID >> ${ppids}; exec python3 examples/python/ledger_consumer_buggy.py`;
    let one: Set<string> = new Set();
    const { one: single, many } = await bothWays('command', ['--command', command, '--runs', '40', '--seed', '5'], 2, () => (one = parents(ppids)));
    expect(one.size).toBe(1);
    expect(parents(ppids).size).toBe(3);
    expect(single.code).toBe(EXIT.fail);
    expect(many.code).toBe(EXIT.fail);
    expect(many.json).toBe(single.json);
    expect(JSON.parse(many.regressions ?? '{}').entries).toHaveLength(2);
    expect(many.regressions).toBe(single.regressions);
    expect(decided(many.junit)).toBe(decided(single.junit));
    // With session crashes, the failures shown are replayed with real kills: by the check, after its jobs.
    expect(single.out).toContain('final replays under real kills');
    expect(decided(many.out)).toBe(decided(single.out));
  });

  it('a regression file this tidemark recorded is replayed by the jobs as by one process: the same JSON and lines', async () => {
    // Entries carry fields a shard's file is checked for (format, the hash's history format):
    // a job's replay of them must merge, not be refused as a field tidemark never writes.
    const recorded = file('recorded.json');
    // One generated world and one search: what is tested is the replay of the entries, and
    // the scenarios this consumer fails record most of them.
    const argv = ['--adapter', 'examples/ledger-consumer-buggy.ts', '--runs', '1', '--searches', '1'];
    expect((await cli('check', ...argv, '--seed', '5', '--regressions', recorded)).code).toBe(EXIT.fail);
    const entries = JSON.parse(read(recorded)).entries as { format?: number }[];
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.format !== undefined)).toBe(true);
    const replayed = file('replayed.json');
    const run = async (jobs: number) => {
      copyFileSync(recorded, replayed);
      const r = await cli('check', ...argv, '--seed', '6', '--jobs', String(jobs), '--regressions', replayed, '--json', file('replayed.out.json'));
      const json = read(file('replayed.out.json'));
      rmSync(file('replayed.out.json'));
      return { ...r, json };
    };
    const one = await run(1);
    const many = await run(2);
    expect(one.out).toContain(`replaying ${entries.length} recorded failure`);
    expect(many.code, many.err).toBe(one.code);
    expect(many.json).toBe(one.json);
    expect(decided(many.out)).toBe(decided(one.out));
  });

  it('a connector (--singer): the same JSON and printed lines', async () => {
    const { one, many } = await bothWays('singer', ['--singer', 'python3 examples/singer/tap_events.py', '--api', 'examples/singer/api.json', '--runs', '2', '--seed', '2']);
    expect(one.code).toBe(EXIT.pass);
    expect(many.code).toBe(EXIT.pass);
    expect(many.json).toBe(one.json);
    expect(many.regressions).toBe(one.regressions);
    expect(decided(many.out)).toBe(decided(one.out));
  });

  it('refuses what it cannot do, with exit 3 and the reason', async () => {
    const refused = async (argv: readonly string[], reason: RegExp): Promise<void> => {
      const r = await cli('check', '--consumer', 'reference', ...argv);
      expect(r.code).toBe(EXIT.usage);
      expect(r.err).toMatch(reason);
    };
    await refused(['--jobs', '0'], /--jobs must be an integer of at least 1 and at most/);
    await refused(['--jobs', String(MAX_JOBS + 1)], new RegExp(`--jobs must be an integer of at least 1 and at most ${MAX_JOBS}`));
    await refused(['--jobs', '2', '--shard', '1/2', '--seed', '1', '--json', file('refused.json')], /--jobs cannot be combined with --shard/);
    await refused(['--jobs', '2', '--scenario', 'ties-across-page-boundary'], /--scenario cannot be combined with .*--jobs/);
    await refused(['--jobs', '2', '--verbose'], /--verbose cannot be combined with --jobs/);
  });

  it('a job that ends without a result leaves the run unknown, exit 2, saying which job', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/hostile/exits-zero.ts', '--runs', '10', '--seed', '1', '--jobs', '2');
    expect(r.code).toBe(EXIT.unknown);
    expect(r.err).toMatch(/job [12] of 2 exited with code 0 without a result/);
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it('SIGINT to the command stops every job and kills every consumer process', async () => {
    const pidfile = file('sigint-pids');
    const child = spawn(process.execPath, [BUILT_CLI, 'check', '--command', `node test/fixtures/process/pid-ledger.mjs ${pidfile}`, '--runs', '100000', '--seed', '1', '--jobs', '2', '--regressions', file('sigint-regressions.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: '1' },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The hello of the checking process and at least one process of each job.
    const pids = (): number[] => (existsSync(pidfile) ? read(pidfile).split('\n').filter(Boolean).map(Number) : []);
    const deadline = Date.now() + HANG_MS;
    while (pids().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(pids().length).toBeGreaterThanOrEqual(3);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(err).toContain('interrupted by SIGINT');
    expect(await pidsGone(pids())).toEqual([]);
  });

  /**
   * A check of the adapter that spins without yielding after its first world call, as jobs:
   * the pids its processes recorded (the checking process's, which loads it too, and each
   * job's), once both jobs are spinning, shown by the CPU each has used (half a second); its
   * temporary directory. Started in a process group of its own, as a terminal starts a command.
   */
  async function spinningJobs(name: string): Promise<{ child: ReturnType<typeof spawn>; pids: number[]; tmp: string; exited: Promise<number | null>; err: () => string }> {
    const pidfile = file(`${name}-pids`);
    const tmp = mkdtempSync(join(dir, `${name}-tmp-`));
    const child = spawn(process.execPath, [BUILT_CLI, 'check', '--adapter', 'test/fixtures/hostile/sync-loop.ts', '--runs', '100', '--seed', '1', '--jobs', '2', '--regressions', file(`${name}.json`)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, CI: '1', HOSTILE_PIDFILE: pidfile, TMPDIR: tmp },
    });
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const pids = (): number[] => (existsSync(pidfile) ? read(pidfile).split('\n').filter(Boolean).map(Number) : []);
    // The jobs are the recorded processes whose parent is another recorded one, the checking process.
    const spinning = (): number[] => {
      const recorded = pids();
      return recorded.filter((pid) => recorded.includes(stat(pid)?.ppid ?? -1) && (stat(pid)?.cpu ?? 0) >= 50);
    };
    const deadline = Date.now() + HANG_MS;
    while (spinning().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(spinning(), err).toHaveLength(2);
    return { child, pids: pids(), tmp, exited, err: () => err };
  }

  it('SIGINT to its whole process group, as Ctrl-C in a terminal sends it, while the jobs spin: exit 130, no job left running, no temporary directory left', async () => {
    const run = await spinningJobs('group-sigint');
    // The checking process and its supervisor hear the signal, and the supervisor asks for the same stop.
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await run.exited, run.err()).toBe(130);
    expect(run.err()).toContain('interrupted by SIGINT');
    expect(await leftAndKilled(run.pids)).toEqual([]);
    expect(readdirSync(run.tmp).filter((entry) => entry.startsWith('tidemark-'))).toEqual([]);
  });

  it('SIGINT twice to the whole process group, as an impatient Ctrl-C sends it: by the time the command exits 130, no job runs, and no temporary directory is left', async () => {
    const run = await spinningJobs('group-sigint-twice');
    const pgid = run.child.pid!;
    // Looked at the moment the command exits, before anything else runs. A process SIGKILLed
    // a moment before may not have been scheduled to die yet on a busy machine: what counts
    // is that it will never run again.
    const exited = run.exited.then((code) => ({ code, running: run.pids.filter((pid) => running(pid) && !dying(pid)) }));
    process.kill(-pgid, 'SIGINT');
    // Apart, so that the second is not merged into the first while it is still pending. The
    // first may already have ended the whole group by then (nothing left to send it to: ESRCH),
    // as a second Ctrl-C after the command is gone reaches nobody; what follows holds either way.
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      process.kill(-pgid, 'SIGINT');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
    const { code, running: left } = await exited;
    expect(code, run.err()).toBe(130);
    expect(left).toEqual([]);
    expect(await leftAndKilled(run.pids)).toEqual([]);
    expect(readdirSync(run.tmp).filter((entry) => entry.startsWith('tidemark-'))).toEqual([]);
  });

  it('the checking process killed outright while the jobs spin: by the time the command exits, no job runs, orphaned', async () => {
    const run = await spinningJobs('check-killed');
    // The supervisor's one child; SIGKILL runs none of its exit hooks.
    const supervisor = run.child.pid!;
    const checking = Number(read(`/proc/${supervisor}/task/${supervisor}/children`).trim().split(/\s+/)[0]);
    expect(run.pids).toContain(checking);
    // Looked at the moment the command exits, as in the test above. The supervisor kills the
    // jobs by the mark of the checking process's run, which each job's own run nests under;
    // left to themselves, busy jobs would only be ended by their own reporter threads, 10 s on.
    const exited = run.exited.then((code) => ({ code, running: run.pids.filter((pid) => running(pid) && !dying(pid)) }));
    process.kill(checking, 'SIGKILL');
    const { code, running: left } = await exited;
    expect(code, run.err()).toBe(EXIT.unknown);
    expect(run.err()).toContain('was killed by SIGKILL');
    expect(left).toEqual([]);
    expect(await leftAndKilled(run.pids)).toEqual([]);
    // The jobs' directory was among what the checking process told its supervisor to remove.
    expect(readdirSync(run.tmp).filter((entry) => entry.startsWith('tidemark-'))).toEqual([]);
  });

  it.each(['SIGINT', 'the checking process killed outright'])("a blackbox consumer's jobs, %s: by the time the command exits, no temporary directory of the run is left, its stores included", async (how) => {
    const name = how === 'SIGINT' ? 'stores-sigint' : 'stores-killed';
    const tmp = mkdtempSync(join(dir, `${name}-tmp-`));
    const child = spawn(process.execPath, [BUILT_CLI, 'check', '--command', 'python3 examples/python/sqlite_ledger.py', '--runs', '2000', '--seed', '1', '--jobs', '2', '--regressions', file(`${name}.json`)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: '1', TMPDIR: tmp },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const ours = (): string[] => readdirSync(tmp).filter((entry) => entry.startsWith('tidemark-'));
    // Looked at the moment the command exits, before anything else runs.
    const exited = new Promise<{ code: number | null; left: string[] }>((resolve) => child.on('exit', (code) => resolve({ code, left: ours() })));
    // The jobs' stores, made in the jobs' directory.
    const stores = (): string[] => ours().flatMap((jobs) => (statSync(join(tmp, jobs), { throwIfNoEntry: false })?.isDirectory() ? readdirSync(join(tmp, jobs)).filter((entry) => entry.startsWith('tidemark-store-')) : []));
    const deadline = Date.now() + HANG_MS;
    while (stores().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stores().length, err).toBeGreaterThanOrEqual(2);
    if (how === 'SIGINT') child.kill('SIGINT');
    else {
      const supervisor = child.pid!;
      process.kill(Number(read(`/proc/${supervisor}/task/${supervisor}/children`).trim().split(/\s+/)[0]), 'SIGKILL');
    }
    const { code, left } = await exited;
    expect(code, err).toBe(how === 'SIGINT' ? 130 : EXIT.unknown);
    expect(left).toEqual([]);
  });

  /**
   * A check of connector jobs whose taps write down their pids and wait, run until a tap of
   * each job waits; then `end` is done to it. Returns its exit code and the taps running when
   * the command exited, looked at that moment, before anything else runs (a tap SIGKILLed a
   * moment before and not yet scheduled to die counts as gone: it will never run again).
   */
  async function connectorJobs(name: string, end: (supervisor: ChildProcess) => void): Promise<{ code: number | null; left: number[]; err: string; pids: number[]; tmp: string }> {
    const pidfile = file(`${name}-pids`);
    const tmp = mkdtempSync(join(dir, `${name}-tmp-`));
    // A tap that writes down its pid and waits; every sync attempt of every job is one.
    const waits = `python3 -c "import os, time; open('${pidfile}', 'a').write(str(os.getpid()) + chr(10)); time.sleep(600)"`;
    const child = spawn(process.execPath, [BUILT_CLI, 'check', '--singer', waits, '--api', 'examples/singer/api.json', '--runs', '100', '--seed', '1', '--jobs', '2', '--regressions', file(`${name}.json`)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CI: '1', TMPDIR: tmp },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<{ code: number | null; running: number[] }>((resolve) => child.on('exit', (code) => resolve({ code, running: pids().filter((pid) => running(pid) && !dying(pid)) })));
    const pids = (): number[] => (existsSync(pidfile) ? read(pidfile).split('\n').filter(Boolean).map(Number) : []);
    const deadline = Date.now() + HANG_MS;
    // A connector of each job.
    while (pids().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(pids().length).toBeGreaterThanOrEqual(2);
    end(child);
    const { code, running: left } = await exited;
    return { code, left, err, pids: pids(), tmp };
  }

  it('SIGINT with connector jobs: by the time the command exits 130, no connector process is left running', async () => {
    const r = await connectorJobs('connector-sigint', (child) => child.kill('SIGINT'));
    expect(r.code, r.err).toBe(130);
    expect(r.err).toContain('interrupted by SIGINT');
    expect(r.left).toEqual([]);
    expect(await pidsGone(r.pids)).toEqual([]);
  });

  it("the checking process killed outright with connector jobs: by the time the command exits, no connector process runs: each carries a mark nested under the checking process's run", async () => {
    let stopped = 0;
    const r = await connectorJobs('connector-check-killed', (child) => {
      const supervisor = child.pid!;
      const checking = Number(read(`/proc/${supervisor}/task/${supervisor}/children`).trim().split(/\s+/)[0]);
      // The jobs stopped first: like jobs busy in a loop, or hung, they run no clean-up of their
      // own when the checking process goes, and their taps, in process groups of their own, are
      // reached only by their marks. Asserted after the kill, so that a failure stops nothing
      // that is then left stopped.
      const jobs = read(`/proc/${checking}/task/${checking}/children`).trim().split(/\s+/).map(Number);
      for (const job of jobs) process.kill(job, 'SIGSTOP');
      stopped = jobs.length;
      process.kill(checking, 'SIGKILL');
    });
    // Looked at (and killed) before anything is asserted, so that a failure leaves no tap behind.
    const killed = await leftAndKilled(r.pids);
    expect(stopped).toBe(2);
    expect(r.code, r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('was killed by SIGKILL');
    expect(r.left).toEqual([]);
    expect(killed).toEqual([]);
    // The jobs made their sync directories in the run's jobs directory, which the supervisor removed.
    expect(readdirSync(r.tmp).filter((entry) => entry.startsWith('tidemark-'))).toEqual([]);
  });
});

/** A process's parent and the CPU it has used, user and system, in clock ticks; null once it is gone. */
function stat(pid: number): { ppid: number; cpu: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/**
 * Whether a process is as good as gone: a SIGKILL waits for it (pending for the process or a
 * thread of it), or it is exiting (PF_EXITING in the flags of /proc/PID/stat).
 */
function dying(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const pending = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some((m) => (BigInt(`0x${m[1]}`) & 0x100n) !== 0n);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const flags = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[6]);
    return pending || (flags & 0x4) !== 0;
  } catch {
    return true;
  }
}

/** Whether a process runs: not gone, and not a zombie, which has ended and waits only to be reaped. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
