import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { killSighted, sight, stillRuns, stillThere } from './support.js';

/**
 * The tests that wait for processes to end, and kill what is left, judge a process by what
 * they first saw of it, not by its pid alone: a pid is given again once its process is gone.
 * A later owner of a pid is shown here as a sighting with another start time.
 */
describe('a process is told apart from a later owner of its pid', () => {
  it('is seen running while it runs, killed only as the process first seen, and gone once reaped', async () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_, signal) => resolve(signal)));
    const pid = child.pid as number;
    const seen = sight(pid);
    expect(seen.start).not.toBeNull();
    expect(stillRuns(seen)).toBe(true);
    // Another process under the same pid, as one started after this one ended would be.
    const later = { pid, start: String(Number(seen.start) + 1) };
    expect(stillThere(later)).toBe(false);
    killSighted(later);
    expect(stillRuns(seen)).toBe(true);
    killSighted(seen);
    expect(await exited).toBe('SIGKILL');
    expect(stillThere(seen)).toBe(false);
  });
});
