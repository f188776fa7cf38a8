import { afterAll } from 'vitest';
import { killAllConsumers } from '../src/adapter/process/bridge.js';

/**
 * Run before each test file. A worker runs its files in one module graph (vitest.config.ts,
 * isolate: false), so a consumer process a file leaves running would still be in the
 * registry when the next file in that worker starts: a test that failed before its own
 * clean-up would fail the next file's checks that nothing is left running, and a process
 * killed then would report its end to the failed test's listeners, as an error of whatever
 * test runs at the time. So each file's processes end with the file, and one failure is
 * reported once, where it happened. Tests that check what a run leaves behind check it
 * themselves, before this runs.
 */
afterAll(() => {
  killAllConsumers();
});
