import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { delimiter, dirname } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The PATH the tests run with: the directory of the Python interpreter that `python3` names
 * first, ahead of any version manager's shim. The suite starts thousands of Python processes
 * (an incarnation of a process consumer, a sync attempt of a Singer tap), and the commands
 * say `python3`, as the docs do. Through a pyenv shim each start runs a shell script and pyenv
 * before the interpreter: measured on a loaded 2-core machine, 0.64 s of CPU a start against
 * 0.12 s for the interpreter itself. The interpreter is the one the shim would have run, so
 * the tests run what they ran before, five times cheaper. (The shim warning's own tests build
 * their PATHs themselves.)
 */
function pathWithInterpreter(): string {
  const path = process.env.PATH ?? '';
  const found = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  const executable = found.status === 0 ? found.stdout.trim() : '';
  return executable === '' ? path : [dirname(executable), path].join(delimiter);
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    env: { PATH: pathWithInterpreter() },
    // A bound only against a hang, never against slowness: at least ten times the slowest
    // test's quiet duration (about 35 s), so a machine with other work on it slows the suite
    // down and never fails it. Tests assert the work done, never how long it took.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Two more files than cores. Many files wait as much as they compute: a bridged call
    // is a round trip to a consumer process, and a process test waits for interpreters to
    // start and for limits to pass. Measured on 2 cores, one worker per core kept the CPU
    // busy about 64% of the suite's wall time (382 s of CPU in 297 s); the extra files
    // fill those waits. vitest's default on a 2-core machine is a single worker.
    maxWorkers: availableParallelism() + 2,
    coverage: {
      provider: 'v8',
      include: ['model/**/*.ts', 'src/**/*.ts'],
      // Each layer on its own: a well-tested model must not hide an untested runtime.
      thresholds: { 'model/**': { lines: 90 }, 'src/**': { lines: 90 } },
      reporter: ['text-summary'],
    },
  },
});
