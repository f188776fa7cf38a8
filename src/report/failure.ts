import { ANOMALIES, type Anomaly } from '../../model/anomalies.js';
import { RULES } from '../../model/rules.js';
import type { Placement, Plan } from '../../scenarios/plan.js';
import type { Execution } from '../run/execute.js';
import { describeBinding, renderTimeline } from './timeline.js';
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
}

/**
 * A failure as text: the rule broken and why, the minimal world, the timeline of the steps
 * that ran with the witness marked, the rule's hint, and the replay command last, where a
 * tired eye finds it.
 */
export function renderFailure(ctx: FailureContext): string {
  const { execution } = ctx;
  const { verdict } = execution.result;
  const out: string[] = [];
  if (verdict.status === 'unknown') {
    out.push(`UNKNOWN  ${ctx.consumer}: the run could not be judged: ${verdict.reason}`);
  } else if (verdict.status === 'pass') {
    out.push(`PASS  ${ctx.consumer}`);
  } else if (verdict.status === 'error') {
    out.push(`HARNESS ERROR  ${ctx.consumer}: the world contradicted its own ground truth. This is a bug in tidemark, not in the consumer; please report it with the replay command below.`);
    for (const p of verdict.problems.slice(0, SHOWN)) out.push(`  step ${p.seq}: ${p.what}`);
    if (verdict.problems.length > SHOWN) out.push(`  (+${verdict.problems.length - SHOWN} more)`);
  } else {
    const first = verdict.anomalies[0] as Anomaly;
    out.push(`FAIL  ${ctx.consumer}: ${first.kind} (${first.rules.join(' ')}): ${ANOMALIES[first.kind].means}`);
    for (const a of verdict.anomalies.slice(0, SHOWN)) out.push(`  ${a.kind}: ${a.explanation}`);
    if (verdict.anomalies.length > SHOWN) out.push(`  (+${verdict.anomalies.length - SHOWN} more anomalies)`);
  }
  out.push('');
  out.push(`World${ctx.provenance ? ` (${ctx.provenance})` : ''}:`);
  out.push(...describePlan(execution.plan).map((l) => `  ${l}`));
  out.push('');
  out.push('Timeline (» marks the witness):');
  const marked = new Set(verdict.status === 'error' ? verdict.problems.map((p) => p.seq) : verdict.anomalies.flatMap((a) => a.steps));
  out.push(...renderTimeline(execution.history.steps, marked));
  out.push('');
  if (verdict.status === 'fail') {
    // The first anomaly is the most specific evidence; its first rules say where to look.
    const rules = (verdict.anomalies[0] as Anomaly).rules;
    for (const id of rules.slice(0, HINTS)) out.push(`If this fails, check ${id} (${RULES[id].title}): ${RULES[id].hint}`);
    if (rules.length > HINTS) out.push(`Also related: ${rules.slice(HINTS).join(' ')}`);
    out.push('');
  }
  out.push(`History sha256 ${execution.hash}`);
  out.push(`Replay: ${ctx.replay}`);
  return out.join('\n');
}

/** "commit #3"; tied to an event, "commit #0 about e07" or "fetch #1 after e07" (see Placement). */
function address(a: Pick<Placement, 'call' | 'nth' | 'after'>): string {
  if (a.after === undefined) return `${a.call} #${a.nth}`;
  return `${a.call} #${a.nth} ${['emit', 'completed', 'commit'].includes(a.call) ? 'about' : 'after'} ${a.after}`;
}

export function describePlan(plan: Plan): string[] {
  const { binding, source } = plan;
  const events = plan.events.map((e) => `${formatRef(e)}(${e.key.join(',')}${e.attrs.kind === undefined ? '' : ` ${String(e.attrs.kind)}`})`);
  // Planned faults that never fire are listed too: the plan is what replays, the timeline what happened.
  const faults = plan.faults.map((f) => `${f.kind} at ${address(f)}`);
  const mutations = plan.mutations.map((m) => `${m.kind} before ${address(m.before)}`);
  const lines = [
    `events (${plan.events.length}): ${events.join(' ') || 'none'}`,
    `binding: ${describeBinding(binding)}`,
    `source: ${source.contract.kind}${source.contract.kind === 'replay-window' ? `(${source.contract.window})` : ''}, page size ${source.pageSize}, resume by token${source.resumes.map((r) => `|${r}`).join('')}`,
    `faults (${plan.faults.length}): ${faults.join(', ') || 'none'}`,
  ];
  if (plan.mutations.length > 0) lines.push(`mutations (${plan.mutations.length}): ${mutations.join(', ')}`);
  if (plan.workers > 1) lines.push(`workers: ${plan.workers}, lease time to live ${plan.leaseTtl} steps`);
  if (plan.rebind) lines.push(`rebind before ${address(plan.rebind.before)} to: ${describeBinding(plan.rebind.binding)}`);
  return lines;
}
