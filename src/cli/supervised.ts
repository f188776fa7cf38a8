import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { counterMemory, currentStage, onStage, reporterSource, whereNow, type Stage } from './activity.js';
import type { Io } from './io.js';
import { liveResources } from '../adapter/process/bridge.js';
import { killMarked } from '../adapter/process/marks.js';
import { stopJobs } from './job-stop.js';
import type { ShardPeers } from '../run/conformance.js';

/**
 * The checking process, run by the supervisor (src/cli/supervisor.ts). It runs the command and
 * tells its supervisor everything needed to judge a run that does not end well: the stage
 * (over IPC, as it changes), the world-call counters (from a reporter thread, which keeps
 * talking while the main thread spins), the consumer processes and stores to clean up, and
 * finally the verdict it printed, from which the supervisor takes the exit code. Whatever the
 * adapter leaves running, the process ends right after that.
 *
 * An in-process adapter runs in this process and can reach the same IPC channel
 * (`process.send`). So every message carries the run's key: a secret the supervisor hands over
 * once, at start-up, before any adapter code is loaded, kept here in a closure and never in
 * the environment. A message without it is ignored. What the key cannot stop, code that runs in
 * this process and reads its memory or patches its built-ins, docs/adapters.md says.
 */
export const SUPERVISED = 'TIDEMARK_SUPERVISED';
/** The pipe the reporter thread writes the counters to. */
export const REPORT_FD = 4;
/** How often the counters and the resources to clean up are reported. */
const TICK_MS = 200;

/** What the run printed as its verdict: the word of check's `verdict:` line, or of replay's headline. */
export type Verdict = 'pass' | 'fail' | 'unknown' | 'error';

/** Every message but the first (which asks for the key) carries the run's key. */
export type ToSupervisor =
  | { readonly t: 'hello' }
  | { readonly t: 'stage'; readonly key: string; readonly stage: Stage }
  | { readonly t: 'resources'; readonly key: string; readonly groups: readonly number[]; readonly stores: readonly string[] }
  | { readonly t: 'done'; readonly key: string; readonly code: number; readonly verdict: Verdict | null }
  /** A job of `check --jobs` found its first failing world at index `at` (src/cli/jobs.ts). */
  | { readonly t: 'failed'; readonly key: string; readonly at: number };

export type ToChild =
  /** The run's key, and for a job of `check --jobs` the key of the check's own messages to it (`bound`). */
  | { readonly t: 'key'; readonly key: string; readonly peerKey?: string }
  /** Stop; `again`: the signal came a second time, stop at once. */
  | { readonly t: 'stop'; readonly signal: NodeJS.Signals; readonly again?: boolean }
  /**
   * To a job of `check --jobs`: another job failed at index `at` (see ShardPeers). It carries
   * a key of its own, never the run's: an adapter that listens to this process's messages
   * learns it, and with it can stop only its own job, which it could end anyway; the merge
   * then refuses the run (src/cli/merge.ts), never a pass.
   */
  | { readonly t: 'bound'; readonly key: string; readonly at: number };

/**
 * The lines that print a verdict, by command: check's last line, and replay's headline (an
 * untested scenario is no pass: unknown). Only lines the command prints through its Io count,
 * never what an adapter writes to stdout itself.
 */
const VERDICT_LINES: readonly { readonly pattern: RegExp; readonly verdict: (m: RegExpExecArray) => Verdict }[] = [
  { pattern: /^verdict: (pass|fail|unknown|error)\b/, verdict: (m) => m[1] as Verdict },
  { pattern: /^(PASS|FAIL|UNKNOWN|UNTESTED|HARNESS ERROR) /, verdict: (m) => ({ PASS: 'pass', FAIL: 'fail', UNKNOWN: 'unknown', UNTESTED: 'unknown', 'HARNESS ERROR': 'error' })[m[1] as string] as Verdict },
];

