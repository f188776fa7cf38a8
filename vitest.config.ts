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
    // The tests are CPU-bound, and the slow files are slow for minutes: one file per core, not
    // one core left idle (vitest's default on a 2-core machine is a single worker).
    maxWorkers: availableParallelism(),
    coverage: {
      provider: 'v8',
      include: ['model/**/*.ts', 'src/**/*.ts'],
      // Each layer on its own: a well-tested model must not hide an untested runtime.
      thresholds: { 'model/**': { lines: 90 }, 'src/**': { lines: 90 } },
      reporter: ['text-summary'],
    },
  },
});
