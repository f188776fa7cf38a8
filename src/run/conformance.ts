import crypto from 'node:crypto';
import fc from 'fast-check';
import { planArb, type PlanOptions } from '../../scenarios/arbitraries.js';
import { excludedBy, planFor, worldOptions } from '../../scenarios/profiles.js';
import { ALL_SCENARIOS, type NamedScenario } from '../../scenarios/named.js';
import { ANOMALY_KINDS, type AnomalyKind } from '../../model/anomalies.js';
import type { CheckResult } from '../../model/checker.js';
import { missedAdversity } from './exercised.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute, type Execution } from './execute.js';
import { placeError } from './world-place.js';
import type { Plan } from '../../scenarios/plan.js';
import { isSmaller, sizeOf } from '../selftest/shrunk-size.js';
import { shown, UsageError, validateOptions } from './options.js';

/**
 * The suite's verdict: `unknown` when some world could not be judged, never `pass`; `error`
 * when the world contradicted its own ground truth, which outranks everything it recorded.
 */
export type SuiteStatus = 'pass' | 'fail' | 'unknown' | 'error';

export interface PropertyOutcome {
  readonly status: SuiteStatus;
  /** The world size asked for (`--events`); absent for the default size. */
  readonly events?: number;
  /** Worlds executed until the first failure (that one included), or in all on a pass. */
  readonly runs: number;
  /** The seed of the search whose counterexample is reported: with `path`, it replays it. */
  readonly seed: number;
  /** fast-check's replay path of the counterexample. */
  readonly path: string | null;
  readonly shrinks: number;
  /** The minimal failing world (the first, unshrunk, with `shrink: false`), executed; null on pass. */
  readonly counterexample: Execution | null;
  /** World calls made across all executed worlds, for throughput figures. */
  readonly calls: number;
  /** Searches that found a failure and shrank it (one, unshrunk, with `shrink: false`); the smallest counterexample among them is reported. */
  readonly searches: number;
  /** With a path: the world at that path, executed, whether it passed or not. */
  readonly replayed?: Execution;
  /** The time limit stopped the search before `runs` asked worlds (or before shrinking ended). */
  readonly interrupted?: boolean;
  /** With a shard: the worlds of `runs` left to the other shards, generated but not run here. */
  readonly skipped?: number;
  /**
   * With peers: the index of another shard's first failing world, below any this shard found,
   * for which this shard stopped. It ran every world of its share up to that index: it
   * stopped either there, running none past it, or while shrinking a failure of its own found
   * further on, which it left unshrunk, with no further search. What it left undone is past
   * the unsharded run's first failure, where that run never goes.
   */
  readonly stoppedBy?: number;
}

/**
 * One of `count` machines sharing a run (`--shard index/count`, index from 1). Before the
 * first failure, the kth generated world (k from 0) is this shard's when k mod count is
 * index - 1; see checkProperty.
 */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/**
 * Shards running at once (`check --jobs`) telling each other where they failed. The unsharded
 * run stops at its first failing world, so once one shard has failed at index k, nothing any
 * other shard does past k can change the merged result (src/cli/merge.ts): a shard told k
 * stops there, where it would otherwise search on, and shrink, for nothing.
 */
export interface ShardPeers {
  /** Told the index of this shard's first failing world (its first search's), once. */
  failed(k: number): void;
  /** The lowest index at which another shard has failed, as far as this one has heard; null while none has. */
  bound(): number | null;
}

/** Whether the jth item (from 0) of a list split across shards is this shard's; everything is, without a shard. */
export function owns(shard: Shard | undefined, j: number): boolean {
  return shard === undefined || j % shard.count === shard.index - 1;
}

