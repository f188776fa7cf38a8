import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { ALL_SCENARIOS } from '../../scenarios/named.js';
import { stores } from '../adapter/process/bridge.js';
import { MARK_VARIABLE, newMark } from '../adapter/process/marks.js';
import { JOB_DIR_VARIABLE } from '../adapter/process/scratch.js';
import { describeActivity, doing, readCounters, type Counters, type Stage } from './activity.js';
import { junitSuiteOf, mergeCheck, readShards } from './merge.js';
import type { Progress } from './progress.js';
import { EXIT, UsageError, type Flags } from './spec.js';
import { cleanUp, REPORT_FD, SUPERVISED, type ToChild, type ToSupervisor } from './supervised.js';
import { watchdogMs } from './supervisor.js';
import { whileJobsRun } from './job-stop.js';
import { owns, scenarioStatus } from '../run/conformance.js';
import type { CheckJson } from '../run/check-json.js';
import type { SuiteResult } from '../run/suite.js';
import type { JUnitSuite } from '../report/junit.js';

/**
 * `check --jobs N`: the check run as N processes at once, for machines with the cores for it.
 * Each job is `check --shard I/N` of the same run (same seed, same flags), so each has its own
 * consumer processes, and the jobs' results are merged as `tidemark merge` merges a CI
 * matrix's shards (src/cli/merge.ts). That merge gives the unsharded run's result exactly (the
 * shard design, docs/ci.md): the first failing world is found by the job that owns it, at the
 * same index, and shrunk there as one process shrinks it. So --jobs changes how long a check
 * takes, never what it finds.
 *
 * This process is the jobs' supervisor, as src/cli/supervisor.ts is a check's: it hands each
 * job the key its messages must carry, follows its stage and world calls, knows its consumer
 * process groups, and ends a job that makes no progress for the watchdog's time. Whatever
 * ends this process, no job outlives it: an exit kills them and their consumer processes, and
 * a job whose supervisor is gone cleans up after itself (src/cli/supervised.ts).
 */

/** What a check prints and records: one process's SuiteResult, or the merge of its jobs' shards. */
export type CheckedSuite = JUnitSuite & { readonly reason?: string };

/** A SuiteResult as a check prints it: each scenario with its status, as the merged suite has it. */
export function checkedSuite(result: SuiteResult): CheckedSuite {
  return { ...result, scenarios: result.scenarios.map((s) => ({ ...s, status: scenarioStatus(s) })) };
}

/** The jobs' merged result, and what only the jobs saw. */
export interface JobsOutcome {
  readonly suite: CheckedSuite;
  /** The JSON `check --json` writes: the merge's, which is the one process's (docs/ci.md). */
  readonly json: CheckJson;
  /** Worlds the jobs ran with session crashes instead of real kills (see finalReplays in src/cli.ts). */
  readonly sessionWorlds: number;
  /** The target's notes the jobs printed (a connector's, about requests it sent at once), each once. */
  readonly notes: readonly string[];
  /** What the jobs wrote to stderr (an adapter's own lines, say), each line once; not tidemark's warnings, which the check gave itself. */
  readonly stderr: readonly string[];
}

/** A job ended without a result: the check ends with this code, after these lines on stderr. */
export class JobsEnded extends Error {
  override name = 'JobsEnded';
  constructor(
    readonly code: number,
    readonly lines: readonly string[],
  ) {
    super(lines.join('\n'));
  }
}

/** The flags every job is given anew, or never: --jobs itself, the shard and seed, the outputs, the regression file and the heartbeat. */
const NOT_PASSED = new Set(['jobs', 'shard', 'seed', 'json', 'junit', 'timeline', 'regressions', 'heartbeat']);

/** The check's flags as each job takes them, with the seed the check drew: everything that decides what runs. */
export function jobArgv(f: Flags, seed: number): string[] {
  // Each value joined to its flag: a separate value that begins with a dash (a negative
  // seed, a command) could be read as a flag of its own.
  const argv = [`--seed=${seed}`];
  for (const { flag, value } of f.given()) {
    if (NOT_PASSED.has(flag.name)) continue;
    if (value === true) argv.push(`--${flag.name}`);
    else if (Array.isArray(value)) for (const v of value) argv.push(`--${flag.name}=${v}`);
    else if (typeof value === 'string') argv.push(`--${flag.name}=${value}`);
  }
  return argv;
}

