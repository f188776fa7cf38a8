import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
