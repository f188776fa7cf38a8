import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli.js';

const regressions = join(mkdtempSync(join(tmpdir(), 'tidemark-cli-')), 'regressions.json');

async function cli(...argv: string[]) {
  // Never write the regression file into the repository.
  if (argv[0] === 'check') argv = [...argv, '--regressions', regressions];
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Splits a printed replay command into argv, dropping `npx tidemark`. */
function argvOf(command: string): string[] {
  return (command.match(/"[^"]*"|\S+/g) ?? []).slice(2).map((a) => a.replace(/^"|"$/g, ''));
}

describe('tidemark CLI', () => {
  it('check passes the reference consumer, printing the seed and the number of worlds', async () => {
    const r = await cli('check', '--runs', '100', '--seed', '3');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('seed 3, 100 generated worlds');
    expect(r.out).toContain('generated worlds: pass after 100 worlds');
    expect(r.out).toMatch(/verdict: pass$/);
  });

  it('check fails a mutant with exit 1, and its replay command reproduces the same history', async () => {
    const r = await cli('check', '--consumer', 'max-position-fetched', '--runs', '300', '--seed', '5');
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain('premature-watermark (R6 R7 R8 R9 R10)');
    expect(r.out).toContain('If this fails, check R6');
    const replays = [...r.out.matchAll(/Replay: (npx tidemark replay .*--path.*)$/gm)].map((m) => m[1]!);
    expect(replays).toHaveLength(1);
    const hash = r.out.match(/History sha256 (\w+)\n\s*Replay: npx tidemark replay --consumer max-position-fetched --seed/)?.[1];
    const again = await cli(...argvOf(replays[0]!));
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(`History sha256 ${hash}`);
  });

  it('replay runs a named scenario', async () => {
    const r = await cli('replay', '--consumer', 'reference', '--scenario', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('emit effect e42 -> ERROR unavailable');
  });

  it('lists scenarios and consumers', async () => {
    expect((await cli('scenarios')).out).toContain('failed-event-holds-watermark');
    const consumers = await cli('consumers');
    expect(consumers.out).toContain('token-as-watermark');
    expect(consumers.out).toContain('mutant, breaks R8');
  });

  it.each([
    [['frobnicate'], "unknown command 'frobnicate'"],
    [['check', '--runs', '0'], '--runs must be an integer of at least 1'],
    [['check', '--runs', 'many'], "got 'many'"],
    [['check', '--consumer', 'nope'], "no consumer named 'nope'"],
    [['check', '--bogus'], "Unknown option '--bogus'"],
    [['replay', '--consumer', 'reference'], 'replay needs --seed and --path'],
    [['replay', '--seed', '1', '--path', 'x:y'], '--path must look like'],
    [['replay', '--scenario', 'nope'], "no scenario named 'nope'"],
  ])('usage error %j exits 3 with a clear message', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(message);
  });

  it('prints help for the tool and for each command', async () => {
    expect((await cli('--help')).code).toBe(EXIT.pass);
    expect((await cli()).code).toBe(EXIT.usage);
    for (const c of ['check', 'replay', 'scenarios', 'consumers']) {
      const r = await cli(c, '--help');
      expect(r.code).toBe(EXIT.pass);
      expect(r.out).toContain(`tidemark ${c}`);
    }
  });
});
