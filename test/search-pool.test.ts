import { describe, expect, it } from 'vitest';
import type { KillRow } from '../src/selftest/kill-matrix.js';
import { runSearches } from '../src/selftest/search-pool.js';

const withoutTime = ({ ms: _, ...row }: KillRow) => row;

describe('the search pool', () => {
  const tasks = [
    { mutant: 'token-as-watermark', runs: 200, seed: 1 },
    { mutant: 'checkpoint-before-flush', runs: 200, seed: 2 },
    { mutant: 'lowers-watermark-on-retry', runs: 200, seed: 3 },
  ];

  it('gives the rows one thread gives, in task order, whichever search ends first', async () => {
    const seen: number[] = [];
    const pooled = await runSearches(tasks, 2, (_, index) => seen.push(index));
    const alone = await runSearches(tasks, 1);
    expect(pooled.map(withoutTime)).toEqual(alone.map(withoutTime));
    expect(pooled.map((r) => [r.mutant, r.seed])).toEqual(tasks.map((t) => [t.mutant, t.seed]));
    expect(seen.sort()).toEqual([0, 1, 2]);
  });

  it('refuses a search of a mutant the catalog does not have, before starting any', async () => {
    const bad = [tasks[0]!, { mutant: 'no-such-mutant', runs: 10, seed: 1 }];
    for (const jobs of [1, 2]) await expect(runSearches(bad, jobs)).rejects.toThrow("no mutant named 'no-such-mutant'");
  });
});
