import { ANOMALIES, type Anomaly } from '../../model/anomalies.js';
import type { CheckResult, Verdict } from '../../model/checker.js';
import type { History, HistoryHeader } from '../../model/history.js';
import { RULES } from '../../model/rules.js';
import type { Placement, Plan } from '../../scenarios/plan.js';
import type { Execution } from '../run/execute.js';
import { cutTimeline, describeBinding, renderTimeline, timelineEntries } from './timeline.js';
import { formatRef } from '../../model/event.js';

/** How many anomalies a failure prints in full; the rest are counted. */
const SHOWN = 3;
/** How many rule hints a failure prints; more than three is a list nobody reads at 2 a.m. */
const HINTS = 3;

export interface FailureContext {
  readonly consumer: string;
  readonly execution: Execution;
  /** The one command that replays this exact world. */
  readonly replay: string;
  /** e.g. "after 17 worlds and 9 shrinks" */
  readonly provenance?: string;
  /** The consumer's own words in this world (a connector's logs), as lines; shown before the hash. */
  readonly output?: readonly string[];
}

/**
 * A failure as text: the rule broken and why, the minimal world, the timeline of the steps
 * that ran with the witness marked, the rule's hint, and the replay command last, where a
 * tired eye finds it.
 */
export function renderFailure(ctx: FailureContext): string {
  const { execution } = ctx;
  const { verdict } = execution.result;
  const out = verdictLines(ctx.consumer, verdict, 'please report it with the replay command below');
  out.push('');
  out.push(`World${ctx.provenance ? ` (${ctx.provenance})` : ''}:`);
  out.push(...describePlan(execution.plan).map((l) => `  ${l}`));
  out.push('');
  out.push(...timelineLines(execution.history, verdict));
  out.push(...hintLines(verdict));
  if (ctx.output !== undefined && ctx.output.length > 0) out.push(...ctx.output, '');
  out.push(`History sha256 ${execution.hash}`);
  out.push(`Replay: ${ctx.replay}`);
  return out.join('\n');
}

export interface JudgedContext {
  /** What the history is called: the file it was read from. */
  readonly name: string;
  readonly history: History;
  readonly result: CheckResult;
  readonly hash: string;
}

/**
 * A recorded history judged on its own (`tidemark judge`), told as a failure is: the
 * verdict, the world as the history's header describes it (there is no plan to replay),
 * the timeline with the witness marked and the rule's hint.
 */
export function renderJudged(ctx: JudgedContext): string {
  const { verdict } = ctx.result;
  const out = verdictLines(ctx.name, verdict, 'please report it with this history');
  if (verdict.status === 'pass') return out.join('\n');
  out.push('');
  out.push('World (from the history):');
  out.push(...describeHeader(ctx.history.header).map((l) => `  ${l}`));
  out.push('');
  out.push(...timelineLines(ctx.history, verdict, LONG));
  out.push(...hintLines(verdict));
  out.push(`History sha256 ${ctx.hash}`);
  return out.join('\n');
}

/**
 * Past this many steps a judged history's timeline shows only the steps around the
 * witnesses (or the last ones, when nothing is marked): a recorded history may hold a
 * million steps, where a shrunk counterexample holds dozens.
 */
const LONG = 300;
/** Steps shown on each side of a witness in a long timeline. */
const AROUND = 8;
/** The most lines a failure's timeline prints once folded: past it, it is cut around the witness. */
const LINES = 160;

/** The headline and the findings: the first anomalies, the world's contradictions, or why it could not be judged. */
function verdictLines(name: string, verdict: Verdict, report: string): string[] {
  const out: string[] = [];
  if (verdict.status === 'unknown') {
    out.push(`UNKNOWN  ${name}: the run could not be judged: ${verdict.reason}`);
  } else if (verdict.status === 'pass') {
    out.push(`PASS  ${name}`);
  } else if (verdict.status === 'error') {
    out.push(`HARNESS ERROR  ${name}: the world contradicted its own ground truth. This is a bug in tidemark, not in the consumer; ${report}.`);
    for (const p of verdict.problems.slice(0, SHOWN)) out.push(`  step ${p.seq}: ${p.what}`);
    if (verdict.problems.length > SHOWN) out.push(`  (+${verdict.problems.length - SHOWN} more)`);
  } else {
    const first = verdict.anomalies[0] as Anomaly;
    out.push(`FAIL  ${name}: ${first.kind} (${first.rules.join(' ')}): ${ANOMALIES[first.kind].means}`);
    for (const a of verdict.anomalies.slice(0, SHOWN)) out.push(`  ${a.kind}: ${a.explanation}`);
    if (verdict.anomalies.length > SHOWN) out.push(`  (+${verdict.anomalies.length - SHOWN} more anomalies)`);
  }
  return out;
}

