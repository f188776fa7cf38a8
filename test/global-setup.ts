import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ before any test runs. The tests that start tidemark as a process of its own
 * (a signal, a supervisor, a hostile adapter) start the built CLI, as a user's `npx tidemark`
 * does, rather than the source through tsx: measured, a start through tsx costs about 0.8 s
 * more CPU, and those tests start it some hundred times. Building here, once per vitest
 * start (about 1.5 s), means the CLI they start is the source's as the run began; in watch
 * mode, a rerun after an edit starts the CLI as it was built then.
 */
export default function setup(): void {
  // The package's own bin script: typescript's exports do not name it, so it is not resolved as a module.
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
