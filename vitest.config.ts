import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    coverage: {
      provider: 'v8',
      include: ['model/**/*.ts', 'src/**/*.ts'],
      // Each layer on its own: a well-tested model must not hide an untested runtime.
      thresholds: { 'model/**': { lines: 90 }, 'src/**': { lines: 90 } },
      reporter: ['text-summary'],
    },
  },
});
