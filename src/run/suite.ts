import { ALL_SCENARIOS, findScenario } from '../../scenarios/named.js';
import { CheckTally, checkProperty, checkScenarios, onlyLiveness, owns, scenarioPlan, TALLY_PHASE, whyNot, type CheckEvidence, type CheckSummary, type PropertyOutcome, type ScenarioOutcome, type Shard, type ShardPeers, type SuiteStatus } from './conformance.js';
import type { AnomalyKind } from '../../model/anomalies.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import type { Execution } from './execute.js';
import { comparableHash, entriesDigest, ofTarget, type RegressionEntry } from './regressions.js';
import { sizedWorlds } from '../../scenarios/arbitraries.js';
import { replayWorld } from './replay.js';
import { placeError, sizePlace } from './world-place.js';
import { CensusTally, type CensusSummary } from '../selftest/adversity-census.js';

/** One replayed regression and what it does now. */
export interface RegressionOutcome {
  readonly entry: RegressionEntry;
  readonly status: SuiteStatus;
  readonly execution: Execution | null;
  /** How long it took, in milliseconds of wall time: for reports, never for the simulation. */
  readonly ms?: number;
  /** Something to know about this replay: its history is not the one recorded, say. */
  readonly note?: string;
}

/** Everything one `check` found, in the order it ran: regressions, scenarios, generated worlds. */
export interface SuiteResult {
  readonly consumer: string;
  /** How the adapter is named in the regression file and in replay commands. */
  readonly adapter: string;
  readonly seed: number;
  readonly runs: number;
  readonly status: SuiteStatus;
  readonly regressions: readonly RegressionOutcome[];
  /** Each with the milliseconds it took, as regressions have. */
  readonly scenarios: readonly (ScenarioOutcome & { readonly ms?: number })[];
  readonly property: (PropertyOutcome & { readonly ms?: number }) | null;
  /** Each check of the model over the whole run (see CheckTally). */
  readonly checks: readonly CheckSummary[];
  /** What `checks` was made from, by position, for a shard's results to be merged exactly. */
  readonly evidence: Partial<Record<AnomalyKind, CheckEvidence>>;
  /** Regressions of this adapter in the file: with a shard, `regressions` holds only its share. */
  readonly regressionsInFile: number;
  /** What they name, in order (entriesDigest). */
  readonly regressionsDigest: string;
  /** Why a run that found nothing wrong is still not a pass (it exercised nothing). */
  readonly reason?: string;
  /** With `census`: the adversity the generated worlds reached, and after how many. */
  readonly census?: CensusSummary;
}

export interface SuiteOptions {
  readonly adapter: string;
  /** The target's options (`--option`): regression entries are this target's only with the same ones. */
  readonly options?: Readonly<Record<string, string>>;
  readonly seed: number;
  readonly runs: number;
  /** Searches to shrink a failure from (see SEARCHES); default SEARCHES. */
  readonly searches?: number;
  /** Only this named scenario (no generated worlds). */
  readonly scenario?: string;
  readonly regressions?: readonly RegressionEntry[];
  /** The sha256 of the target's code now (src/run/run-identity.ts): a regression recorded with the same code must replay as recorded. */
  readonly digest?: string | null;
  /** Generated worlds of up to this many events (`--events`); the default size otherwise. */
  readonly events?: number;
  /** How many times each regression is replayed (default REPLAY_TIMES). */
  readonly replayTimes?: number;
  /**
   * For a process target: the same target killing for real, which replays the regressions.
   * A recorded failure is replayed as `tidemark replay` replays it, every run of it alike: a
   * check with session crashes kills the first world of a process, and every 50th, for real,
   * and a consumer keeping state a session crash does not drop takes another path in each.
   * Held to the history real kills gave (see comparableHash).
   */
  readonly realKills?: () => Promise<AnyConsumer>;
  readonly progress?: (worlds: number, shrinking: boolean) => void;
  /** Told each replayed regression as it finishes, so a CLI can stream it. */
  readonly onRegression?: (outcome: RegressionOutcome) => void;
  /** Told each scenario's outcome as it finishes, so a CLI can stream it. */
  readonly onScenario?: (outcome: ScenarioOutcome) => void;
  /** Stop generating worlds after this many milliseconds (see PropertyOptions.timeLimitMs). */
  readonly timeLimitMs?: number;
  /**
   * Run only this shard's share: the jth regression and the jth scenario (from 0) when j mod
   * count is index - 1, and its share of the generated worlds (see checkProperty).
   */
  readonly shard?: Shard;
  /** With a shard: the shards running beside it (check --jobs), to stop at a failure one of them found first. */
  readonly peers?: ShardPeers;
  /** Take the adversity census of the generated worlds (`check --verbose`). */
  readonly census?: boolean;
}

