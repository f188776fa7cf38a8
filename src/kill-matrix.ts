import { performance } from 'node:perf_hooks';
import type { AnomalyKind } from '../model/anomalies.js';
import type { Plan } from '../scenarios/plan.js';
import { checkProperty, type PropertyOutcome } from './conformance.js';
import type { Consumer } from './consumer.js';
import type { Mutant } from './consumers/mutants.js';

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
  readonly path: string | null;
  readonly ms: number;
}

/** The size of a minimal counterexample: its events, its adversity (faults, mutations, a rebind) and its history steps. */
export interface ShrunkSize {
  readonly events: number;
  readonly faults: number;
  readonly steps: number;
}

export function adversityOf(plan: Plan): number {
  return plan.faults.length + plan.mutations.length + (plan.rebind === null ? 0 : 1);
}

export async function killOne(mutant: Mutant, runs: number, seed: number): Promise<KillRow> {
  const expected = [mutant.expect, ...mutant.also];
  const t0 = performance.now();
  const outcome = await checkProperty(mutant.consumer, { runs, seed });
  const ms = performance.now() - t0;
  const x = outcome.counterexample;
  const kinds = x?.result.verdict.anomalies.map((a) => a.kind) ?? [];
  const found = kinds.find((k) => expected.includes(k)) ?? kinds[0] ?? null;
  return {
    mutant: mutant.name,
    rule: mutant.rule,
    expected,
    found,
    killed: found !== null && expected.includes(found),
    runsToKill: outcome.status === 'pass' ? null : outcome.runs,
    shrunk: x ? { events: x.plan.events.length, faults: adversityOf(x.plan), steps: x.history.steps.length } : null,
    seed,
    path: outcome.path,
    ms,
  };
}

export interface KillMatrix {
  readonly rows: readonly KillRow[];
  readonly reference: PropertyOutcome & { readonly ms: number };
}

/** Every mutant under one seed and budget, and the reference consumer under the same, which must pass. */
export async function killMatrix(mutants: readonly Mutant[], reference: Consumer, runs: number, seed: number): Promise<KillMatrix> {
  const rows: KillRow[] = [];
  for (const m of mutants) rows.push(await killOne(m, runs, seed));
  const t0 = performance.now();
  const outcome = await checkProperty(reference, { runs, seed });
  return { rows, reference: { ...outcome, ms: performance.now() - t0 } };
}