/** How long a job that printed its result, or was told to stop, may take to exit. */
export const EXIT_GRACE_MS = 2000;
const STOP_GRACE_MS = 1000;
/** How long an interrupted check waits for its jobs to stop: well within the second its supervisor gives it (src/cli/supervisor.ts). */
const INTERRUPT_GRACE_MS = 600;
/** How often the jobs' watchdogs look, and this process says it is watching. */
const TICK_MS = 250;

interface Job {
  readonly index: number;
  readonly child: ChildProcess;
  readonly json: string;
  readonly key: string;
  /** The key of this process's own messages to it (see ToChild `bound`), never the run's key. */
  readonly peerKey: string;
  /** Whether it has its keys: a message sent before would be lost. */
  keyed: boolean;
  stage: Stage | null;
  counters: Counters;
  groups: readonly number[];
  stores: readonly string[];
  /**
   * The prefix of the marks its processes carry (src/adapter/process/marks.ts): its own mark
   * and a slash, under which its run nests. Known from its start, not from what it tells: a
   * job that dies before it first reports leaves none of its processes running.
   */
  readonly mark: string;
  lastProgress: number;
  progressKey: string;
  closed: boolean;
  /** The index of its first failing world, once it said it. */
  failedAt: number | null;
  code: number | null;
  signal: NodeJS.Signals | null;
  readonly out: string[];
  readonly err: string[];
}

/** Where a job stands, for the progress line. */
interface JobStand {
  readonly phase: 'start' | 'regressions' | 'scenarios' | 'worlds' | 'shrinking' | 'end';
  /** Regressions or scenarios of its share done, in those phases; worlds run, in the others. */
  readonly done: number;
}

/** The program a job runs: this tidemark's CLI, built or (in its own tests) from source through tsx. */
function entry(): { readonly path: URL; readonly execArgv: readonly string[] } {
  const source = import.meta.url.endsWith('.ts');
  const path = new URL(`../cli.${source ? 'ts' : 'js'}`, import.meta.url);
  return { path, execArgv: source ? ['--import', import.meta.resolve('tsx')] : [] };
}

/**
 * Runs the check as `jobs` shards at once and merges them. `argv` is jobArgv's; `regressions`
 * the regression file, which each job replays its share of from a copy (and records its own
 * failures in that copy, thrown away: the check records the merged run's, as one process would);
 * `replayed` how many of its entries are replayed, for the progress line.
 * Throws JobsEnded when a job ends without a result; the other jobs are stopped first.
 */
