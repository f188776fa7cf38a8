import { it } from 'vitest';
import { MUTANTS } from '../src/consumers/mutants.js';
import { killOne, reliabilityOf, seedsFrom } from '../src/kill-matrix.js';
import { performance } from 'node:perf_hooks';
it('rel', async () => {
  const t0 = performance.now();
  for (const m of MUTANTS) {
    const rows = [];
    for (const seed of seedsFrom(1, 20)) rows.push(await killOne(m, 1000, seed));
    const r = reliabilityOf(m, rows);
    console.log(m.name.padEnd(28), JSON.stringify(r), Math.round(rows.reduce((a, x) => a + x.ms, 0)));
  }
  console.log('total', Math.round(performance.now() - t0));
}, 1200000);
