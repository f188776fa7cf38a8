import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { PROCESS_LIMIT_MS } from './spec.js';
import { describeActivity, readCounters, type Counters, type Stage } from './activity.js';
import { EXIT } from './spec.js';
import { cleanUp, REPORT_FD, SUPERVISED, type ToChild, type ToSupervisor, type Verdict } from './supervised.js';
import { MARK_VARIABLE, newMark, runMark } from '../adapter/process/marks.js';

/**
 * The `tidemark` command runs `check`, `replay` and `regressions` (everything that runs a
 * consumer) in a child process and watches it. Only the child can print a verdict, and it
 * tells the supervisor the verdict it printed, in a message carrying the run's key (a secret
 * handed to the child before any adapter code loads; see src/cli/supervised.ts). The exit code
 * is the verdict's, so the command exits 0 only after a printed passing verdict, whatever the
 * adapter does:
 *
 * - a message without the key (an adapter's `process.send({ t: 'done', code: 0 })`) is
 *   ignored, and said to have been;
 * - a check or replay that reports an end without having printed a verdict is `unknown`;
 *
 * - a child that ends without a verdict (an adapter called process.exit, or it was killed)
 *   is `unknown`, exit 2, with what it was doing;
 * - a child that makes no progress (no world call, no new world, no adapter hook) for the
 *   watchdog's time is killed: `unknown`, exit 2, naming the adapter and its last world call;
 * - SIGINT, SIGTERM and SIGHUP stop the child, kill every consumer process group and remove
 *   the temporary stores, then exit 130, 143 or 129.
 *
 * The child ends itself right after its verdict, so handles an adapter left open never hold
 * the command; the supervisor kills it if it lingers.
 */

/** The watchdog's default, in seconds: far above any healthy pause between world calls. */
export const WATCHDOG_S = 60;
/** The watchdog is never shorter than a process consumer's own limits plus this margin. */
const WATCHDOG_MARGIN_MS = 10_000;
/** How long a child that printed its verdict, or was told to stop, may take to exit. */
export const EXIT_GRACE_MS = 2000;
const STOP_GRACE_MS = 1000;
/** How long the checking process has to exit once a signal came twice. */
const AGAIN_GRACE_MS = 1000;

const SIGNAL_CODES: Readonly<Record<string, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/** The commands that end in a verdict on a consumer: their exit code is their printed verdict's. */
const JUDGING = ['check', 'replay'];

/**
 * The exit code of a run that told its end: the printed verdict's (pass 0, fail 1, unknown 2,
 * error 4), unless the command itself ended in trouble after it (3, 4: an output it could not
 * write). A check or replay that printed no verdict cannot pass or fail: unknown.
 */
export function exitCode(command: string, reported: number, verdict: Verdict | null): { readonly code: number; readonly problem?: string } {
  if (reported === EXIT.usage || reported === EXIT.error) return { code: reported };
  if (verdict !== null) return { code: EXIT[verdict] };
  if (!JUDGING.includes(command) || reported === EXIT.unknown) return { code: reported };
  return { code: EXIT.unknown, problem: `tidemark: the run ended without a verdict: the checking process reported exit code ${reported} but printed no verdict line` };
}

/**
 * A number of seconds as the command's parser reads one: decimal notation only, so that an
 * empty TIDEMARK_WATCHDOG (a CI template with no value) is no 0, which would turn the
 * watchdog off, and `0x10` no 16 the command would refuse. Undefined when it is none.
 */
function secondsOf(text: string | undefined): number | undefined {
  return text !== undefined && /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(text) ? Number(text) : undefined;
}

/** The watchdog for these arguments, in ms (0: off): --watchdog, else TIDEMARK_WATCHDOG, else the default. */
export function watchdogMs(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  const flag = (name: string): number | undefined => {
    // The last one given, as the command's parser takes it.
    let i = -1;
    argv.forEach((a, at) => {
      if (a === `--${name}` || a.startsWith(`--${name}=`)) i = at;
    });
    if (i < 0) return undefined;
    return secondsOf(argv[i]!.includes('=') ? argv[i]!.slice(argv[i]!.indexOf('=') + 1) : argv[i + 1]);
  };
  const seconds = flag('watchdog') ?? secondsOf(env.TIDEMARK_WATCHDOG) ?? WATCHDOG_S;
  if (seconds === 0) return 0;
  // A process consumer may legitimately be silent for its hello limit while it starts, then
  // for its stall limit before its first call: the watchdog waits longer than both together.
  // A connector has no hello: only its stall limit.
  const given = (name: string): boolean => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const command = given('command');
  if (!command && !given('singer') && !given('airbyte')) return seconds * 1000;
  const floor = (flag('stall-ms') ?? PROCESS_LIMIT_MS) + (command ? (flag('hello-ms') ?? PROCESS_LIMIT_MS) : 0) + WATCHDOG_MARGIN_MS;
  return Math.max(seconds * 1000, floor);
}