export async function runJobs(o: { readonly jobs: number; readonly argv: readonly string[]; readonly regressions: string; readonly replayed: number; readonly progress: Progress }): Promise<JobsOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-jobs-'));
  // Among the directories this process tells its supervisor to remove should it be killed
  // outright, when neither the finally below nor the exit hook runs.
  stores.add(dir);
  try {
    const copy = join(dir, 'regressions.json');
    if (existsSync(o.regressions)) copyFileSync(o.regressions, copy);
    const { path, execArgv } = entry();
    const jobs: Job[] = [];
    const started = Date.now();
    let failure: JobsEnded | null = null;
    const stopAll = (): void => {
      for (const j of jobs) {
        if (j.closed) continue;
        if (j.child.connected) j.child.send({ t: 'stop', signal: 'SIGTERM' } satisfies ToChild, () => {});
        setTimeout(() => j.child.kill('SIGKILL'), STOP_GRACE_MS).unref();
      }
    };
    const fail = (code: number, lines: readonly string[]): void => {
      failure ??= new JobsEnded(code, lines);
      stopAll();
    };
    // This process ends (a second signal, an exit from anywhere): its jobs end with it, and
    // its directory. Nothing can wait in an exit hook, so each job left is killed outright: a
    // job busy in a loop would never run a handler for a gentler signal, and would run on,
    // orphaned. What each had running (its consumer processes, its stores) goes with it.
    const onExit = (): void => {
      const left = jobs.filter((j) => !j.closed);
      // Every job first: a clean-up looks through /proc for marked processes, which takes a while.
      for (const j of left) j.child.kill('SIGKILL');
      for (const j of left) cleanUp(j.groups, j.stores, j.mark);
      rmSync(dir, { recursive: true, force: true });
    };
    process.on('exit', onExit);
    // Interrupted: the checking process waits for this before it exits (job-stop.ts).
    const unregister = whileJobsRun(async () => {
      const open = jobs.filter((j) => !j.closed);
      for (const j of open) if (j.child.connected) j.child.send({ t: 'stop', signal: 'SIGTERM' } satisfies ToChild, () => {});
      await Promise.race([Promise.all(open.map((j) => (j.closed ? null : new Promise((resolve) => j.child.once('close', resolve))))), new Promise((resolve) => setTimeout(resolve, INTERRUPT_GRACE_MS))]);
      for (const j of jobs) {
        if (!j.closed) j.child.kill('SIGKILL');
        cleanUp(j.groups, j.stores, j.mark);
      }
    });
    const board = new JobsBoard(o.jobs, o.replayed, o.progress);
    // The lowest index at which a job failed: every other job is told it, and stops past it
    // (see ShardPeers), unless it failed below it itself. The merge needs nothing from a job
    // past the run's first failure, and holds each stop to a failure there (src/cli/merge.ts).
    let first: number | null = null;
    const tell = (j: Job): void => {
      if (first === null || !j.keyed || j.closed || !j.child.connected || (j.failedAt !== null && j.failedAt <= first)) return;
      j.child.send({ t: 'bound', key: j.peerKey, at: first } satisfies ToChild, () => {});
    };
    const peers: JobPeers = {
      failed: (job, at) => {
        job.failedAt = Math.min(job.failedAt ?? at, at);
        if (first !== null && first <= at) return;
        first = at;
        for (const j of jobs) tell(j);
      },
      // A job given its keys after the first failure is told it at once.
      keyed: tell,
    };
    const limit = watchdogMs(['check', ...o.argv], process.env);
    try {
      await new Promise<void>((resolve) => {
        let open = o.jobs;
        for (let index = 1; index <= o.jobs; index++) {
          const json = join(dir, `job-${index}.json`);
          const argv = ['check', ...o.argv, '--shard', `${index}/${o.jobs}`, '--json', json, '--regressions', copy, '--heartbeat', '0'];
          // Should this process die outright, without the exit hook below, its supervisor kills
          // and removes what this run's mark and directory hold, and so all of each job's: the
          // job carries a mark of this run, which its own run, and so every process it starts,
          // nests under (src/adapter/process/marks.ts), and makes its stores in this run's
          // directory (src/adapter/process/scratch.ts).
          const mark = newMark();
          const env = { ...process.env, [SUPERVISED]: '1', [MARK_VARIABLE]: mark, [JOB_DIR_VARIABLE]: dir };
          const child = fork(path, argv, { execArgv: [...execArgv], env, stdio: ['ignore', 'pipe', 'pipe', 'ipc', 'pipe'] });
          const job: Job = { index, child, json, key: randomBytes(32).toString('hex'), peerKey: randomBytes(32).toString('hex'), keyed: false, mark: `${mark}/`, stage: null, counters: { calls: 0, hooks: 0, lastCall: null, inHook: null }, groups: [], stores: [], lastProgress: Date.now(), progressKey: '', closed: false, failedAt: null, code: null, signal: null, out: [], err: [] };
          jobs.push(job);
          follow(job, board, peers);
          child.on('error', (error) => fail(EXIT.error, [`tidemark: harness error: job ${index} of ${o.jobs} could not start: ${error.message}`]));
          child.on('close', (code, signal) => {
            job.closed = true;
            job.code = code;
            job.signal = signal;
            // Whatever the job managed or not: none of its consumer processes outlives it.
            cleanUp(job.groups, job.stores, job.mark);
            for (const dir of job.stores) stores.delete(dir);
            if (!existsSync(json)) fail(...ended(job, o.jobs));
            if (--open === 0) resolve();
          });
        }
        const tick = setInterval(() => {
          if (open === 0) return clearInterval(tick);
          // Said every tick, so the watchdog over this process sees it alive: the jobs' own are here.
          doing(`${o.jobs} jobs, ${Math.round((Date.now() - started) / 1000)} s: ${jobs.map((j) => `job ${j.index} ${j.closed ? 'done' : (j.stage?.stage ?? 'starting')}`).join('; ')}`);
          if (limit === 0 || failure !== null) return;
          for (const j of jobs) {
            if (j.closed || j.stage === null || Date.now() - j.lastProgress < limit) continue;
            fail(EXIT.unknown, [
              `tidemark: watchdog: job ${j.index} of ${o.jobs}: no progress for ${limit / 1000} s (no world call, no new world) during ${describeActivity(j.stage, j.counters)}. The adapter is looping, or waiting on something that never comes. --watchdog SECONDS (or TIDEMARK_WATCHDOG) sets this limit.`,
            ]);
            j.child.kill('SIGKILL');
          }
        }, TICK_MS);
        tick.unref();
      });
    } finally {
      process.off('exit', onExit);
      unregister();
    }
    if (failure !== null) throw failure;
    return outcome(jobs);
  } finally {
    stores.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the jobs are told of each other's failures (see ShardPeers): a job failed at `at`; a job has its keys. */
interface JobPeers {
  failed(job: Job, at: number): void;
  keyed(job: Job): void;
}

/** Follows a job as a supervisor does: its key, stage, resources and end; its counters; its output. */
function follow(job: Job, board: JobsBoard, peers: JobPeers): void {
  const { child } = job;
  const progressed = (): void => {
    const key = `${job.counters.calls}|${job.counters.hooks}|${job.stage?.stage ?? ''}`;
    if (key === job.progressKey) return;
    job.progressKey = key;
    job.lastProgress = Date.now();
  };
  child.on('message', (message: ToSupervisor) => {
    if (message?.t === 'hello') {
      if (!job.keyed && child.connected) {
        child.send({ t: 'key', key: job.key, peerKey: job.peerKey } satisfies ToChild, () => {});
        job.keyed = true;
        peers.keyed(job);
      }
      return;
    }
    // A message without the key is not the job's tidemark speaking: an adapter's, ignored.
    if (message?.key !== job.key) return;
    if (message.t === 'stage') {
      job.stage = message.stage;
      board.saw(job.index, message.stage.stage);
    } else if (message.t === 'resources') {
      job.groups = message.groups;
      // Among this process's own too, so that its supervisor removes them should this process
      // die outright: the job is then killed by its mark before it could remove them itself.
      for (const dir of job.stores) stores.delete(dir);
      job.stores = message.stores;
      for (const dir of job.stores) stores.add(dir);
    } else if (message.t === 'failed') {
      if (Number.isSafeInteger(message.at) && message.at >= 0) peers.failed(job, message.at);
    } else if (message.t === 'done') setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS).unref();
    progressed();
  });
  const report = child.stdio[REPORT_FD] as Readable | null | undefined;
  if (report) {
    createInterface({ input: report }).on('line', (line) => {
      try {
        job.counters = readCounters(JSON.parse(line) as number[]);
        progressed();
      } catch {
        // A torn line: the next one comes within a fraction of a second.
      }
    });
  }
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => job.out.push(line));
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => job.err.push(line));
}

