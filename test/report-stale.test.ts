import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../src/selftest/mutants.js';
import { MUTANT_BUDGET } from '../src/selftest/kill-matrix.js';
import { killOne } from '../src/selftest/kill-one.js';
import { deterministicPart, REPORT_SEED, rowsOf } from '../src/report/report-md.js';
import { buildReport } from '../src/selftest/report.js';

/**
 * REPORT.md is generated, never written by hand. Its scenario and rule tables are rebuilt
 * here in full; its kill matrix and reliability tables are rebuilt from its own per-seed
 * appendix, and a different sample of those searches is re-run on every test run. A failure
 * means the code changed what the report says: run `npm run report` and commit the result.
 */
describe('REPORT.md', () => {
  const committed = existsSync('REPORT.md') ? readFileSync('REPORT.md', 'utf8') : '';
  const rows = rowsOf(committed);

  it('exists, with 20 seeds for every mutant in the catalog', () => {
    expect(committed, 'REPORT.md is missing: run npm run report').not.toBe('');
    expect([...rows.keys()]).toEqual(MUTANTS.map((m) => m.name));
    for (const r of rows.values()) expect(r).toHaveLength(20);
  });

  it('says what the code says: scenarios, rules, kill matrix and reliability', async () => {
    const rebuilt = await buildReport({ seed: REPORT_SEED, runs: MUTANT_BUDGET, seeds: 20, testDir: 'test', rows });
    expect(deterministicPart(rebuilt)).toBe(deterministicPart(committed));
  });

  it('re-running a sample of its searches gives the same results', async () => {
    // Four mutants, each at one of its 20 seeds, chosen afresh on every run: over runs every
    // mutant and seed comes up, and a search that no longer gives its row fails the run that
    // samples it. Four, not more: each search is a mutant's whole search and shrinking (three
    // of them), this test is on the suite's critical path, and the table above is already
    // rebuilt in full from the rows these searches check; what the sample adds is that the
    // rows are still what the code finds.
    const sample = [...MUTANTS].sort(() => Math.random() - 0.5).slice(0, 4);
    for (const m of sample) {
      const mine = rows.get(m.name)!;
      const row = mine[Math.floor(Math.random() * mine.length)]!;
      const fresh = await killOne(m, MUTANT_BUDGET, row.seed);
      const { ms: _a, ...was } = row;
      const { ms: _b, ...now } = fresh;
      expect(now, `${m.name} at seed ${row.seed}`).toEqual(was);
    }
  });
});