/** The verdict a printed line states, if it is a verdict line. */
export function verdictOf(line: string): Verdict | null {
  for (const { pattern, verdict } of VERDICT_LINES) {
    const m = pattern.exec(line);
    if (m) return verdict(m);
  }
  return null;
}

const SIGNAL_CODES: Readonly<Record<string, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * Kills every consumer process group still running, and with the run's mark every process they
 * started outside their groups (src/adapter/process/marks.ts), and removes every temporary store.
 */
export function cleanUp(groups: readonly number[], stores: readonly string[], mark?: string): void {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  if (mark !== undefined) killMarked(mark);
  for (const dir of stores) rmSync(dir, { recursive: true, force: true });
}

/**
 * Asks the supervisor for the run's key and runs the command once it has it: before that,
 * nothing of the adapter is loaded, so nothing of it can have seen the key arrive.
 */
export function runSupervised(command: (io: Io, peers: ShardPeers | undefined) => Promise<number>, io: Io): void {
  // Taken now, before an adapter could replace it.
  const post = process.send?.bind(process);
  const onKey = (message: ToChild): void => {
    if (message?.t !== 'key') return;
    process.off('message', onKey);
    supervised(command, io, message.key, message.peerKey, post);
  };
  process.on('message', onKey);
  post?.({ t: 'hello' } satisfies ToSupervisor);
}

type Post = NonNullable<typeof process.send>;

