/**
 * The adversity census of generated worlds, counted in the executed histories of a consumer
 * (src/selftest/adversity-census.ts): which kinds of real-source adversity, and which
 * combinations of them, the worlds reach, and after how many.
 *
 *     npx tsx bench/census.ts [worlds] [seed]        one run: each cell, when first reached, how often
 *     npx tsx bench/census.ts --medians [seeds] [worlds]
 *         the median over seeds (default 20, each of 200 worlds) of the world that first
 *         reached each cell, for the reference consumer and its newest-first variant
 *         (also `npm run census [-- seeds worlds]`)
 */
import { census, medianFirst, renderCensus, type CensusSummary } from '../src/selftest/adversity-census.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { searchSeed } from '../src/run/conformance.js';

const BASE_SEED = 20260401;
const args = process.argv.slice(2);

if (args[0] === '--medians') {
  const seeds = Number(args[1] ?? 20);
  const worlds = Number(args[2] ?? 200);
  for (const consumer of [referenceConsumer(), referenceConsumer({ order: 'newest-first' })]) {
    const runs: CensusSummary[] = [];
    for (let i = 0; i < seeds; i++) runs.push(await census(consumer, worlds, searchSeed(BASE_SEED, i)));
    const cells = runs[0]?.cells ?? [];
    const width = Math.max(...cells.map((c) => c.name.length));
    console.log(`${consumer.name}: the world that first reached each cell, median over ${seeds} seeds of ${worlds} worlds each (target: at most 200)`);
    let worst = 0;
    for (const [j, cell] of cells.entries()) {
      const firsts = runs.map((r) => r.cells[j]?.firstWorld ?? null);
      const median = medianFirst(firsts);
      const never = firsts.filter((f) => f === null).length;
      worst = Math.max(worst, median ?? Number.POSITIVE_INFINITY);
      console.log(`  ${cell.name.padEnd(width)}  median ${median === null ? `never (within ${worlds})` : String(median).padStart(5)}${never > 0 ? `   (${never} of ${seeds} seeds never)` : ''}`);
    }
    console.log(`  every cell: ${Number.isFinite(worst) && worst <= 200 ? 'within' : 'NOT within'} 200 worlds at the median (worst ${Number.isFinite(worst) ? worst : 'never'})`);
  }
} else {
  const worlds = Number(args[0] ?? 1000);
  const seed = Number(args[1] ?? BASE_SEED);
  console.log(`census of ${worlds} generated worlds, seed ${seed}, reference consumer:`);
  for (const line of renderCensus(await census(referenceConsumer(), worlds, seed))) console.log(`  ${line}`);
}
