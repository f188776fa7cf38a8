import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { argvOf, cli } from './support.js';

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
    [['check', '--searches', '0'], '--searches must be an integer of at least 1'],
    [['mutants', '--jobs', '0'], '--jobs must be an integer of at least 1'],
    [['report', '--jobs', 'two', '--out', '/dev/null'], "--jobs must be an integer of at least 1, got 'two'"],
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

  it('mutants prints the kill matrix, with the reference under the same seed, and writes JSON', async () => {
    const json = join(tmpdir(), `tidemark-kill-${process.pid}.json`);
    const r = await cli('mutants', '--only', 'token-as-watermark,checkpoint-before-flush', '--runs', '200', '--seed', '2', '--json', json);
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toMatch(/^token-as-watermark +R8 +token-as-watermark +token-as-watermark +yes /m);
    expect(r.out).toMatch(/^reference +- +pass +pass /m);
    expect(r.out).toContain('verdict: 2 of 2 mutants killed, reference pass');
    const matrix = JSON.parse(readFileSync(json, 'utf8'));
    expect(matrix.rows.map((x: { mutant: string }) => x.mutant)).toEqual(['token-as-watermark', 'checkpoint-before-flush']);
    expect((await cli('mutants', '--only', 'nope')).err).toContain("no mutant named 'nope'");
  });

  it('report writes the Markdown report, and re-renders it from its own searches', async () => {
    const out = join(tmpdir(), `tidemark-report-${process.pid}.md`);
    const r = await cli('report', '--seeds', '1', '--runs', '100', '--out', out);
    expect(r.code).toBe(EXIT.pass);
    const first = readFileSync(out, 'utf8');
    expect(first).toContain('# tidemark report');
    expect(first).toContain('## Kill matrix (seed 20261129)');
    const again = await cli('report', '--seeds', '1', '--runs', '100', '--out', out, '--reuse-searches');
    expect(again.code).toBe(EXIT.pass);
    expect(readFileSync(out, 'utf8').split('<!-- timings')[0]).toBe(first.split('<!-- timings')[0]);
  }, 300_000);

  it('a broken regression file is a clear usage error', async () => {
    const bad = join(tmpdir(), `tidemark-bad-${process.pid}.json`);
    writeFileSync(bad, '{ not json');
    expect((await cli('regressions', '--file', bad)).err).toContain('is not valid JSON');
    writeFileSync(bad, JSON.stringify({ version: 9, entries: [] }));
    expect((await cli('regressions', '--file', bad)).err).toContain('has version 9; this tidemark reads version 1');
    writeFileSync(bad, JSON.stringify({ version: 1, entries: [{ adapter: 'x', kind: 'world', seed: 1, path: 'a' }] }));
    const r = await cli('regressions', '--file', bad);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('entries[0] must be');
  });

  it('lists the regression file', async () => {
    const file = join(tmpdir(), `tidemark-list-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ version: 1, entries: [{ adapter: 'builtin:reference', kind: 'scenario', scenario: 'stale-token', anomaly: 'omission' }] }));
    const r = await cli('regressions', '--file', file);
    expect(r.out).toContain('builtin:reference: scenario stale-token (omission)');
    const pruned = await cli('regressions', '--file', file, '--prune');
    expect(pruned.out).toContain('pruned 1 passing entry; 0 kept');
  });
});

