import { ANOMALY_KINDS, type Anomaly, type AnomalyKind } from './anomalies.js';
import type { Checker, CheckOutcome } from './checks/checker.js';
import { BindingChecker } from './checks/bindings.js';
import { CompletenessChecker } from './checks/completeness.js';
import { EffectChecker } from './checks/effects.js';
import { GenerationChecker } from './checks/generations.js';
import { LivenessChecker } from './checks/liveness.js';
import { WatermarkChecker } from './checks/watermark.js';
import type { CallStep, History } from './history.js';
import { parseHistory } from './parse-history.js';
import { Truth, type WorldProblem } from './truth.js';

export type { CheckOutcome } from './checks/checker.js';
export type { WorldProblem } from './truth.js';

/**
 * The oracle: history in, verdict out. Ground truth is replayed from the header and the
 * recorded steps (model/truth.ts); each concern is a checker of its own (model/checks/),
 * walking the history beside it; `check` composes their findings.
 *
 * - `fail`: some checker found an anomaly of the consumer.
 * - `unknown`: nothing was found, but the run cannot be judged (the consumer hung).
 * - `error`: the world contradicted its own ground truth. Nothing it recorded can be held
 *   against the consumer, so this outranks every other finding: it is tidemark's bug.
 * - `pass`: every checker ran and found nothing. Which anomaly kinds the run actually
 *   exercised is in `results`: a kind the history gave no chance to occur is `untested`.
 *
 * Cost: one pass over the steps, amortised O(log n) per step for the sorted eligible stream.
 */
export type Verdict =
  | { readonly status: 'pass'; readonly anomalies: readonly [] }
  | { readonly status: 'fail'; readonly anomalies: readonly Anomaly[] }
  | { readonly status: 'unknown'; readonly anomalies: readonly []; readonly reason: string }
  | { readonly status: 'error'; readonly anomalies: readonly []; readonly reason: string; readonly problems: readonly WorldProblem[] };

export interface CheckStats {
  readonly steps: number;
  readonly eligible: number;
  readonly effects: number;
  readonly commits: number;
  readonly incarnations: number;
}

export interface CheckResult {
  readonly verdict: Verdict;
  /** Each anomaly kind's own outcome: found, checked and clean, or not exercised (with the reason). */
  readonly results: Readonly<Record<AnomalyKind, CheckOutcome>>;
  readonly stats: CheckStats;
}

/** Judges a history; one that is not a valid history throws a HistoryError naming the field (model/parse-history.ts). */
export function check(history: History): CheckResult {
  parseHistory(history);
  const truth = new Truth(history.header);
  const watermark = new WatermarkChecker();
  const generation = new GenerationChecker();
  const effect = new EffectChecker(history.header.delivery);
  const completeness = new CompletenessChecker();
  const binding = new BindingChecker();
  const liveness = new LivenessChecker(history.header.consumer === 'blackbox');
  // The binding checker goes last but one: it explains what the others found at the same step.
  const checkers: readonly Checker[] = [watermark, generation, effect, completeness, binding, liveness];
  let effects = 0;
  let commits = 0;
  let incarnations = 0;
  // What the checkers reported at the current step, for the ones that explain others' findings.
  const found: Anomaly[] = [];
  // Each checker's list of findings, and how much of it was told in `found` already (a
  // checker's list is a field it never replaces).
  const lists = checkers.map((c) => c.anomalies);
  const told = lists.map(() => 0);
  const tell = (i: number): void => {
    const list = lists[i] as readonly Anomaly[];
    for (let j = told[i] as number; j < list.length; j++) found.push(list[j] as Anomaly);
    told[i] = list.length;
  };
  for (const step of history.steps) {
    const call = step.kind === 'call' ? step.call : null;
    // What a request resuming by a kept page token passes over is noted before it is replayed
    // (a scroll's token moves when it serves), and judged at the end.
    const kept = call !== null && call.kind === 'fetch' ? watermark.beforeFetch(step as CallStep, truth) : null;
    const facts = truth.advance(step);
    if (found.length > 0) found.length = 0;
    // Called one by one, in the order of `checkers`, not through the list: a call site that
    // meets six classes is megamorphic, and this one runs for every checker at every step.
    // A checker is told only the steps its visit reads (the watermark checker: all but calls
    // that write no watermark outside the drain; the effect checker: steps with effects; the
    // completeness checker: all but calls other than claims), and what it reported is looked
    // for only when its list grew: nearly every step is a call that finds nothing.
    if (call === null || facts.watermarks.length > 0 || step.phase === 'drain') watermark.visit(step, facts, truth);
    if (call !== null && call.kind === 'fetch') watermark.afterFetch(step as CallStep, facts, kept);
    if (watermark.anomalies.length !== told[0]) tell(0);
    generation.visit(step, facts, truth);
    if (generation.anomalies.length !== told[1]) tell(1);
    if (facts.effects.length > 0) {
      effects += facts.effects.length;
      effect.visit(step, facts);
      if (effect.anomalies.length !== told[2]) tell(2);
    }
    if (call === null || call.kind === 'claim') completeness.visit(step, facts, truth);
    if (completeness.anomalies.length !== told[3]) tell(3);
    binding.visit(step, facts, truth, found);
    if (binding.anomalies.length !== told[4]) tell(4);
    liveness.visit(step, facts, truth);
    if (liveness.anomalies.length !== told[5]) tell(5);
    if (call !== null) {
      if (call.kind === 'commit' && facts.applied) commits++;
    } else if (step.kind === 'life' && step.event.kind === 'start') incarnations++;
  }
  truth.finish();
  for (const checker of checkers) checker.finish(truth, history);
  const stats: CheckStats = { steps: history.steps.length, eligible: truth.eligible().length, effects, commits, incarnations };

  const results = {} as Record<AnomalyKind, CheckOutcome>;
  const anomalies: Anomaly[] = [];
  for (const kind of ANOMALY_KINDS) {
    const owner = checkers.find((c) => c.kinds.includes(kind));
    if (owner === undefined) throw new Error(`no checker owns the anomaly kind ${kind}`);
    const mine = owner.anomalies.filter((a) => a.kind === kind);
    const why = owner.untested(kind);
    results[kind] = mine.length > 0 ? { status: 'fail', anomalies: mine } : why !== null ? { status: 'untested', reason: why } : { status: 'pass' };
    // Declared in the order failures are told: the most specific diagnosis leads, and
    // within a kind the earliest evidence stays first.
    anomalies.push(...mine);
  }
  if (truth.problems.length > 0) {
    const first = truth.problems[0] as WorldProblem;
    const reason = `the world contradicted its own ground truth at step ${first.seq}: ${first.what}${truth.problems.length > 1 ? ` (and ${truth.problems.length - 1} more)` : ''}`;
    return { verdict: { status: 'error', anomalies: [], reason, problems: truth.problems }, results, stats };
  }
  if (anomalies.length > 0) return { verdict: { status: 'fail', anomalies }, results, stats };
  if (liveness.ending !== null) return { verdict: { status: 'unknown', anomalies: [], reason: liveness.ending }, results, stats };
  return { verdict: { status: 'pass', anomalies: [] }, results, stats };
}