function supervised(command: (io: Io, peers: ShardPeers | undefined) => Promise<number>, plain: Io, key: string, peerKey: string | undefined, post: Post | undefined): void {
  type Unkeyed<M> = M extends { readonly key: string } ? Omit<M, 'key'> : never;
  const send = (message: Unkeyed<ToSupervisor>, then?: () => void): void => {
    if (process.connected && post) post({ ...message, key }, undefined, {}, () => then?.());
    else then?.();
  };
  // The verdict the run printed, as the command printed it: the supervisor's exit code comes from it.
  let verdict: Verdict | null = null;
  // Once the run has ended (an exception outside any call ended it, say), whatever the command
  // still prints would follow the verdict: it is dropped.
  const io: Io = {
    ...plain,
    err: (line) => {
      if (!finished) plain.err(line);
    },
    out: (line) => {
      if (finished) return;
      verdict = verdictOf(line) ?? verdict;
      plain.out(line);
    },
  };
  // The channel to the supervisor must not keep the process alive: a run left with nothing
  // to do but wait on a promise that can never settle has to be seen (beforeExit, below).
  process.channel?.unref();
  const realExit = process.exit.bind(process);
  let finished = false;
  /** Where process.exit was called from, when the adapter called it. */
  let exitStack: string | null = null;

  // The reporter thread: counters of world calls, readable while the main thread is stuck.
  const reporter = new Worker(reporterSource(REPORT_FD, TICK_MS), { eval: true, workerData: counterMemory });
  reporter.unref();
  reporter.on('error', () => {});
  onStage((stage) => send({ t: 'stage', stage }));
  let reported = '';
  const tick = setInterval(() => {
    const { groups, stores } = liveResources();
    const now = JSON.stringify([groups, stores]);
    if (now !== reported) send({ t: 'resources', groups, stores });
    reported = now;
  }, TICK_MS);
  tick.unref();

  const cleanUpLive = (): void => {
    const { groups, stores, mark } = liveResources();
    cleanUp(groups, stores, mark);
  };

  /** Ends the run: the verdict (or the account of why there is none) is printed; exit with its code. */
  const end = (code: number): void => {
    if (finished) return;
    finished = true;
    clearInterval(tick);
    cleanUpLive();
    const exit = (): void => {
      // stdout and stderr are flushed first, so nothing printed is lost to the exit.
      process.stdout.write('', () => process.stderr.write('', () => realExit(code)));
      setTimeout(() => realExit(code), 2000).unref();
    };
    send({ t: 'done', code, verdict }, exit);
  };

  // An adapter that ends the process: noted with where it was called, so the message can say.
  process.exit = ((code?: number | string | null) => {
    if (finished) return undefined as never;
    exitStack = new Error('process.exit was called').stack ?? null;
    return realExit(code ?? undefined);
  }) as typeof process.exit;

  process.on('exit', (code) => {
    cleanUpLive();
    if (finished) return;
    const where = exitStack?.split('\n').slice(2, 8).join('\n') ?? '';
    process.stderr.write(`tidemark: process.exit(${code}) was called during ${whereNow()}; an adapter must not end the process${where ? `:\n${where}` : ''}\n`);
  });

  // Nothing left to run, yet no verdict: the run waits on a promise that can never settle.
  process.on('beforeExit', () => {
    if (finished) return;
    io.err(`tidemark: the run cannot go on: it waits on a promise that nothing is left to settle, during ${whereNow()}`);
    io.out('verdict: unknown');
    end(2);
  });

  // Errors thrown outside any world call (a timer, an unhandled rejection) end the run as
  // unknown when the consumer's own code runs here; otherwise they are tidemark's own.
  process.on('uncaughtException', (error, origin) => {
    // After the verdict (a consumer's timer set to fire later than the run's end): too late to
    // change it, but never silent.
    if (finished) {
      process.stderr.write(`tidemark: ${origin === 'unhandledRejection' ? 'an unhandled rejection' : 'an uncaught exception'} after the verdict was printed; the verdict did not see it:\n${indent(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
      return;
    }
    const kind = origin === 'unhandledRejection' ? 'an unhandled rejection' : 'an uncaught exception';
    const stack = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    if (currentStage().inProcess) {
      io.err(`tidemark: ${kind} escaped outside any world call, during ${whereNow()}:`);
      io.err(indent(stack));
      io.out('verdict: unknown');
      end(2);
    } else {
      io.err(`tidemark: harness error: ${kind} during ${whereNow()}:`);
      io.err(indent(stack));
      end(4);
    }
  });

  /**
   * A signal, or the supervisor's stop. A check run as jobs exits once they are gone
   * (job-stop.ts); a second signal does not wait. The supervisor's stop after a signal is no
   * second one: a signal to the whole process group (Ctrl-C in a terminal) reaches this
   * process and the supervisor, which then asks for the same stop.
   */
  const interrupted = (signal: NodeJS.Signals, by: 'signal' | 'supervisor'): void => {
    const first = !finished;
    finished = true;
    const code = SIGNAL_CODES[signal] ?? 2;
    if (!first) {
      cleanUpLive();
      return by === 'signal' ? realExit(code) : undefined;
    }
    // The jobs of a `check --jobs` first, each told to stop and given a moment to clean up
    // after itself: the run's mark, which every job's marks nest under, would SIGKILL them.
    const exit = (): void => {
      cleanUpLive();
      realExit(code);
    };
    void stopJobs().then(exit, exit);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => interrupted(signal, 'signal'));
  // A job of `check --jobs` (its supervisor gave a peer key; src/cli/jobs.ts): what it tells,
  // and hears from, the jobs beside it. Handed to the command, never exported: an adapter that
  // imports this module finds nothing to call. `bound`: the lowest index at which another job failed.
  let bound: number | null = null;
  const peers: ShardPeers | undefined = peerKey === undefined ? undefined : { failed: (at) => send({ t: 'failed', at }), bound: () => bound };
  process.on('message', (message: ToChild) => {
    if (message?.t === 'stop') interrupted(message.signal, message.again === true ? 'signal' : 'supervisor');
    else if (message?.t === 'bound' && peers !== undefined && message.key === peerKey && Number.isSafeInteger(message.at) && message.at >= 0) bound = Math.min(bound ?? message.at, message.at);
  });
  // The supervisor is gone (killed itself): nobody reads the verdict; leave nothing behind.
  process.on('disconnect', () => {
    if (!finished) interrupted('SIGTERM', 'supervisor');
  });

  command(io, peers).then(end, (error: unknown) => {
    io.err(`tidemark: harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    end(4);
  });
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
