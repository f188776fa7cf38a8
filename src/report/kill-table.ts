import type { PropertyOutcome } from '../run/conformance.js';
import type { KillRow } from '../selftest/kill-matrix.js';
import { seedFlag } from './replay-command.js';

/** The kill matrix as fixed-width text, one row per mutant, so it reads in a terminal and a CI log alike. */
export const KILL_HEADER = `${'mutant'.padEnd(28)} ${'rule'.padEnd(4)} ${'expected'.padEnd(24)} ${'found'.padEnd(24)} killed ${'worlds'.padStart(6)} ${'events'.padStart(6)} ${'faults'.padStart(6)} ${'steps'.padStart(6)} ${'time'.padStart(7)}`;

export function formatKillRow(r: KillRow): string {
  const cells = [
    r.mutant.padEnd(28),
    r.rule.padEnd(4),
    r.expected[0]!.padEnd(24),
    (r.found ?? '-').padEnd(24),
    (r.killed ? 'yes' : 'NO').padEnd(6),
    String(r.runsToKill ?? '-').padStart(6),
    String(r.shrunk?.events ?? '-').padStart(6),
    String(r.shrunk?.faults ?? '-').padStart(6),
    String(r.shrunk?.steps ?? '-').padStart(6),
    `${(r.ms / 1000).toFixed(1)}s`.padStart(7),
  ];
  return cells.join(' ');
}

export function formatReferenceRow(o: Pick<PropertyOutcome, 'status' | 'runs'> & { readonly ms: number }): string {
  return `${'reference'.padEnd(28)} ${'-'.padEnd(4)} ${'pass'.padEnd(24)} ${o.status.padEnd(24)} ${'-'.padEnd(6)} ${String(o.runs).padStart(6)} ${''.padStart(6)} ${''.padStart(6)} ${''.padStart(6)} ${`${(o.ms / 1000).toFixed(1)}s`.padStart(7)}`;
}

/**
 * The kill matrix's verdict: every mutant killed and the reference passing, else the
 * mutants that were not, each with the seed that replays it.
 */
export function matrixVerdict(
  rows: readonly KillRow[],
  reference: { readonly status: string; readonly runs: number; readonly skipped?: number },
  suffix = '',
): { readonly status: 'pass' | 'fail' | 'unknown'; readonly lines: readonly string[] } {
  // A shard that owns no mutant and none of the reference's worlds has judged nothing.
  if (rows.length === 0 && reference.runs - (reference.skipped ?? 0) <= 0) {
    return { status: 'unknown', lines: [`verdict: unknown: nothing was exercised, no mutant was searched and the reference ran no world here${suffix}`] };
  }
  const killed = rows.filter((r) => r.killed).length;
  const lines = [`verdict: ${killed} of ${rows.length} mutants killed, reference ${reference.status}${suffix}`];
  for (const r of rows.filter((x) => !x.killed)) {
    lines.push(`  not killed: ${r.mutant}${r.found ? ` (found ${r.found}, expected ${r.expected.join(' or ')})` : ''}; replay with ${seedFlag(r.seed)}`);
  }
  return { status: killed === rows.length && reference.status === 'pass' ? 'pass' : 'fail', lines };
}
