import type { PropertyOutcome } from '../conformance.js';
import type { KillRow } from '../kill-matrix.js';

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

export function formatReferenceRow(o: PropertyOutcome & { readonly ms: number }): string {
  return `${'reference'.padEnd(28)} ${'-'.padEnd(4)} ${'pass'.padEnd(24)} ${o.status.padEnd(24)} ${'-'.padEnd(6)} ${String(o.runs).padStart(6)} ${''.padStart(6)} ${''.padStart(6)} ${''.padStart(6)} ${`${(o.ms / 1000).toFixed(1)}s`.padStart(7)}`;
}
