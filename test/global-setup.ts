import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The seed of the run's randomly seeded tests (test/support.ts, SEED). */
    seed: number;
  }
}

/**
 * Builds dist/ before any test runs. The tests that start tidemark as a process of its own
 * (a signal, a supervisor, a hostile adapter) start the built CLI, as a user's `npx tidemark`
 * does, rather than the source through tsx: measured, a start through tsx costs about 0.8 s
 * more CPU, and those tests start it some hundred times. Building here, once per vitest
 * start (about 1.5 s), means the CLI they start is the source's as the run began; in watch
 * mode, a rerun after an edit starts the CLI as it was built then.
 *
 * It also decides the seed of the randomly seeded tests (SEED in test/support.ts), once per
 * vitest start, and prints it before any test starts: a test that fails for one seed in a
 * hundred fails on CI by chance, and the log must say how to run it again, whether or not the
 * test reports its seed itself. (Watch mode keeps it for its reruns.)
 */
export default function setup(project: TestProject): void {
  // The seed first: a bad one is refused before the build, not after it.
  const seed = runSeed(process.env.TIDEMARK_SEED);
  // The package's own bin script: typescript's exports do not name it, so it is not resolved as a module.
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  project.provide('seed', seed.value);
  console.log(`tidemark tests: randomly seeded tests run with TIDEMARK_SEED=${seed.value}${seed.fresh ? ' (fresh; set it to run them again with the same worlds)' : ''}`);
}

/** The largest seed every seeded test takes: fast-check's seeds are 32-bit, and checkProperty takes up to this. */
const MAX_SEED = 0xffffffff;

/**
 * TIDEMARK_SEED as given: decimal digits, at most MAX_SEED, taken as written (Number() would
 * also take `0x10` and `1e3`, and print another seed than the one typed). Unset or empty
 * (a CI template with no value), a fresh one.
 */
function runSeed(given: string | undefined): { readonly value: number; readonly fresh: boolean } {
  if (given === undefined || given === '') return { value: randomInt(0x7fffffff), fresh: true };
  const value = Number(given);
  if (!/^[0-9]+$/.test(given) || value > MAX_SEED) throw new Error(`TIDEMARK_SEED must be an integer from 0 to ${MAX_SEED} in decimal digits, got ${JSON.stringify(given)}`);
  return { value, fresh: false };
}