export interface PropertyOptions {
  readonly runs?: number;
  readonly seed: number;
  /** With a path, replays exactly that counterexample and stops there. */
  readonly path?: string;
  /** World size, budget and forced fault families; a replay must pass the same ones. */
  readonly worlds?: PlanOptions;
  /** Told the number of worlds executed so far, shrinking included, and whether this one was a shrinking step. */
  readonly progress?: (worlds: number, shrinking: boolean) => void;
  /** Searches to shrink a failure from; see SEARCHES. Ignored with `shrink: false`, which searches once. */
  readonly searches?: number;
  /**
   * false: report the first failing world as it was generated, unshrunk, and search no
   * further (fast-check's endOnFailure). For a caller that needs a failure, not a small one:
   * shrinking is most of a failing check's work, and its cost depends on the world: over
   * 340 seeds of one mutant, half shrank within 0.12 s and one took 35 s (4,594 steps).
   * The seed and path still replay the reported world. What the further searches would also
   * have done is lost: one that finds a definite failure where the first found only an
   * unjudgeable world (unknown) would have made the outcome a failure (see `better`).
   */
  readonly shrink?: boolean;
  /** Told each executed world's per-check results, so a run can say which checks it exercised. */
  readonly tally?: CheckTally;
  /**
   * Told each generated world the first search executes before its first failure, with its
   * index k (from 0) in the order generated, so that a run can say what adversity its worlds
   * reached and after how many (src/selftest/adversity-census.ts).
   */
  readonly onWorld?: (execution: Execution, k: number) => void;
  /** Stop searching after this many milliseconds, as fast-check's interruptAfterTimeLimit does; what ran is judged. */
  readonly timeLimitMs?: number;
  /** Run only this shard's share of the generated worlds (see checkProperty). */
  readonly shard?: Shard;
  /** With a shard: the shards running beside it, to stop at a failure one of them found first (see ShardPeers). */
  readonly peers?: ShardPeers;
}

/**
 * After a failure, the searches run in all, each from its own seed derived from the first,
 * each shrinking its own first failure. Shrinking is a greedy local search and a world has
 * many local minima: measured over the report's 20 seeds per mutant, single searches ended
 * up to 17 events above the smallest world showing the bug, where the smallest of three
 * stayed within one or two. Only a failing consumer pays for the extra searches.
 */
export const SEARCHES = 3;

/** The seed of the nth search after the first: a fixed stride keeps them apart and repeatable. */
export function searchSeed(seed: number, nth: number): number {
  return (seed + nth * 0x9e3779b1) % 0x7fffffff;
}

/**
 * Runs the consumer over generated worlds. A world whose verdict is not `pass` fails the
 * property, so fast-check shrinks it; the last failing execution is the minimal one. A
 * failure is then searched for again from other seeds, and the smallest counterexample wins;
 * its seed and path replay it like any other. With `shrink: false`, the first failing world
 * is reported as generated, and there is no further search.
 *
 * With a shard, every shard runs this same search, but before the first failure a world that
 * is not the shard's is generated (cheap) and taken as passing without being run. fast-check
 * draws each world from the seed and its index alone, whatever the earlier ones returned, so
 * the shard that owns the unsharded run's first failing world finds it at the same index,
 * then shrinks it exactly as the unsharded run does (every shrinking step runs), and runs the
 * further searches whole: its outcome is the unsharded one. The other shards fail later or
 * pass; `tidemark merge` keeps the failure found first (src/cli/merge.ts).
 */
