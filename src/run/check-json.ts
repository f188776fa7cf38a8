import { worldWhat } from '../report/replay-command.js';
import type { AnomalyKind } from '../../model/anomalies.js';
import { check, type Verdict } from '../../model/checker.js';
import type { History } from '../../model/history.js';
import type { Plan } from '../../scenarios/plan.js';
import { scenarioStatus, type CheckEvidence, type CheckSummary, type ScenarioStatus, type Shard, type SuiteStatus } from './conformance.js';
import { hashHistory, type Execution } from './execute.js';
import type { RegressionEntry } from './regressions.js';
import type { SuiteResult } from './suite.js';
import type { RunIdentity } from './run-identity.js';

/**
 * What `check --json` writes: verdicts, anomalies and replay commands, and for every failure
 * the plan and full history it came from. A shard's file (`--shard I/N`) adds a `shard`
 * block: what `tidemark merge` needs to combine the shards into the unsharded result.
 */
export interface CheckJson {
  /** Which run this is a result of (src/run/run-identity.ts): merge refuses shards of different runs. */
  readonly run: RunJson;
  readonly consumer: string;
  readonly adapter: string;
  readonly seed: number;
  /** Generated worlds asked for. */
  readonly runs: number;
  /** Searches asked for after a failure (see SEARCHES). */
  readonly searches: number;
  readonly verdict: SuiteStatus;
  /** Why a run that found nothing wrong is still not a pass (it exercised nothing). */
  readonly reason?: string;
  readonly regressions: readonly RegressionJson[];
  readonly scenarios: readonly ScenarioJson[];
  readonly worlds: WorldsJson | null;
  readonly checks: readonly CheckSummary[];
  readonly shard?: CheckShardJson;
}

export interface RunJson {
  readonly id: string;
  readonly identity: RunIdentity;
}

export interface FailureJson {
  readonly anomalies: Verdict['anomalies'];
  readonly plan: Plan;
  readonly history: History;
  readonly hash: string;
  /**
   * The sha256 of the history the check's final replay under real kills gave, where it
   * differs from `hash` (a process target checked with session crashes): what a replay,
   * which kills for real, is held to once the failure is recorded.
   */
  readonly realHash?: string;
  /**
   * The history real kills gave, with `realHash`: `tidemark merge`, which cannot run the
   * consumer, judges it again to apply the check's rule that a failure no real kill bears
   * out is no verdict on the consumer.
   */
  readonly realHistory?: History;
}

export type RegressionJson = RegressionEntry & { readonly status: SuiteStatus; readonly note?: string; readonly failure?: FailureJson };

export interface ScenarioJson {
  readonly name: string;
  readonly rules: readonly string[];
  readonly status: ScenarioStatus;
  readonly skipped?: string;
  readonly untested?: string;
  readonly replay?: string;
  readonly failure?: FailureJson;
}

export interface WorldsJson {
  readonly status: SuiteStatus;
  /** The world size asked for (`--events`). */
  readonly events?: number;
  /** Worlds until the first failure, that one included; or all asked, on a pass. */
  readonly runs: number;
  readonly seed: number;
  readonly path: string | null;
  readonly shrinks: number;
  readonly searches: number;
  readonly interrupted?: boolean;
  readonly replay?: string;
  readonly failure?: FailureJson;
}

/** A shard's own part of the file: which shard, of what, and the evidence its checks were judged on. */
export interface CheckShardJson extends Shard {
  readonly command: 'check';
  /** The tidemark that ran it: another version may generate other worlds from the same seed. */
  readonly tidemark: string;
  /** This adapter's regressions in the file, of which `regressions` holds this shard's share. */
  readonly regressionsInFile: number;
  /** What they name, in order (src/run/regressions.ts entriesDigest): every shard of a run replayed its share of one list. */
  readonly regressionsDigest: string;
  /** Generated worlds left to the other shards. */
  readonly skipped: number;
  /** World calls made here, and milliseconds of wall time: for reports, never compared. */
  readonly calls: number;
  readonly ms: { readonly regressions: readonly number[]; readonly scenarios: readonly number[]; readonly worlds: number };
  readonly evidence: Partial<Record<AnomalyKind, CheckEvidence>>;
  /** --time-limit, in seconds, when given: a shard cut short covers less than its share. */
  readonly timeLimit?: number;
  /**
   * Worlds a process consumer ran with session crashes (--kills sampled), when any: the
   * failures of a run that did are replayed with real kills before its verdict (`check --jobs`).
   */
  readonly sessionWorlds?: number;
  /**
   * The index of another shard's first failing world, for which this shard (one of `check
   * --jobs`) stopped: it ran every world of its share up to that one, and stopped there or
   * while shrinking a failure of its own found further on (see PropertyOutcome). The merge
   * holds that to another shard having failed there or before.
   */
  readonly stoppedBy?: number;
}

