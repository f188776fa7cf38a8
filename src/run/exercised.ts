import { ANOMALY_KINDS } from '../../model/anomalies.js';
import type { CheckResult } from '../../model/checker.js';
import type { CallKind, History, HistoryHeader } from '../../model/history.js';
import type { PlannedFault } from '../../model/plan.js';
import { isPageQuirk } from '../../scenarios/plan.js';
import { effectsOf, isCheckpoint } from '../world/faults.js';

/**
 * Which of a plan's adversity actually happened in one execution. A named scenario exists
 * for its adversity: a crash before the first effect says nothing about a consumer that
 * makes no emit call for it to crash at. A pass is only for what was exercised; a scenario
 * whose adversity did not fire is `untested`, with these reasons, as the Reactive Streams TCK
 * reports its untested rules.
 */
type Named = CallKind | 'effect' | 'checkpoint';

/**
 * What of a plan this reads: a scenario's plan, or the header of a history, which records it
 * (so that `judge` holds a scenario's recorded history to its adversity as `replay` does).
 */
export type PlannedAdversity = Pick<HistoryHeader, 'faults' | 'mutations' | 'rebind' | 'workers' | 'poison'>;

export function missedAdversity(plan: PlannedAdversity, history: History): string[] {
  const missed: string[] = [];
  const calls = new Map<Named, number>();
  const adversityCalls = new Map<Named, number>();
  const fired = new Map<string, number>();
  const workers = new Set<string>();
  const tried = new Set<string>();
  let mutations = 0;
  let rebinds = 0;
  for (const step of history.steps) {
    if (step.kind === 'mutation') mutations++;
    if (step.kind === 'rebind') rebinds++;
    if (step.kind !== 'call') continue;
    const { call } = step;
    // A call counts under its own kind, and under `effect` too when it makes an effect durable.
    const names: Named[] = [call.kind];
    if (effectsOf(call) !== null) names.push('effect');
    if (isCheckpoint(call)) names.push('checkpoint');
    if (step.phase === 'adversity') workers.add(step.actor.worker);
    for (const name of names) {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      if (step.phase === 'adversity') adversityCalls.set(name, (adversityCalls.get(name) ?? 0) + 1);
      if (step.fault !== undefined) fired.set(`${name}|${step.fault}`, (fired.get(`${name}|${step.fault}`) ?? 0) + 1);
    }
    if (step.call.kind === 'emit') tried.add(step.call.event.id);
    if (step.call.kind === 'commit') for (const op of step.call.ops) if ('event' in op) tried.add(op.event.id);
  }
  const planned = new Map<string, PlannedFault[]>();
  for (const f of plan.faults) planned.set(`${f.call}|${f.kind}`, [...(planned.get(`${f.call}|${f.kind}`) ?? []), f]);
  for (const [key, faults] of planned) {
    const lost = faults.length - (fired.get(key) ?? 0);
    if (lost <= 0) continue;
    const f = faults[0] as PlannedFault;
    // Call faults fire in the adversity phase only; page quirks are the source's and fire in both.
    const made = (isPageQuirk(f.kind) ? calls : adversityCalls).get(f.call) ?? 0;
    const where = `${f.call} #${f.nth + 1}${f.after === undefined ? '' : ` about ${f.after}`}${f.since === undefined ? '' : ` after effect #${f.since + 1}`}`;
    const durable = f.call === 'emit' && (calls.get('effect') ?? 0) > 0 ? ': the consumer makes its effects durable in commits' : '';
    const why = made === 0 ? `no ${f.call} call was made${isPageQuirk(f.kind) ? '' : ' in the adversity phase'}${durable}` : isPageQuirk(f.kind) ? `${made} ${f.call} call(s) made, none where the quirk had anything to act on` : `${made} ${f.call} call(s) made, none the one it names`;
    missed.push(`the ${f.kind} planned at ${where}${faults.length > 1 ? ` (and ${faults.length - 1} more)` : ''} never fired: ${why}`);
  }
  if (mutations < plan.mutations.length) missed.push(`${plan.mutations.length - mutations} of ${plan.mutations.length} planned change(s) to the source never happened: the call each is placed before was never made`);
  if (plan.rebind !== null && rebinds === 0) missed.push(`the rebind planned before ${plan.rebind.before.call} #${plan.rebind.before.nth + 1} never happened: that call was never made`);
  if (plan.workers > 1 && workers.size < 2) missed.push(`${plan.workers} workers were started, but only ${workers.size} made calls in the adversity phase: nothing competed`);
  for (const id of plan.poison) if (!tried.has(id)) missed.push(`poison event ${id} was never tried`);
  return missed;
}

/**
 * Why one world that passed is no pass: liveness was the only check it exercised (the
 * consumer made no effect, committed no watermark and marked no event done, as one that only
 * fails visibly does), so nothing of what it handles was judged. As `check` says it of a whole
 * run (src/run/conformance.ts, onlyLiveness), `replay` and `judge` say it of one world.
 */
export function onlyLivenessExercised(result: CheckResult): string | null {
  if (result.verdict.status !== 'pass') return null;
  for (const kind of ANOMALY_KINDS) if (kind !== 'liveness' && result.results[kind].status !== 'untested') return null;
  return 'liveness was the only check exercised: the consumer made no effect, committed no watermark and marked no event done, so every check of what it handles is untested';
}