export async function checkProperty(consumer: AnyConsumer, options: PropertyOptions): Promise<PropertyOutcome> {
  // The command line's bounds: `runs: 0` or NaN would otherwise run no world and pass.
  validateOptions(options, 'checkProperty: ');
  if (options.seed === undefined) throw new UsageError('checkProperty: seed is required: the seed decides every world, and replays them');
  // Checked here, not with the command line's options: it has no flag, and only this function takes it.
  if (options.shrink !== undefined && typeof options.shrink !== 'boolean') throw new UsageError(`checkProperty: shrink must be true or false, got ${shown(options.shrink)}`);
  const arb = planArb(worldOptions(consumer.capabilities, options.worlds));
  const runs = options.runs ?? 1000;
  let worlds = 0;
  let calls = 0;
  // Verdicts by plan, across every search of this check: most worlds tried while shrinking
  // are plans already run (fast-check revisits the same candidates along different shrink
  // paths, and each search shrinks through the same small worlds). A world is decided by its
  // plan and the consumer, which replay already relies on; a consumer that is not
  // deterministic is caught by replay's history hash, not hidden here. Only the verdict is
  // kept: holding every failing history would cost far more memory than re-running the one
  // counterexample that is finally reported.
  const memo = new Map<string, boolean>();
  let replayed: Execution | undefined;
  // A time budget is wall-clock by nature; it decides how many worlds run, never what one does.
  const deadline = options.timeLimitMs === undefined ? undefined : Date.now() + options.timeLimitMs;
  // Worlds the first search generated before its first failure: their index orders the
  // check tally (see TallyAt) and, with a shard, says which are this shard's.
  let generated = 0;
  let skipped = 0;
  // With peers (check --jobs): the index of this shard's first failure, and the index of
  // another's, below it, for which this shard stopped (see ShardPeers). Not with a time
  // limit: fast-check abandons the world running when time is up, which goes on and may
  // fail after the search has ended as a pass, and a failure told then would stop the
  // other shards at a world this one never counted.
  const peers = options.shard === undefined || deadline !== undefined ? undefined : options.peers;
  let failedAt: number | null = null;
  let stoppedBy: number | null = null;
  // Whether a search by path ended because its one world had run (not a time limit).
  let pathDone = false;
  const search = async (seed: number, path?: string, first = false): Promise<Search> => {
    let last: { readonly plan: Plan; execution: Execution | null } | null = null;
    // Whether a world threw (an adapter breaking its contract, say): fast-check shrinks it as
    // it does a failure, so the worlds after it are shrinking steps, not generated ones.
    let threw = false;
    const property = fc.asyncProperty(arb, async (plan) => {
      // A path names one world: once it ran, and passed, fast-check would go on to the worlds
      // after it (numRuns of them, or every shrink of its parent), each a run of the consumer.
      if (path !== undefined && replayed !== undefined) {
        pathDone = true;
        throw new fc.PreconditionFailure(true);
      }
      const k = first && last === null && !threw ? generated++ : null;
      if (peers !== undefined) {
        // Another shard failed first: past its failure (or shrinking, in any search, a later
        // one of this shard's) is where the unsharded run never goes. fast-check ends the
        // search on an interrupting precondition failure, keeping what it was shrinking.
        const bound = peers.bound();
        if (bound !== null && (k !== null ? k > bound : failedAt !== null && bound < failedAt)) {
          stoppedBy = bound;
          throw new fc.PreconditionFailure(true);
        }
      }
      // Another shard's world: taken as passing, and kept out of the memo. Past the unsharded
      // run's first failure it may well fail, and a shrinking step of this shard that meets
      // the same plan must run it, not read a pass that was never judged.
      if (k !== null && !owns(options.shard, k)) {
        skipped++;
        return true;
      }
      const key = planKey(plan);
      const known = memo.get(key);
      if (known !== undefined) {
        if (!known) last = { plan, execution: null };
        return known;
      }
      let run: Execution;
      try {
        run = await execute(plan, consumer);
      } catch (error) {
        // Where a failure would: the other shards stop past it, as the unsharded run would.
        if (!threw && k !== null) {
          failedAt = k;
          peers?.failed(k);
        }
        threw = true;
        throw error;
      }
      if (path !== undefined && replayed === undefined) replayed = run;
      // Passing worlds say what the run exercised; of the failing ones, only the reported
      // counterexample counts (below): a check fails on evidence a reader can see.
      if (run.result.verdict.status === 'pass') options.tally?.add(run.result, k === null ? AFTER_WORLDS : [TALLY_PHASE.world, k]);
      if (k !== null) options.onWorld?.(run, k);
      calls += run.history.steps.length;
      options.progress?.(++worlds, last !== null || threw);
      const passed = run.result.verdict.status === 'pass';
      memo.set(key, passed);
      if (!passed) {
        last = { plan, execution: run };
        if (k !== null) {
          failedAt = k;
          peers?.failed(k);
        }
      }
      return passed;
    });
    const details = await fc.check(property, {
      numRuns: runs,
      seed,
      ...(path === undefined ? {} : { path }),
      ...(path !== undefined || options.shrink === false ? { endOnFailure: true } : {}),
      ...(deadline === undefined ? {} : { interruptAfterTimeLimit: Math.max(1, deadline - Date.now()) }),
    });
    const found = last as { readonly plan: Plan; execution: Execution | null } | null;
    // A failure with no failing execution means the harness itself threw: never a verdict;
    // except a time limit that ended the search before a world ran, which fast-check counts
    // as a failure without an error. That judged nothing, and the suite says so.
    if (details.failed && found === null && !(details.interrupted && details.errorInstance == null)) {
      const error = details.errorInstance instanceof Error ? details.errorInstance : new Error(`fast-check failed without a failing world: ${String(details.errorInstance)}`);
      if (details.counterexamplePath !== null) placeError(error, { seed: details.seed, path: details.counterexamplePath });
      throw error;
    }
    if (!details.failed || found === null) return { seed: details.seed, runs: details.numRuns, path: null, shrinks: details.numShrinks, found: null, interrupted: details.interrupted && !pathDone };
    // The minimal world's verdict came from the memo: run it once more for its history.
    const execution = found.execution ?? (await execute(found.plan, consumer));
    return { seed: details.seed, runs: details.numRuns, path: details.counterexamplePath, shrinks: details.numShrinks, found: execution, interrupted: details.interrupted };
  };
  const first = await search(options.seed, options.path, true);
  // A stop for another shard's failure is no time limit's: only a time limit makes a search interrupted.
  const interrupted = first.interrupted && stoppedBy === null;
  const share = options.shard === undefined ? {} : { skipped, ...(stoppedBy === null ? {} : { stoppedBy }) };
  if (first.found === null) {
    return { status: 'pass', runs: first.runs, seed: first.seed, path: null, shrinks: 0, counterexample: null, calls, searches: 0, interrupted, ...(replayed ? { replayed } : {}), ...share };
  }
  let best = first;
  let searches = 1;
  // Further searches exist to shrink to a smaller (or more definite) failure, and each shrinks
  // its own: without shrinking, the first failure as generated is what was asked for.
  const wanted = options.path === undefined && options.shrink !== false ? (options.searches ?? SEARCHES) : 1;
  // Stopped for another shard's earlier failure: this one's is not the run's, whatever its size.
  for (let nth = 1; nth < wanted && stoppedBy === null; nth++) {
    if (deadline !== undefined && Date.now() >= deadline) break;
    const next = await search(searchSeed(options.seed, nth));
    if (next.found === null) continue;
    searches++;
    if (better(next.found, best.found as Execution)) best = next;
  }
  const found = best.found as Execution;
  options.tally?.add(found.result, AFTER_WORLDS);
  return {
    status: found.result.verdict.status === 'pass' ? 'fail' : found.result.verdict.status,
    runs: first.runs,
    seed: best.seed,
    path: best.path,
    shrinks: best.shrinks,
    counterexample: found,
    calls,
    searches,
    ...(replayed ? { replayed } : {}),
    interrupted,
    ...share,
  };
}

