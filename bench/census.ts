/**
 * How many of 1,000 generated worlds reach each kind of adversity that real sources show,
 * counted in the executed histories of the reference consumer (src/selftest/adversity-census.ts).
 *
 *     npx tsx bench/census.ts [worlds] [seed]
 */
import { census, CENSUS } from '../src/selftest/adversity-census.js';
import { referenceConsumer } from '../src/selftest/reference.js';

const worlds = Number(process.argv[2] ?? 1000);
const seed = Number(process.argv[3] ?? 20260401);
const counts = await census(referenceConsumer(), worlds, seed);
console.log(`census of ${worlds} generated worlds, seed ${seed}, reference consumer:`);
for (const item of CENSUS) console.log(`  ${item.padEnd(26)} ${String(counts[item]).padStart(5)} of ${worlds}`);
