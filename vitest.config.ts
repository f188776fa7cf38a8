import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    coverage: {
      provider: 'v8',
      include: ['model/**/*.ts', 'src/**/*.ts'],
      exclude: ['src/cli.ts'],
      thresholds: { lines: 90 },
      reporter: ['text-summary'],
    },
  },
});
