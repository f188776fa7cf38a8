import type { History } from '../../model/history.js';

/**
 * What a connector said in its own words (LOG, TRACE and SCHEMA lines, lines that are not
 * JSON, the end of its stderr), kept per sync attempt so that a failure shows them beside
 * the timeline. None of it goes into the history: it is not the same in every run.
 *
 * A failure is shown from its Execution, which a consumer never sees; what it sees is each
 * world's calls. So each world's output is kept with a signature of it that the history
 * also holds: for every incarnation, the calls that returned to it (outcome ok; a claim,
 * which ends the incarnation, is left out), each with what it returned that tells worlds apart (how many events a page held, which event an emit
 * was for). The output shown is that of the latest world whose signature is the history's.
 */

/** Lines kept per sync attempt, and characters per line. */
export const LINES_PER_ATTEMPT = 5;
const LINE_CHARS = 300;
/** Sync attempts shown, the last ones. */
const ATTEMPTS_SHOWN = 8;
/** Worlds whose output is kept, the most recent: a failure is shown soon after its world ran. */
const WORLDS_KEPT = 256;

/** One world's output and signature, by incarnation (`w1#2`). */
export class WorldOutput {
  readonly calls = new Map<string, string[]>();
  readonly lines = new Map<string, readonly string[]>();

  /** A call that returned to this incarnation. */
  returned(actor: string, label: string): void {
    let calls = this.calls.get(actor);
    if (calls === undefined) this.calls.set(actor, (calls = []));
    calls.push(label);
  }

  /** What a sync attempt said, once it is over. */
  said(actor: string, lines: readonly string[]): void {
    const shown = lines.map(readable).filter((l) => l !== null);
    if (shown.length > 0) this.lines.set(actor, shown.slice(-LINES_PER_ATTEMPT).map((l) => (l.length > LINE_CHARS ? `${l.slice(0, LINE_CHARS)}...` : l)));
  }

  signature(): string {
    return signatureOf(this.calls);
  }
}

/** The recent worlds' output of one connector consumer. */
export class ConnectorOutputs {
  private readonly worlds = new Map<object, WorldOutput>();

  /** The output of the world this key stands for (one object per world run). */
  of(world: object): WorldOutput {
    let out = this.worlds.get(world);
    if (out === undefined) {
      this.worlds.set(world, (out = new WorldOutput()));
      if (this.worlds.size > WORLDS_KEPT) this.worlds.delete(this.worlds.keys().next().value as object);
    }
    return out;
  }

  /** The lines to show under a failure of this history, or none when no kept world ran it. */
  forHistory(history: History): readonly string[] {
    const wanted = signatureOf(historyCalls(history));
    const found = [...this.worlds.values()].reverse().find((w) => w.signature() === wanted);
    if (found === undefined || found.lines.size === 0) return [];
    const attempts = [...found.lines.entries()].slice(-ATTEMPTS_SHOWN);
    const skipped = found.lines.size - attempts.length;
    return [
      `Connector output (the last ${LINES_PER_ATTEMPT} lines it logged in each sync attempt: LOG, TRACE, lines that are not JSON, stderr${skipped > 0 ? `; the last ${ATTEMPTS_SHOWN} attempts` : ''}):`,
      ...attempts.flatMap(([actor, lines]) => lines.map((l, i) => `  ${(i === 0 ? actor : '').padEnd(6)} ${l}`)),
    ];
  }
}

/** Messages that are data, not the connector's words: left out. */
const DATA_MESSAGES = ['SCHEMA', 'ACTIVATE_VERSION', 'BATCH', 'SPEC', 'CATALOG'];

/** An Airbyte LOG or TRACE message as a log line (`LOG INFO ...`); a schema or catalog, null; any other line as it is. */
function readable(line: string): string | null {
  let m: { type?: unknown; log?: { level?: unknown; message?: unknown }; trace?: { type?: unknown; error?: { message?: unknown } } };
  try {
    m = JSON.parse(line) as typeof m;
  } catch {
    return line;
  }
  if (typeof m?.type === 'string' && DATA_MESSAGES.includes(m.type)) return null;
  if (m?.type === 'LOG' && typeof m.log?.message === 'string') return `LOG ${String(m.log.level ?? '')} ${m.log.message}`;
  if (m?.type === 'TRACE' && typeof m.trace?.error?.message === 'string') return `TRACE ${String(m.trace.type ?? '')} ${m.trace.error.message}`;
  return line;
}

/** The label of a call that returned, as both the consumer and the history can tell it. */
export function callLabel(kind: string, detail?: string | number): string {
  return detail === undefined ? kind : `${kind}:${detail}`;
}

/** Each incarnation's calls that returned (outcome ok), from a history. */
function historyCalls(history: History): Map<string, string[]> {
  const calls = new Map<string, string[]>();
  for (const step of history.steps) {
    // A claim ends the incarnation: what it returns may never reach it.
    if (step.kind !== 'call' || step.outcome.kind !== 'ok' || step.call.kind === 'claim') continue;
    const actor = `${step.actor.worker}#${step.actor.incarnation}`;
    const c = step.call;
    const label =
      c.kind === 'fetch' ? callLabel('fetch', step.result?.kind === 'page' ? step.result.page.events.length : '?')
      : c.kind === 'emit' ? callLabel('emit', c.event.id)
      : callLabel(c.kind);
    let list = calls.get(actor);
    if (list === undefined) calls.set(actor, (list = []));
    list.push(label);
  }
  return calls;
}

function signatureOf(calls: ReadonlyMap<string, readonly string[]>): string {
  return JSON.stringify([...calls.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
