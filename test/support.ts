import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallStep, History, Step } from '../model/history.js';
import { comparePositions, isPosition, type Position } from '../model/order.js';
import { findScenario } from '../scenarios/named.js';
import type { Plan } from '../scenarios/plan.js';
import { main } from '../src/cli.js';
import { WorldError } from '../src/world/errors.js';
import { inject } from 'vitest';

/**
 * The seed for property tests: TIDEMARK_SEED when it is set, else fresh for each run. Either
 * way test/global-setup.ts decides it once for the whole run and prints it first, so that a
 * failure in any test that uses it runs again with `TIDEMARK_SEED=<seed>`.
 */
export const SEED = inject('seed');

export function calls(history: History): CallStep[] {
  return history.steps.filter((s: Step): s is CallStep => s.kind === 'call');
}

/** Watermark values that took effect, in order. */
export function committedWatermarks(history: History): { seq: number; value: unknown }[] {
  return calls(history).flatMap((s) =>
    s.applied && s.call.kind === 'commit' ? s.call.ops.filter((o) => o.op === 'watermark').map((o) => ({ seq: s.seq, value: o.value })) : [],
  );
}

/** Applied effects (sink or store) per event id. */
export function effectsById(history: History): Map<string, number> {
  return effectsBy(history, (e) => e.id);
}

/** Effects per event version (`id@version`): a mutable record's new version is owed an effect of its own. */
export function effectsByVersion(history: History): Map<string, number> {
  return effectsBy(history, (e) => `${e.id}@${e.version}`);
}

function effectsBy(history: History, key: (e: { id: string; version: number }) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of calls(history)) {
    if (!s.applied) continue;
    const refs = s.call.kind === 'emit' ? [s.call.event] : s.call.kind === 'commit' ? s.call.ops.flatMap((o) => (o.op === 'effect' ? [o.event] : [])) : [];
    for (const r of refs) out.set(key(r), (out.get(key(r)) ?? 0) + 1);
  }
  return out;
}

export function pos(key: number, id: string): Position {
  return { key: [key], id };
}

export function samePosition(a: unknown, b: Position): boolean {
  return isPosition(a) && comparePositions(a, b) === 0;
}

const scratch = mkdtempSync(join(tmpdir(), 'tidemark-test-'));
let files = 0;

/**
 * Runs the CLI in-process and collects what it prints. A `check` without `--regressions`
 * gets a fresh regression file of its own, so tests never write into the repository and
 * never see each other's failures.
 */
export async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  if (argv[0] === 'check' && !argv.includes('--regressions')) argv = [...argv, '--regressions', join(scratch, `regressions-${files++}.json`)];
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Splits a printed replay command into argv, dropping `npx tidemark` and the shell quotes. */
export function argvOf(command: string): string[] {
  return (command.match(/'[^']*'|"[^"]*"|\S+/g) ?? []).slice(2).map((a) => a.replace(/^(['"])(.*)\1$/, '$2'));
}

/** The WorldError a call throws; fails the test when it throws nothing or something else. */
export function worldError(fn: () => unknown): WorldError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WorldError) return error;
    throw error;
  }
  throw new Error('expected a WorldError, but the call succeeded');
}

/**
 * The CLI a test starts as a process of its own: the build (test/global-setup.ts builds it
 * before the tests run), as `npx tidemark` runs it.
 */
export const BUILT_CLI = 'dist/src/cli.js';

/** Whether a process with this pid runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * How long a test lets a child run before it is taken to hang and killed. Only a bound
 * against a hang: at least ten times what the slowest such run takes on a quiet machine, so
 * that a loaded machine slows a test down and never fails it. Kept under vitest's own
 * testTimeout (vitest.config.ts), so that the kill, not the timeout, reports the hang.
 */
export const HANG_MS = 300_000;

/**
 * A process as a test first saw it: its pid and its start time (in clock ticks after boot,
 * from /proc/PID/stat). A pid is given again once its process is gone, and a busy machine
 * (pid_max is often 32,768, and the suite starts thousands of processes) can do so within the
 * seconds a test waits for processes to end: judged by its pid alone, another process would
 * be counted as left running, and killed. A process is told apart from its pid's later
 * owners from the moment a test first sees its pid (reads it from a pid file, say); a pid
 * given again before that is not. Without /proc (not Linux), only the pid is known.
 */
export interface Sighting {
  readonly pid: number;
  /** Null when the process had already ended. */
  readonly start: string | null;
}

const PROC = existsSync('/proc/self/stat');

/** The fields of /proc/PID/stat after the command's name (the first is the state), or null when there is no such process. */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

export function sight(pid: number): Sighting {
  if (!PROC) return { pid, start: alive(pid) ? 'unknown' : null };
  // starttime is field 22 of stat; the list starts at field 3.
  return { pid, start: statFields(pid)?.[19] ?? null };
}

/** Whether the process first seen is still there, as a zombie (ended, not yet reaped) too. */
export function stillThere(s: Sighting): boolean {
  if (s.start === null) return false;
  if (!PROC) return alive(s.pid);
  return statFields(s.pid)?.[19] === s.start;
}

/** Whether the process first seen still runs: there, and not a zombie. */
export function stillRuns(s: Sighting): boolean {
  if (!stillThere(s)) return false;
  return !PROC || statFields(s.pid)?.[0] !== 'Z';
}

/** SIGKILLs the process first seen, if it is still there; never a later owner of its pid. */
export function killSighted(s: Sighting): void {
  if (!stillThere(s)) return;
  try {
    process.kill(s.pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

/**
 * Waits until none of these processes is there; returns the pids of those still there after
 * 30 s. A killed process counts as there until its parent reaps it, which a loaded machine
 * can delay; the wait ends as soon as all are gone, so the bound costs nothing when they are.
 * Each is seen (see Sighting) when the wait starts.
 */
export async function pidsGone(pids: readonly number[], isThere: (s: Sighting) => boolean = stillThere): Promise<number[]> {
  return (await waitGone(pids, isThere)).map((s) => s.pid);
}

/**
 * pidsGone, then each process still there is SIGKILLed, so that a failed test leaves nothing
 * running for the rest of the suite. `isThere` is stillRuns where a zombie counts as ended.
 */
export async function leftAndKilled(pids: readonly number[], isThere: (s: Sighting) => boolean = stillThere): Promise<number[]> {
  const left = await waitGone(pids, isThere);
  for (const s of left) killSighted(s);
  return left.map((s) => s.pid);
}

async function waitGone(pids: readonly number[], isThere: (s: Sighting) => boolean): Promise<Sighting[]> {
  let left = pids.map(sight);
  for (let i = 0; i < 600 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = left.filter(isThere);
  }
  return left;
}

/** A named scenario's world with a small step budget, for processes that never finish. */
export function small(name: string): Plan {
  return { ...findScenario(name)!.plan, budget: { adversity: 8, drain: 8 } };
}