/** The suite for machines; histories only for failures. */
export function checkJson(
  result: SuiteResult,
  options: {
    readonly run: RunJson;
    readonly searches: number;
    readonly replay: (kind: 'scenario' | 'world', what: string) => string;
    readonly shard?: Omit<CheckShardJson, 'command' | 'regressionsInFile' | 'regressionsDigest' | 'skipped' | 'stoppedBy' | 'calls' | 'ms' | 'evidence'>;
    /** By a failure's hash, its final replay under real kills. */
    readonly realRuns?: ReadonlyMap<string, { readonly hash: string; readonly history: History }>;
  },
): CheckJson {
  const { replay } = options;
  const failure = (e: Execution | null | undefined): { failure?: FailureJson } => failureOf(e, options.realRuns);
  const p = result.property;
  return {
    run: options.run,
    consumer: result.consumer,
    adapter: result.adapter,
    seed: result.seed,
    runs: result.runs,
    searches: options.searches,
    verdict: result.status,
    ...(result.reason === undefined ? {} : { reason: result.reason }),
    regressions: result.regressions.map((r) => ({ ...r.entry, status: r.status, ...(r.note ? { note: r.note } : {}), ...failure(r.execution) })),
    scenarios: result.scenarios.map((s) => ({
      name: s.scenario.name,
      rules: s.scenario.rules,
      status: scenarioStatus(s),
      ...(s.skipped ? { skipped: s.skipped } : {}),
      ...(s.untested ? { untested: s.untested } : {}),
      ...(s.execution && s.execution.result.verdict.status !== 'pass' ? { replay: replay('scenario', s.scenario.name), ...failure(s.execution) } : {}),
    })),
    worlds: p && {
      status: p.status,
      ...(p.events === undefined ? {} : { events: p.events }),
      runs: p.runs,
      seed: p.seed,
      path: p.path,
      shrinks: p.shrinks,
      searches: p.searches,
      ...(p.interrupted ? { interrupted: true } : {}),
      ...(p.counterexample ? { replay: replay('world', worldWhat(p)), ...failure(p.counterexample) } : {}),
    },
    checks: result.checks,
    ...(options.shard === undefined
      ? {}
      : {
          shard: {
            command: 'check' as const,
            ...options.shard,
            regressionsInFile: result.regressionsInFile,
            regressionsDigest: result.regressionsDigest,
            skipped: p?.skipped ?? 0,
            ...(p?.stoppedBy === undefined ? {} : { stoppedBy: p.stoppedBy }),
            calls: p?.calls ?? 0,
            ms: { regressions: result.regressions.map((r) => r.ms ?? 0), scenarios: result.scenarios.map((s) => s.ms ?? 0), worlds: p?.ms ?? 0 },
            evidence: result.evidence,
          },
        }),
  };
}

function failureOf(e: Execution | null | undefined, realRuns: ReadonlyMap<string, { readonly hash: string; readonly history: History }> | undefined): { failure?: FailureJson } {
  if (!e || e.result.verdict.status === 'pass') return {};
  const real = realRuns?.get(e.hash);
  return { failure: { anomalies: e.result.verdict.anomalies, plan: e.plan, history: e.history, hash: e.hash, ...(real === undefined || real.hash === e.hash ? {} : { realHash: real.hash, realHistory: real.history }) } };
}

/**
 * A failure read back from JSON, judged again: the checker is a pure function of the
 * history, so this is the execution the run printed, without running the consumer. Null when
 * the history is not the one its hash names (the file was edited or cut).
 */
export function executionOf(f: FailureJson): Execution | null {
  if (hashHistory(f.history) !== f.hash) return null;
  return { plan: f.plan, history: f.history, hash: f.hash, result: check(f.history) };
}

/**
 * How a failure's final replay under real kills ended, judged again from the history it
 * carries: null when it carries none (no final replay, or one that gave the same history);
 * 'edited' when the history is not the one `realHash` names.
 */
export function realVerdictOf(f: FailureJson): Verdict['status'] | 'edited' | null {
  if (f.realHistory === undefined) return null;
  if (f.realHash === undefined || hashHistory(f.realHistory) !== f.realHash) return 'edited';
  return check(f.realHistory).verdict.status;
}