/** Why a job that left no result ended, as the check says it: the exit code and the lines for stderr. */
function ended(job: Job, count: number): [number, string[]] {
  const who = `job ${job.index} of ${count}`;
  const said = job.err.filter((l) => l.trim() !== '');
  // A usage problem that shows only when the consumer runs (it cannot start), or tidemark's own error: as one process reports it.
  if (job.code === EXIT.usage || job.code === EXIT.error) return [job.code, said.length > 0 ? said : [`tidemark: ${who} ended with exit code ${job.code} and said nothing`]];
  const where = job.stage ? describeActivity(job.stage, job.counters) : 'start-up';
  const how = job.signal ? `was killed by ${job.signal} during ${where}` : `exited with code ${job.code} without a result`;
  return [EXIT.unknown, [...said, `tidemark: the run ended without a verdict: ${who} ${how}`]];
}

/** The jobs' shard files merged: the check's result, as one process gives it. */
function outcome(jobs: readonly Job[]): JobsOutcome {
  try {
    const read = readShards(jobs.map((j) => j.json));
    if (read.command !== 'check') throw new JobsEnded(EXIT.error, [`tidemark: harness error: the jobs wrote ${read.command} results`]);
    const merged = mergeCheck(read.shards);
    const suite: CheckedSuite = { ...junitSuiteOf(merged), ...(merged.json.reason === undefined ? {} : { reason: merged.json.reason }) };
    const once = (lines: readonly string[]): string[] => [...new Set(lines)];
    return {
      suite,
      json: merged.json,
      sessionWorlds: read.shards.reduce((sum, s) => sum + (s.json.shard.sessionWorlds ?? 0), 0),
      notes: once(jobs.flatMap((j) => j.out.filter((l) => l.startsWith('note: ')))),
      // tidemark's own warnings come from loading the target, which this process did too and warned of already.
      stderr: once(jobs.flatMap((j) => j.err.filter((l) => !l.startsWith('tidemark: warning: ')))),
    };
  } catch (error) {
    // These files were written by this run's own jobs a moment ago: not merging (reading,
    // merging or judging them again) is tidemark's contradiction, never a usage error.
    if (error instanceof UsageError) throw new JobsEnded(EXIT.error, [`tidemark: harness error: the jobs' results do not merge: ${error.message}`]);
    throw error;
  }
}

