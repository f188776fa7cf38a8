import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { delimiter, dirname } from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/sequencer.js';

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
    setupFiles: ['test/file-cleanup.ts'],
    env: { PATH: pathWithInterpreter() },
    // A bound only against a hang, never against slowness: at least ten times the slowest
    // test's quiet duration (about 35 s), so a machine with other work on it slows the suite
    // down and never fails it. Tests assert the work done, never how long it took.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Two files per core and two more. Many files wait as much as they compute: a bridged
    // call is a round trip to a consumer process, a process test waits for interpreters to
    // start, for a disk to sync and for limits to pass. Measured on 2 cores (quiet, the whole
    // suite): 4 workers kept the CPU busy 142% of its wall time, 6 workers 144% and 5% less
    // wall time. vitest's default on a 2-core machine is a single worker.
    maxWorkers: availableParallelism() * 2 + 2,
    // A worker runs its files in one module graph rather than one each: the tests import
    // most of src/ and model/, and loading them again per file cost 65 s of the suite's
    // 350 s (vitest's "import" time) against 13 s shared. What a file leaves behind is then
    // seen by the next in its worker: module state (the process registry, the counters, the
    // stage listener) and process.env. Each check builds its world afresh and sets or removes
    // what it puts in process.env; a test that needs a module loaded anew says so
    // (vi.resetModules).
    isolate: false,
    sequence: { sequencer: LongestFirst },
    coverage: {
      provider: 'v8',
      include: ['model/**/*.ts', 'src/**/*.ts'],
      // Each layer on its own: a well-tested model must not hide an untested runtime.
      thresholds: { 'model/**': { lines: 90 }, 'src/**': { lines: 90 } },
      reporter: ['text-summary'],
    },
  },
});
