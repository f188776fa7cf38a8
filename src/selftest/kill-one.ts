import { performance } from 'node:perf_hooks';
import { checkProperty } from '../run/conformance.js';
import type { KillRow } from './kill-matrix.js';
import type { Mutant } from './mutants.js';
import { sizeOf } from './shrunk-size.js';

/**
 * One mutant's search under one seed and budget: the unit of work the search pool hands
 * its threads, decided by these three alone.
 */
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
    shrunk: x ? sizeOf(x) : null,
    seed,
    replay: outcome.path === null ? null : { seed: outcome.seed, path: outcome.path },
    ms,
  };
}
