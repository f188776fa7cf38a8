import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildReport, deterministicPart, REPORT_SEED } from '../src/report/report-md.js';

/**
 * REPORT.md is generated, never written by hand: regenerating its deterministic parts with
 * the committed seed must give the committed text. A failure here means the code changed
 * what the report says; run `npm run report` and commit the result.
 */
describe('REPORT.md', () => {
  it('is not stale', async () => {
    expect(existsSync('REPORT.md'), 'REPORT.md is missing: run npm run report').toBe(true);
    const committed = readFileSync('REPORT.md', 'utf8');
    const seeds = 20;
    const fresh = await buildReport({ seed: REPORT_SEED, runs: 1000, seeds, testDir: 'test' });
    expect(deterministicPart(committed)).toBe(deterministicPart(fresh));
  }, 1_200_000);
});
