import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANG_MS, BUILT_CLI } from './support.js';

/**
 * Exit 4 says tidemark itself broke. A run the machine refused, or one whose in-process
 * adapter replaced a global tidemark's code relies on, is not that: it could not be judged
 * (exit 2), with the reason. Each runs the CLI as a process of its own: the globals are
 * that process's.
 */
const scratch = mkdtempSync(join(tmpdir(), 'tidemark-environment-'));

function tidemark(args: readonly string[], env: NodeJS.ProcessEnv = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BUILT_CLI, ...args, '--regressions', join(scratch, `r-${args.length}.json`)], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('a run that tidemark could not complete for reasons not its own', () => {
  it('a TMPDIR that cannot be a directory, for a blackbox consumer process whose store lives there: unknown, naming it', () => {
    // Under a regular file, so that nothing can create it; tsx, which runs the CLI from
    // source here, is told to keep no cache there.
    writeFileSync(join(scratch, 'a-file'), '');
    const r = tidemark(['check', '--command', 'python3 examples/python/sqlite_ledger.py', '--scenario', 'stale-token'], { TMPDIR: join(scratch, 'a-file', 'tmp'), TSX_DISABLE_CACHE: '1' });
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('the run could not be judged: the machine refused an operation: ENOTDIR');
    expect(r.err).not.toContain('harness error');
    expect(r.out).toMatch(/verdict: unknown\n$/);
  });

  it('an in-process adapter that replaces Promise: unknown, naming the global, never a harness error', () => {
    const r = tidemark(['check', '--adapter', 'test/fixtures/hostile/breaks-globals.ts', '--scenario', 'failed-event-holds-watermark']);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('the adapter replaced Promise');
    expect(r.err).not.toContain('harness error');
    expect(r.out).toMatch(/verdict: unknown\n$/);
  });
});

describe('what is not ours, in process', () => {
  it("a system error in tidemark's code names the machine; one in an adapter's is the adapter's; a plain error of ours is ours; a replaced global names itself", async () => {
    const { notOurs, replacedGlobals } = await import('../src/cli/environment.js');
    // Errors as thrown at a place in tidemark's code, and in an adapter's.
    const at = (error: Error, file: string): Error => Object.assign(error, { stack: `${error.name}: ${error.message}\n    at somewhere (${resolve(file)}:1:1)` });
    expect(notOurs(at(new Error('a contradiction of our own'), 'src/run/suite.ts'))).toBeNull();
    expect(notOurs(at(new TypeError('no store here'), 'test/fixtures/some-adapter.ts'))).toBe('the adapter threw outside a world call: TypeError: no store here');
    const refused = at(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' }), 'src/run/regressions.ts');
    expect(notOurs(refused)).toBe('the machine refused an operation: ENOSPC: no space left on device, write');
    const freeze = Object.freeze;
    try {
      Object.freeze = (<T>(v: T): T => v) as typeof Object.freeze;
      expect(replacedGlobals()).toEqual(['Object.freeze']);
      expect(notOurs(at(new TypeError('x'), 'src/world/world.ts'))).toMatch(/^the adapter replaced Object\.freeze in the process it shares with tidemark, which then failed \(x\)/);
    } finally {
      Object.freeze = freeze;
    }
    expect(replacedGlobals()).toEqual([]);
  });
});