/** A plan's identity for the memo: its JSON, digested so that thousands of keys stay small. */
function planKey(plan: Plan): string {
  return sha256(JSON.stringify(plan));
}

/**
 * A one-shot digest where Node has one (crypto.hash, from 20.12): a Hash object made,
 * fed and finished for every world was most of what its key cost. The same digest either way.
 */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'base64') : (text) => crypto.createHash('sha256').update(text).digest('base64');

interface Search {
  readonly seed: number;
  readonly runs: number;
  readonly path: string | null;
  readonly shrinks: number;
  readonly found: Execution | null;
  readonly interrupted: boolean;
}

/** A harness error beats everything (it must be fixed first), a definite failure beats an unjudgeable world; then the smaller one wins. */
function better(a: Execution, b: Execution): boolean {
  const rank = (e: Execution): number => ({ error: 2, fail: 1, unknown: 0, pass: 0 })[e.result.verdict.status];
  if (rank(a) !== rank(b)) return rank(a) > rank(b);
  const definite = (e: Execution): boolean => e.result.verdict.status === 'fail';
  if (definite(a) !== definite(b)) return definite(a);
  return isSmaller(sizeOf(a), sizeOf(b));
}

/**
 * A named scenario's outcome. `skipped`: it does not apply to this consumer (never run).
 * `untested`: it ran and the consumer broke no rule, but the adversity it exists for never
 * fired (see missedAdversity), so it proves nothing either way: never reported as a pass.
 */
export type ScenarioOutcome =
  | { readonly scenario: NamedScenario; readonly execution: Execution; readonly skipped?: undefined; readonly untested?: string }
  | { readonly scenario: NamedScenario; readonly execution?: undefined; readonly skipped: string; readonly untested?: undefined };

export type ScenarioStatus = SuiteStatus | 'untested' | 'skipped';

export function scenarioStatus(s: ScenarioOutcome): ScenarioStatus {
  if (s.execution === undefined) return 'skipped';
  return s.untested !== undefined ? 'untested' : s.execution.result.verdict.status;
}

/**
 * Runs every named scenario once: they are deterministic, one run each is the whole test.
 * A scenario whose source contract the consumer does not support is skipped, with the reason.
 */
export async function checkScenarios(consumer: AnyConsumer, scenarios = ALL_SCENARIOS, onScenario?: (outcome: ScenarioOutcome) => void): Promise<ScenarioOutcome[]> {
  const out: ScenarioOutcome[] = [];
  for (const scenario of scenarios) {
    const skipped = whyNot(consumer, scenario);
    let outcome: ScenarioOutcome;
    if (skipped !== null) outcome = { scenario, skipped };
    else {
      const plan = scenarioPlan(consumer, scenario);
      let execution: Execution;
      try {
        execution = await execute(plan, consumer);
      } catch (error) {
        placeError(error, { scenario: scenario.name });
        throw error;
      }
      const missed = execution.result.verdict.status === 'pass' ? missedAdversity(plan, execution.history) : [];
      outcome = missed.length > 0 ? { scenario, execution, untested: missed.join('; ') } : { scenario, execution };
    }
    out.push(outcome);
    onScenario?.(outcome);
  }
  return out;
}

