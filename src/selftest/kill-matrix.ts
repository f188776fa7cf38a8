import { performance } from 'node:perf_hooks';
import type { AnomalyKind } from '../../model/anomalies.js';
import type { Consumer } from '../adapter/consumer.js';
import { checkProperty, owns, type PropertyOutcome, type Shard } from '../run/conformance.js';
import type { Mutant } from './mutants.js';
import { runSearches } from './search-pool.js';
import type { ShrunkSize } from './shrunk-size.js';

/**
 * The default budget of a mutant search, in generated worlds. When it was set, the slowest
 * kill over the report's 20 seeds took 795 worlds (today 202: REPORT.md's per-seed table);
 * a budget well above that keeps a kill from depending on a lucky seed.
 */
export const MUTANT_BUDGET = 3000;

/** One mutant's fate under one seed. */
export interface KillRow {
  readonly mutant: string;
  readonly rule: string;
  readonly expected: readonly AnomalyKind[];
  /** The anomaly that killed it: the first expected one found, else the headline. */
  readonly found: AnomalyKind | null;
  /** Killed with an expected anomaly; killed by another one counts as not killed. */
  readonly killed: boolean;
  /** Generated worlds until the first failing one, that one included. */
  readonly runsToKill: number | null;
  readonly shrunk: ShrunkSize | null;
  readonly seed: number;
  /** The counterexample's replay: the seed of the search it came from (see SEARCHES) and its path. */
  readonly replay: { readonly seed: number; readonly path: string } | null;
  readonly ms: number;
}

/** How reliably one mutant dies across many seeds. */
export interface Reliability {
  readonly mutant: string;
  readonly seeds: number;
  readonly killed: number;
  readonly medianRunsToKill: number | null;
  /** The largest shrunk counterexample, less the hand-made minimal one (events, adversity). */
  readonly worstOverMinimal: { readonly events: number; readonly faults: number } | null;
  readonly meetsTargets: boolean;
}

/** The targets a mutant must meet: killed on every seed, within 50 worlds at the median, shrunk to within one event and one fault of minimal. */
export const TARGETS = { medianRunsToKill: 50, extraEvents: 1, extraFaults: 1 } as const;

export function reliabilityOf(mutant: Mutant, rows: readonly KillRow[]): Reliability {
  const killed = rows.filter((r) => r.killed);
  const runs = killed.map((r) => r.runsToKill as number).sort((a, b) => a - b);
  const median = runs.length === 0 ? null : runs.length % 2 === 1 ? (runs[(runs.length - 1) / 2] as number) : ((runs[runs.length / 2 - 1] as number) + (runs[runs.length / 2] as number)) / 2;
  const over = killed.map((r) => ({ events: (r.shrunk?.events ?? 0) - mutant.minimal.events, faults: (r.shrunk?.faults ?? 0) - mutant.minimal.faults }));
  const worst = over.length === 0 ? null : { events: Math.max(...over.map((o) => o.events)), faults: Math.max(...over.map((o) => o.faults)) };
  return {
    mutant: mutant.name,
    seeds: rows.length,
    killed: killed.length,
    medianRunsToKill: median,
    worstOverMinimal: worst,
    meetsTargets:
      killed.length === rows.length &&
      median !== null &&
      median <= TARGETS.medianRunsToKill &&
      worst !== null &&
      worst.events <= TARGETS.extraEvents &&
      worst.faults <= TARGETS.extraFaults,
  };
}

/** Seeds derived from one base seed, so a reliability run is as repeatable as a single one. */
export function seedsFrom(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => (base + i * 7919) % 0x7fffffff);
}

export interface KillMatrix {
  readonly rows: readonly KillRow[];
  readonly reference: PropertyOutcome & { readonly ms: number };
}

/**
 * Every mutant under one seed and budget, searched in the pool, and the reference consumer
 * under the same, which must pass. Rows come to `progress` in catalog order, whichever
 * search ends first. With a shard, only its share: the jth mutant (from 0) when j mod count
 * is index - 1, and its share of the reference's worlds (see checkProperty).
 */
export async function killMatrix(
  all: readonly Mutant[],
  reference: Consumer,
  options: { readonly runs: number; readonly seed: number; readonly jobs?: number; readonly shard?: Shard },
  progress: (row: KillRow) => void = () => {},
): Promise<KillMatrix> {
  const mutants = all.filter((_, j) => owns(options.shard, j));
  const ended: (KillRow | undefined)[] = mutants.map(() => undefined);
  let shown = 0;
  const rows = await runSearches(
    mutants.map((m) => ({ mutant: m.name, runs: options.runs, seed: options.seed })),
    options.jobs,
    (row, index) => {
      ended[index] = row;
      for (; ended[shown] !== undefined; shown++) progress(ended[shown] as KillRow);
    },
  );
  const t0 = performance.now();
  const outcome = await checkProperty(reference, { runs: options.runs, seed: options.seed, ...(options.shard ? { shard: options.shard } : {}) });
  return { rows, reference: { ...outcome, ms: performance.now() - t0 } };
}
