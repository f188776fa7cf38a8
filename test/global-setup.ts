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
 * Then decides the seed of the randomly seeded tests, once for the whole run, and prints it
 * before any test starts: a test that fails for one seed in a hundred fails on CI by chance,
 * and the log must say how to run it again, whichever test it was and whether or not it
 * reports its seed itself.
 */
export default function setup(project: TestProject): void {
  // The package's own bin script: typescript's exports do not name it, so it is not resolved as a module.
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const given = process.env.TIDEMARK_SEED;
  const seed = given === undefined ? randomInt(0x7fffffff) : Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`TIDEMARK_SEED must be a non-negative integer, got ${JSON.stringify(given)}`);
  project.provide('seed', seed);
  console.log(`tidemark tests: randomly seeded tests run with TIDEMARK_SEED=${seed}${given === undefined ? ' (fresh; set it to run them again with the same worlds)' : ''}`);
}
