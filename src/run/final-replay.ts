import type { AnyConsumer } from '../adapter/consumer.js';
import { execute, type Execution } from './execute.js';

/** A failure shown to the user, seen once more under real kills. */
export interface FinalReplay {
  /** What failed, as the output names it: `scenario NAME`, `the minimal world`. */
  readonly what: string;
  /** As the check ran it, with session crashes in most worlds. */
  readonly sampled: Execution;
  /** Every incarnation its own process, killed with SIGKILL. */
  readonly real: Execution;
}

/**
 * Runs each failing world again with real kills. Session crashes prove only what a process
 * keeps in memory; a failure is what a user acts on, so the one they read and replay
 * (`tidemark replay` kills for real) must be what real kills do. Same history, byte for
 * byte: the session crash changed nothing in that world. Another history: the consumer keeps
 * state a session crash does not drop, or its client ignores `crash`.
 */
export async function replayUnderRealKills(failures: readonly { readonly what: string; readonly execution: Execution }[], real: AnyConsumer): Promise<FinalReplay[]> {
  const out: FinalReplay[] = [];
  for (const f of failures) out.push({ what: f.what, sampled: f.execution, real: await execute(f.execution.plan, real) });
  return out;
}

/**
 * What the check prints about its final replays, and whether any failure was not borne out:
 * a failure whose world passes under real kills was made by the session crash, so the
 * check cannot say the consumer fails (unknown, with the reason); one that fails either way
 * stays a failure, with its real-kill history named.
 */
export function describeFinalReplays(replays: readonly FinalReplay[]): { readonly lines: readonly string[]; readonly unconfirmed: number } {
  if (replays.length === 0) return { lines: [], unconfirmed: 0 };
  const differ = replays.filter((r) => r.real.hash !== r.sampled.hash);
  const lines = [`final replays under real kills: ${replays.length} failure(s) run again, ${replays.length - differ.length} with the same history`];
  for (const r of differ) {
    lines.push(
      `  warning: ${r.what} under real kills: ${r.real.result.verdict.status}, History sha256 ${r.real.hash}, not ${r.sampled.hash} as with session crashes. The consumer keeps state that a session crash does not drop (module-level data, open handles, buffers), or its client ignores crash: check it with --kills real.`,
    );
  }
  return { lines, unconfirmed: differ.filter((r) => r.real.result.verdict.status === 'pass').length };
}