/** The order of a job's phases: a job past a phase has done all of its share of it. */
const PHASES: readonly JobStand['phase'][] = ['start', 'regressions', 'scenarios', 'worlds', 'shrinking', 'end'];

/**
 * The jobs' progress as one check's: regressions and scenarios done over all the jobs, then
 * the generated worlds they ran. Read from the stage each job's check says it is at (the
 * words check gives `doing`); a stage it does not know changes nothing.
 */
class JobsBoard {
  private readonly stands: JobStand[];
  private readonly shares: { readonly regressions: number; readonly scenarios: readonly string[] }[];
  /** Worlds run while some job was still before its worlds: told once every job has reached them. */
  private pending = { generated: 0, shrinking: 0 };

  constructor(
    count: number,
    private readonly regressions: number,
    private readonly progress: Progress,
  ) {
    this.stands = Array.from({ length: count }, () => ({ phase: 'start', done: 0 }));
    this.shares = Array.from({ length: count }, (_, i) => {
      const shard = { index: i + 1, count };
      return { regressions: Array.from({ length: regressions }, (_, j) => j).filter((j) => owns(shard, j)).length, scenarios: ALL_SCENARIOS.filter((_, j) => owns(shard, j)).map((s) => s.name) };
    });
  }

  /** Job `index` (from 1) says it is at `stage`. */
  saw(index: number, stage: string): void {
    const share = this.shares[index - 1]!;
    const before = this.stands[index - 1]!;
    let m: RegExpExecArray | null;
    let now: JobStand | null = null;
    if ((m = /^regression (\d+)$/.exec(stage))) now = { phase: 'regressions', done: Number(m[1]) - 1 };
    else if ((m = /^scenario (.+)$/.exec(stage)) && share.scenarios.includes(m[1]!)) now = { phase: 'scenarios', done: share.scenarios.indexOf(m[1]!) };
    else if ((m = /^generated worlds \((\d+) done\)$/.exec(stage))) now = { phase: 'worlds', done: Number(m[1]) };
    else if ((m = /^shrinking a failure \((\d+) worlds run\)$/.exec(stage))) now = { phase: 'shrinking', done: Number(m[1]) };
    else if (stage === 'writing outputs') now = { phase: 'end', done: 0 };
    if (now === null) return;
    this.stands[index - 1] = now;
    const ran = (s: JobStand): number => (s.phase === 'worlds' || s.phase === 'shrinking' ? s.done : 0);
    const more = Math.max(0, ran(now) - ran(before));
    if (now.phase === 'shrinking') this.pending.shrinking += more;
    else this.pending.generated += more;
    this.show();
  }

  private show(): void {
    const rank = (phase: JobStand['phase']): number => PHASES.indexOf(phase);
    const done = (phase: 'regressions' | 'scenarios'): number =>
      this.stands.reduce((sum, s, i) => sum + (s.phase === phase ? s.done : rank(s.phase) > rank(phase) ? (phase === 'regressions' ? this.shares[i]!.regressions : this.shares[i]!.scenarios.length) : 0), 0);
    const first = Math.min(...this.stands.map((s) => rank(s.phase)));
    if (first <= rank('regressions')) return this.progress.regressions(done('regressions'), this.regressions);
    if (first === rank('scenarios')) return this.progress.scenarios(done('scenarios'), ALL_SCENARIOS.length);
    for (; this.pending.generated > 0; this.pending.generated--) this.progress.world(false);
    for (; this.pending.shrinking > 0; this.pending.shrinking--) this.progress.world(true);
  }
}
