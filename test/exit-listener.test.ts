import { describe, expect, it, vi } from 'vitest';

describe('the clean-up at exit of consumer processes', () => {
  it('is one exit listener per process, however often its module is loaded (a test runner loads it once per file)', async () => {
    await import('../src/adapter/process/pool.js');
    const before = process.listenerCount('exit');
    for (let i = 0; i < 12; i++) {
      vi.resetModules();
      await import('../src/adapter/process/pool.js');
    }
    // Before, each load added a listener: past ten, Node warned of a leak (MaxListenersExceededWarning).
    expect(process.listenerCount('exit')).toBe(before);
  });
});