function timelineLines(history: History, verdict: Verdict, long = Number.POSITIVE_INFINITY): string[] {
  const marked = new Set(verdict.status === 'error' ? verdict.problems.map((p) => p.seq) : verdict.anomalies.flatMap((a) => a.steps));
  const { steps } = history;
  if (steps.length <= long) {
    // Folded, a timeline is as long as its story; one still longer is cut around the witness.
    // The witnesses of the findings told in full are shown as they are; those only counted may
    // fold among like steps (a thousand phantom records).
    const focus = new Set(verdict.status === 'error' ? verdict.problems.slice(0, SHOWN).map((p) => p.seq) : verdict.anomalies.slice(0, SHOWN).flatMap((a) => a.steps));
    const entries = timelineEntries(steps, marked, focus);
    if (entries.length <= LINES) return ['Timeline (» marks the witness):', ...entries.map((e) => e.text), ''];
    return [`Timeline (» marks the witness; ${steps.length.toLocaleString('en-US')} steps in ${entries.length.toLocaleString('en-US')} lines, cut to the start, the witness and the end):`, ...cutTimeline(entries, steps, LINES, focus), ''];
  }
  // Windows around the first witnesses, merged where they touch; the end when nothing is marked.
  const centres = marked.size > 0 ? [...marked].sort((x, y) => x - y).slice(0, 2 * SHOWN) : [steps.length - 1];
  const windows: [number, number][] = [];
  for (const c of centres) {
    const from = Math.max(0, c - AROUND);
    const to = Math.min(steps.length - 1, c + AROUND);
    const last = windows.at(-1);
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else windows.push([from, to]);
  }
  const out = [`Timeline (» marks the witness; ${steps.length} steps, shown around ${marked.size > 0 ? 'the witness' : 'the end'}):`];
  let shown = 0;
  for (const [from, to] of windows) {
    if (from > shown) out.push(`  ... ${from - shown} step${from - shown === 1 ? '' : 's'}`);
    out.push(...renderTimeline(steps.slice(from, to + 1), marked));
    shown = to + 1;
  }
  if (shown < steps.length) out.push(`  ... ${steps.length - shown} step${steps.length - shown === 1 ? '' : 's'}`);
  out.push('');
  return out;
}

/** The first anomaly is the most specific evidence; its first rules say where to look. */
function hintLines(verdict: Verdict): string[] {
  if (verdict.status !== 'fail') return [];
  const out: string[] = [];
  const rules = (verdict.anomalies[0] as Anomaly).rules;
  for (const id of rules.slice(0, HINTS)) out.push(`If this fails, check ${id} (${RULES[id].title}): ${RULES[id].hint}`);
  if (rules.length > HINTS) out.push(`Also related: ${rules.slice(HINTS).join(' ')}`);
  out.push('');
  return out;
}

/** How many of the source's initial events the header's description names. */
const EVENTS = 30;

/** The world as a history's header records it: what the source held and promised, and what the consumer claimed. */
export function describeHeader(header: HistoryHeader): string[] {
  const events = header.initial.slice(0, EVENTS).map((e) => `${formatRef(e)}(${e.key.join(',')}${e.attrs.kind === undefined ? '' : ` ${String(e.attrs.kind)}`})`);
  if (header.initial.length > EVENTS) events.push(`... (+${header.initial.length - EVENTS} more)`);
  const { contract } = header;
  return [
    `events (${header.initial.length}): ${events.join(' ') || 'none'}`,
    `binding: ${describeBinding(header.binding)}`,
    `source: ${contract.kind}${contract.kind === 'replay-window' ? `(${contract.window})` : ''}, page size ${header.pageSize}, lease time to live ${header.leaseTtlSteps} steps`,
    `consumer: ${header.delivery}${header.poison.length > 0 ? `, poison ${header.poison.join(' ')}` : ''}${header.refusals === undefined ? '' : `, refused effects: ${header.refusals}`}`,
  ];
}

/** The first EVENTS items of a list, and how many more there are. */
function firstOf(items: readonly string[]): string[] {
  return items.length <= EVENTS ? [...items] : [...items.slice(0, EVENTS), `... (+${(items.length - EVENTS).toLocaleString('en-US')} more)`];
}

/** "commit #3"; tied to an event, "commit #0 about e07" or "fetch #1 after e07" (see Placement). */
function address(a: Pick<Placement, 'call' | 'nth' | 'after'>): string {
  if (a.after === undefined) return `${a.call} #${a.nth}`;
  return `${a.call} #${a.nth} ${['emit', 'completed', 'commit'].includes(a.call) ? 'about' : 'after'} ${a.after}`;
}

export function describePlan(plan: Plan): string[] {
  const { binding, source } = plan;
  // The first of each, as a judged history's header is told: the replay command holds the whole world.
  const events = firstOf(plan.events.map((e) => `${formatRef(e)}(${e.key.join(',')}${e.attrs.kind === undefined ? '' : ` ${String(e.attrs.kind)}`})`));
  // Planned faults that never fire are listed too: the plan is what replays, the timeline what happened.
  const faults = firstOf(plan.faults.map((f) => `${f.kind} at ${address(f)}`));
  const mutations = firstOf(plan.mutations.map((m) => `${m.kind} before ${address(m.before)}`));
  const lines = [
    `events (${plan.events.length}): ${events.join(' ') || 'none'}`,
    `binding: ${describeBinding(binding)}`,
    `source: ${source.contract.kind}${source.contract.kind === 'replay-window' ? `(${source.contract.window})` : ''}, page size ${source.pageSize}, resume by token${source.resumes.map((r) => `|${r}`).join('')}`,
    `faults (${plan.faults.length}): ${faults.join(', ') || 'none'}`,
  ];
  if (plan.mutations.length > 0) lines.push(`mutations (${plan.mutations.length}): ${mutations.join(', ')}`);
  if (plan.workers > 1) lines.push(`workers: ${plan.workers}, lease time to live ${plan.leaseTtlSteps} steps`);
  if (plan.rebind) lines.push(`rebind before ${address(plan.rebind.before)} to: ${describeBinding(plan.rebind.binding)}`);
  return lines;
}