export function whyNot(consumer: AnyConsumer, scenario: NamedScenario): string | null {
  return excludedBy(consumer.capabilities, scenario.plan);
}

/** A named scenario's world as this consumer meets it: its source offers the consumer's resume forms too (see planFor). */
export function scenarioPlan(consumer: AnyConsumer, scenario: NamedScenario): Plan {
  return planFor(consumer.capabilities, scenario.plan);
}

/** One check of the model over a whole run: failed where its anomaly was found, passed only where it ran, else untested. */
export interface CheckSummary {
  readonly anomaly: AnomalyKind;
  readonly status: 'pass' | 'fail' | 'untested';
  /** Why no world of the run exercised it (untested). */
  readonly reason?: string;
}

/**
 * Why a run that found nothing wrong still passed nothing, when liveness is the only check it
 * exercised; null otherwise. A consumer that only ever fails visibly (on a source whose
 * contract proves nothing, failing is what it must do in the end) made no effect, committed
 * no watermark and marked no event done in any world: every check of what it handles is
 * untested, and "it failed visibly" is no pass of a consumer that consumed nothing.
 */
export function onlyLiveness(checks: readonly CheckSummary[]): string | null {
  if (checks.some((c) => c.status !== 'untested' && c.anomaly !== 'liveness')) return null;
  return 'liveness was the only check exercised: in no world did the consumer make an effect, commit a watermark or mark an event done, so every check of what it handles is untested (above)';
}

/**
 * Where an execution stands in the order an unsharded check runs them: the phase
 * (regressions, named scenarios, generated worlds before the first failure, then everything
 * after it: shrinking, the further searches and the counterexample) and its index there.
 * Shards run disjoint parts of one order; these positions let `tidemark merge` rebuild the
 * tally the unsharded run would have made (src/cli/merge.ts).
 */
export type TallyAt = readonly [phase: number, index: number];

export const TALLY_PHASE = { regression: 0, scenario: 1, world: 2, after: 3 } as const;

/** Every execution after the first failure of the generated worlds: one phase, in the order run. */
export const AFTER_WORLDS: TallyAt = [TALLY_PHASE.after, 0];

/** What a run's executions said of one check: where it was first exercised, first found, and first left untested (with the reason). */
export interface CheckEvidence {
  readonly exercised?: TallyAt;
  readonly found?: TallyAt;
  readonly untested?: { readonly at: TallyAt; readonly reason: string };
}

export function precedes(a: TallyAt, b: TallyAt): boolean {
  return a[0] !== b[0] ? a[0] < b[0] : a[1] < b[1];
}

/**
 * Gathers each checker's own results over the executions of a run. A check fails when any
 * execution found its anomaly, passes when at least one exercised it and none found it, and
 * is untested, with the first reason given, when none exercised it. Each is kept with the
 * position of the execution that first showed it (TallyAt); executions are added in the
 * order they ran, so without positions the first one added is the first.
 */
export class CheckTally {
  private readonly evidence = new Map<AnomalyKind, { exercised?: TallyAt; found?: TallyAt; untested?: { at: TallyAt; reason: string } }>();

  add(result: CheckResult, at: TallyAt = AFTER_WORLDS): void {
    for (const kind of ANOMALY_KINDS) {
      const r = result.results[kind];
      const e = this.evidence.get(kind) ?? {};
      const earlier = (known: TallyAt | undefined): boolean => known === undefined || precedes(at, known);
      if (r.status === 'fail' && earlier(e.found)) e.found = at;
      if (r.status !== 'untested' && earlier(e.exercised)) e.exercised = at;
      else if (r.status === 'untested' && earlier(e.untested?.at)) e.untested = { at, reason: r.reason };
      this.evidence.set(kind, e);
    }
  }

  /** The evidence for each check, for a shard's results to be merged. */
  record(): Partial<Record<AnomalyKind, CheckEvidence>> {
    return Object.fromEntries(this.evidence);
  }

  summary(): CheckSummary[] {
    return summarizeChecks((kind) => this.evidence.get(kind));
  }
}

/** Each check's summary from its evidence: fail where found, pass where exercised, else untested with the first reason. */
export function summarizeChecks(evidence: (kind: AnomalyKind) => CheckEvidence | undefined): CheckSummary[] {
  return ANOMALY_KINDS.map((anomaly) => {
    const e = evidence(anomaly);
    if (e?.found) return { anomaly, status: 'fail' };
    if (e?.exercised) return { anomaly, status: 'pass' };
    return { anomaly, status: 'untested', reason: e?.untested?.reason ?? 'no world was judged' };
  });
}
