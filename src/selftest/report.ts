import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Consumer } from '../adapter/consumer.js';
import { renderReport, type ReportOptions } from '../report/report-md.js';
import { checkScenarios } from '../run/conformance.js';
import { seedsFrom, type KillRow } from './kill-matrix.js';
import { MUTANTS, type Mutant } from './mutants.js';
import { PROFILES } from '../../scenarios/profiles.js';
import { referenceConsumer } from './reference.js';
import { runSearches, type SearchTask } from './search-pool.js';

/**
 * REPORT.md's run: the named scenarios against every reference variant, the tests that name
 * each rule, and every mutant's search under every seed, on the search pool; then
 * report-md.ts renders what they measured.
 */
export async function buildReport(options: ReportOptions): Promise<string> {
  const say = options.progress ?? (() => {});
  say('scenarios');
  const variants = await Promise.all(VARIANTS.map(async (v) => ({ name: v.name, outcomes: await checkScenarios(v) })));
  const reference = referenceConsumer({ name: 'reference' });
  const profiles = await Promise.all(
    Object.entries(PROFILES).map(async ([name, profile]) => ({ name, outcomes: await checkScenarios({ ...reference, capabilities: { ...reference.capabilities, profile } }) })),
  );
  say('rules');
  const tests = options.testDir ? testsByRule(options.testDir) : null;
  const rows = new Map<string, readonly KillRow[]>(options.rows ?? []);
  const tasks = reportTasks(options, MUTANTS.filter((m) => !rows.has(m.name)));
  const left = new Map(MUTANTS.map((m) => [m.name, options.seeds]));
  const found = await runSearches(tasks, options.jobs, (row) => {
    left.set(row.mutant, (left.get(row.mutant) ?? 0) - 1);
    if (left.get(row.mutant) === 0) say(`mutant ${row.mutant}`);
  });
  for (const m of MUTANTS) if (!rows.has(m.name)) rows.set(m.name, found.filter((r) => r.mutant === m.name));
  return renderReport(options, { variants, profiles, tests, rows });
}

/**
 * Every search of the report's kill matrix and reliability table, in the order the report
 * lists them: each mutant of the catalog under each seed. `report --shard` runs a share of
 * this list, and `tidemark merge` puts the rows back in this order.
 */
export function reportTasks(options: { readonly seed: number; readonly runs: number; readonly seeds: number }, mutants: readonly Mutant[] = MUTANTS): SearchTask[] {
  const seeds = seedsFrom(options.seed, options.seeds);
  return mutants.flatMap((m) => seeds.map((seed) => ({ mutant: m.name, runs: options.runs, seed })));
}

const VARIANTS: readonly Consumer[] = [
  referenceConsumer({ name: 'at-least-once' }),
  referenceConsumer({ name: 'exactly-once', delivery: 'exactly-once' }),
  referenceConsumer({ name: 'concurrent', delivery: 'at-least-once', concurrency: 3 }),
  referenceConsumer({ name: 'outbox', delivery: 'outbox' }),
  referenceConsumer({ name: 'cursor', bookmark: 'cursor' }),
];

/** Counts the tests whose titles carry each rule id, as the style asks tests to be named. */
function testsByRule(dir: string): Map<string, number> | null {
  const counts = new Map<string, number>();
  let found = false;
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.test.ts')) {
        found = true;
        for (const m of readFileSync(path, 'utf8').matchAll(/\bit(?:\.each\([^)]*\))?\(\s*['"`]([^'"`]*)/g)) {
          for (const id of new Set(m[1]!.match(/\bR(?:10|[1-9])\b/g) ?? [])) counts.set(id, (counts.get(id) ?? 0) + 1);
        }
      }
    }
  };
  try {
    walk(dir);
  } catch {
    return null;
  }
  return found ? counts : null;
}