export function supervise(entry: string, argv: readonly string[]): void {
  const limit = watchdogMs(argv, process.env);
  // The run's key: only the child's own code is told it, before any adapter code loads.
  const key = randomBytes(32).toString('hex');
  let keyGiven = false;
  let forged = 0;
  // The checking process runs under a mark of this process's run, so every process it starts
  // carries a mark beginning with this run's (src/adapter/process/marks.ts): when it dies, they
  // are found by that prefix, whether or not it had told of them yet.
  const child = fork(entry, [...argv], {
    execArgv: process.execArgv,
    env: { ...process.env, [SUPERVISED]: '1', [MARK_VARIABLE]: newMark() },
    stdio: ['inherit', 'inherit', 'inherit', 'ipc', 'pipe'],
  });
  let stage: Stage | null = null;
  let counters: Counters = { calls: 0, hooks: 0, lastCall: null, inHook: null };
  let resources: { groups: readonly number[]; stores: readonly string[] } = { groups: [], stores: [] };
  let verdict: { readonly code: number; readonly problem?: string } | null = null;
  /** Set when the supervisor decides the outcome itself: the watchdog fired, or a signal came. */
  let ending: { readonly code: number; readonly message: string; readonly verdictLine: boolean } | null = null;
  let lastProgress = Date.now();
  let progressKey = '';
  const progressed = (): void => {
    const key = `${counters.calls}|${counters.hooks}|${stage?.stage ?? ''}`;
    if (key === progressKey) return;
    progressKey = key;
    lastProgress = Date.now();
  };
  const where = (): string => (stage ? describeActivity(stage, counters) : 'start-up, before the consumer was loaded');

  child.on('message', (message: ToSupervisor) => {
    if (message?.t === 'hello') {
      // Asked once, at the child's start-up; anyone asking later is not tidemark.
      if (!keyGiven && child.connected) child.send({ t: 'key', key } satisfies ToChild, () => {});
      keyGiven = true;
      return;
    }
    if (message?.key !== key) {
      forged++;
      return;
    }
    // The watchdog is armed by the first stage: starting Node and loading tidemark is not the adapter's time.
    if (message.t === 'stage') stage = message.stage;
    else if (message.t === 'resources') resources = { groups: message.groups, stores: message.stores };
    else if (message.t === 'done') {
      verdict = exitCode(argv[0] ?? '', message.code, message.verdict);
      setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS).unref();
    }
    progressed();
  });
  const report = child.stdio[REPORT_FD] as Readable | null | undefined;
  if (report) {
    createInterface({ input: report }).on('line', (line) => {
      try {
        counters = readCounters(JSON.parse(line) as number[]);
        progressed();
      } catch {
        // A torn line: the next one comes within a fraction of a second.
      }
    });
  }

  const watchdog = setInterval(() => {
    if (limit === 0 || stage === null || verdict !== null || ending !== null || Date.now() - lastProgress < limit) return;
    ending = {
      code: 2,
      verdictLine: true,
      message: `tidemark: watchdog: no progress for ${limit / 1000} s (no world call, no new world) during ${where()}. The adapter is looping, or waiting on something that never comes. --watchdog SECONDS (or TIDEMARK_WATCHDOG) sets this limit.`,
    };
    child.kill('SIGKILL');
  }, 100);

  const onSignal = (signal: NodeJS.Signals): void => {
    if (ending?.code === SIGNAL_CODES[signal]) {
      // Asked twice: stop at once. The checking process is told first and given a moment:
      // stopping at once, its exit hooks still kill the jobs of a `check --jobs` and remove
      // their directory, which a SIGKILL of it would leave to run on, orphaned.
      if (child.connected) child.send({ t: 'stop', signal, again: true } satisfies ToChild, () => {});
      setTimeout(() => child.kill('SIGKILL'), AGAIN_GRACE_MS).unref();
      return;
    }
    ending = { code: SIGNAL_CODES[signal] ?? 2, verdictLine: false, message: `tidemark: interrupted by ${signal}: the run was stopped, its consumer processes killed and its temporary stores removed` };
    if (child.connected) child.send({ t: 'stop', signal } satisfies ToChild, () => {});
    setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));

  let spawnError: Error | null = null;
  child.on('error', (error) => {
    spawnError = error;
  });
  child.on('exit', (code, signal) => {
    clearInterval(watchdog);
    // Whatever the child managed or not: no consumer process of the run outlives it. The
    // groups and stores are what it last told (every 200 ms); the mark reaches every process
    // it started, those it died too soon to tell of included.
    cleanUp(resources.groups, resources.stores, runMark());
    const finish = (exitCode: number): void => {
      process.stdout.write('', () => process.stderr.write('', () => process.exit(exitCode)));
    };
    if (forged > 0) {
      process.stderr.write(
        `tidemark: ignored ${forged} message${forged === 1 ? '' : 's'} to the supervisor without this run's key: code in the checking process (an adapter calling process.send?) tried to speak for tidemark\n`,
      );
    }
    if (ending !== null) {
      process.stderr.write(`${ending.message}\n`);
      if (ending.verdictLine) process.stdout.write('verdict: unknown\n');
      return finish(ending.code);
    }
    if (verdict !== null) {
      if (verdict.problem !== undefined) {
        process.stderr.write(`${verdict.problem}\n`);
        process.stdout.write('verdict: unknown\n');
      }
      return finish(verdict.code);
    }
    if (spawnError !== null || stage === null) {
      // It never got as far as saying what it was doing: tidemark itself could not run.
      process.stderr.write(`tidemark: harness error: the checking process ${spawnError ? `could not start: ${(spawnError as Error).message}` : `ended at start-up with ${signal ?? `code ${code}`}`}\n`);
      return finish(4);
    }
    // A process that exited said why itself (src/cli/supervised.ts); one killed by a signal could not.
    process.stderr.write(`tidemark: the run ended without a verdict: the checking process ${signal ? `was killed by ${signal} during ${where()}` : `exited with code ${code}`}\n`);
    process.stdout.write('verdict: unknown\n');
    finish(2);
  });
}