/** The regressions a suite replays: this adapter's (one that cannot be replayed is judged unknown, with why: see runSuite). */
export function replayedRegressions(entries: readonly RegressionEntry[], adapter: string, options: Readonly<Record<string, string>> = {}): RegressionEntry[] {
  return entries.filter((e) => ofTarget(e, adapter, options));
}

export class UnknownScenarioError extends Error {
  override name = 'UnknownScenarioError';
}

/** Runs the conformance suite for one consumer: its regressions first, then the scenarios, then generated worlds. */
export async function runSuite(consumer: AnyConsumer, options: SuiteOptions): Promise<SuiteResult> {
  const regressions: RegressionOutcome[] = [];
  const tally = new CheckTally();
  const entries = replayedRegressions(options.regressions ?? [], options.adapter, options.options);
  // Started only when some entry is to be replayed here.
  let replaying: AnyConsumer | null = null;
  const replayer = async (): Promise<AnyConsumer> => (options.realKills === undefined ? consumer : (replaying ??= await options.realKills()));
  for (const [j, entry] of entries.entries()) {
    if (!owns(options.shard, j)) continue;
    const start = performance.now();
    const scenario = entry.kind === 'scenario' ? findScenario(entry.scenario) : undefined;
    // A recorded failure that cannot be replayed here is not shown fixed: unknown, with why,
    // so that the run is no pass and `--prune` keeps it. A scenario that no longer applies
    // would run a world this consumer's API never makes, and pass for nothing.
    const skipped = scenario === undefined ? null : whyNot(consumer, scenario);
    const unplayable =
      entry.kind === 'scenario' && scenario === undefined ? 'it names a scenario this tidemark does not have: a newer tidemark may have renamed it; replay the scenario it became, then remove the entry'
      : skipped !== null ? `its scenario does not apply to this consumer now: ${skipped}; remove the entry if that is so`
      : null;
    if (unplayable !== null) {
      regressions.push({ entry, status: 'unknown', execution: null, note: unplayable, ms: performance.now() - start });
      options.onRegression?.(regressions.at(-1) as RegressionOutcome);
      continue;
    }
    // Each entry is replayed twice and compared: a consumer that is not deterministic is
    // unknown, never a pass that `--prune` would delete.
    const hash = comparableHash(entry, options.realKills !== undefined);
    const recorded = hash === undefined ? undefined : { hash, digest: entry.digest, current: options.digest ?? null };
    const address = scenario ? { plan: scenarioPlan(consumer, scenario) } : entry.kind === 'world' ? { seed: entry.seed, path: entry.path, events: entry.events } : null;
    if (address === null) throw new Error(`no world to replay for a regression entry: ${JSON.stringify(entry).slice(0, 200)}`);
    let replayed: Awaited<ReturnType<typeof replayWorld>>;
    try {
      replayed = await replayWorld(await replayer(), address, { recorded, ...(options.replayTimes === undefined ? {} : { times: options.replayTimes }) });
    } catch (error) {
      // The entry's own world, at the entry's size, whatever this run's.
      placeError(error, entry.kind === 'scenario' ? { scenario: entry.scenario } : { seed: entry.seed, path: entry.path });
      if (entry.kind === 'world') sizePlace(error, entry.events);
      throw error;
    }
    if (replayed === null) {
      regressions.push({ entry, status: 'unknown', execution: null, note: 'the seed and path lead to no world', ms: performance.now() - start });
      options.onRegression?.(regressions.at(-1) as RegressionOutcome);
      continue;
    }
    const { execution } = replayed;
    tally.add(execution.result, [TALLY_PHASE.regression, j]);
    const changed = replayed.nondeterministic === null && hash !== undefined && hash !== execution.hash;
    regressions.push({
      entry,
      status: execution.result.verdict.status,
      execution,
      ...(changed ? { note: 'its history differs from the one recorded: the consumer (or tidemark) changed since' } : {}),
      ms: performance.now() - start,
    });
    options.onRegression?.(regressions.at(-1) as RegressionOutcome);
  }
  let scenarios = ALL_SCENARIOS;
  if (options.scenario !== undefined) {
    const one = findScenario(options.scenario);
    if (!one) throw new UnknownScenarioError(`no scenario named '${options.scenario}'; see 'tidemark scenarios'`);
    scenarios = [one];
  }
  // One scenario at a time, so that each is timed on its own for the reports.
  const outcomes: (ScenarioOutcome & { ms: number })[] = [];
  for (const [j, scenario] of scenarios.entries()) {
    if (!owns(options.shard, j)) continue;
    const start = performance.now();
    const [outcome] = await checkScenarios(consumer, [scenario]);
    const timed = { ...(outcome as ScenarioOutcome), ms: performance.now() - start };
    if (timed.execution) tally.add(timed.execution.result, [TALLY_PHASE.scenario, j]);
    outcomes.push(timed);
    options.onScenario?.(timed);
  }
  const start = performance.now();
  const worlds = options.events === undefined ? undefined : sizedWorlds(options.events);
  const census = options.census === true ? CensusTally.of(consumer, worlds) : undefined;
  const property =
    options.scenario === undefined
      ? {
          ...(options.events === undefined ? {} : { events: options.events }),
          ...(await checkProperty(consumer, {
            runs: options.runs,
            seed: options.seed,
            tally,
            ...(options.searches === undefined ? {} : { searches: options.searches }),
            ...(options.progress ? { progress: options.progress } : {}),
            ...(options.timeLimitMs === undefined ? {} : { timeLimitMs: options.timeLimitMs }),
            ...(options.shard === undefined ? {} : { shard: options.shard, ...(options.peers === undefined ? {} : { peers: options.peers }) }),
            ...(worlds === undefined ? {} : { worlds }),
            ...(census === undefined ? {} : { onWorld: (run: Execution, k: number) => census.add(run.history, k) }),
          }).catch((error: unknown) => {
            sizePlace(error, options.events);
            throw error;
          })),
          ms: performance.now() - start,
        }
      : null;
  const statuses: SuiteStatus[] = [
    ...regressions.map((r) => r.status),
    ...outcomes.flatMap((s) => (s.execution ? [s.execution.result.verdict.status] : [])),
    ...(property ? [property.status] : []),
  ];
  let status: SuiteStatus = statuses.includes('error') ? 'error' : statuses.includes('fail') ? 'fail' : statuses.includes('unknown') ? 'unknown' : 'pass';
  // A pass is only for what was exercised: a run in which every scenario was skipped or
  // untested, no regression was judged and no generated world ran has passed nothing. A
  // shard's worlds left to the other shards count among fast-check's runs, not here.
  const judged =
    regressions.some((r) => r.execution !== null && r.status !== 'unknown') ||
    outcomes.some((o) => o.execution !== undefined && o.untested === undefined) ||
    (property !== null && property.runs - (property.skipped ?? 0) > 0);
  // A time limit that ended the search before its first world asked for worlds and got none.
  const noWorld = property !== null && property.interrupted === true && property.runs - (property.skipped ?? 0) === 0;
  const checks = tally.summary();
  const reason =
    status === 'pass' && !judged ? 'nothing was exercised: no scenario was judged (each was skipped, untested or left to another shard), and no generated world ran here'
    : status === 'pass' && noWorld ? 'no generated world ran within the time limit: give a longer --time-limit, or none'
    : status === 'pass' ? (onlyLiveness(checks) ?? undefined)
    : undefined;
  if (reason !== undefined) status = 'unknown';
  return {
    ...(reason === undefined ? {} : { reason }),
    consumer: consumer.name,
    adapter: options.adapter,
    seed: options.seed,
    runs: options.runs,
    status,
    regressions,
    scenarios: outcomes,
    property,
    checks,
    evidence: tally.record(),
    regressionsInFile: entries.length,
    regressionsDigest: entriesDigest(entries),
    ...(census === undefined || property === null ? {} : { census: census.summary() }),
  };
}

/**
 * The failures of this run that belong in the regression file. Of its scenarios it reads only
 * the executions of those that did not pass, so a suite merged from shards, which keeps no
 * other, gives the same entries.
 */
export function newRegressions(result: Pick<SuiteResult, 'adapter' | 'property'> & { readonly scenarios: readonly { readonly scenario: { readonly name: string }; readonly execution?: Execution }[] }): RegressionEntry[] {
  const out: RegressionEntry[] = [];
  for (const s of result.scenarios) {
    const v = s.execution?.result.verdict;
    if (v && v.status !== 'pass' && s.execution) out.push({ adapter: result.adapter, kind: 'scenario', scenario: s.scenario.name, anomaly: v.anomalies[0]?.kind ?? v.status, hash: s.execution.hash });
  }
  const p = result.property;
  if (p?.counterexample && p.path !== null) {
    out.push({ adapter: result.adapter, kind: 'world', seed: p.seed, path: p.path, ...(p.events === undefined ? {} : { events: p.events }), anomaly: p.counterexample.result.verdict.anomalies[0]?.kind ?? p.status, hash: p.counterexample.hash });
  }
  return out;
}
