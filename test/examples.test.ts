import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_SCENARIOS } from '../scenarios/named.js';
import { EXIT } from '../src/cli.js';
import { readRegressions } from '../src/run/regressions.js';
import { argvOf, cli } from './support.js';
import { registerConformance } from '../src/vitest.js';
import blackbox from '../examples/blackbox-consumer.js';
import buggy from '../examples/ledger-consumer-buggy.js';
import ledger from '../examples/ledger-consumer.js';

/**
 * docs/adapters.md promises a newcomer that its example adapter passes, that a small bug in
 * it is caught with a replayable failure, and that the regression file, JUnit output and
 * vitest helper work as described. These tests hold the guide to that, through the CLI
 * exactly as a user runs it (in-process), never writing into the repository.
 */
const tmp = mkdtempSync(join(tmpdir(), 'tidemark-examples-'));

interface RegressionJson {
  version: number;
  entries: { adapter: string; kind: string; scenario?: string; seed?: number; path?: string; anomaly: string }[];
}

const readJson = (path: string): RegressionJson => JSON.parse(readFileSync(path, 'utf8')) as RegressionJson;

describe('docs/adapters.md', () => {
  it("the guide's adapter is examples/ledger-consumer.ts, character for character", () => {
    const guide = readFileSync('docs/adapters.md', 'utf8');
    const marker = '<!-- example: examples/ledger-consumer.ts -->';
    expect(guide.split(marker)).toHaveLength(2);
    const block = guide.split(marker)[1]!.match(/^\s*```ts\n([\s\S]*?)\n```/)?.[1];
    expect(block).toBeDefined();
    expect(`${block}\n`).toBe(readFileSync('examples/ledger-consumer.ts', 'utf8'));
  });

  it('the buggy example is the guide adapter plus one commented change', () => {
    const good = readFileSync('examples/ledger-consumer.ts', 'utf8').split('\n');
    const bad = readFileSync('examples/ledger-consumer-buggy.ts', 'utf8').split('\n');
    const added = bad.filter((l) => !good.includes(l));
    expect(added.some((l) => l.includes('BUG'))).toBe(true);
    // Header comment, the change with its comment, and the name: nothing else differs.
    expect(added.length).toBeLessThanOrEqual(6);
    expect([ledger.name, buggy.name, blackbox.name]).toEqual(['ledger', 'ledger-buggy', 'ledger-blackbox']);
  });
});

describe('tidemark check on the examples', () => {
  it('passes the whitebox example from the guide, and records nothing', async () => {
    const regressions = join(tmp, 'ledger.json');
    const r = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--runs', '300', '--seed', '7', '--regressions', regressions);
    expect(r.err).toBe('');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('scenarios: 17 of 17 passed');
    expect(r.out).toContain('generated worlds: pass after 300 worlds');
    expect(r.out).toContain('check duplicate-effect: untested, the consumer claims at-least-once delivery');
    expect(r.out).toMatch(/verdict: pass$/);
    expect(existsSync(regressions)).toBe(false);
  });

  it('passes the blackbox example on every named scenario', async () => {
    const regressions = join(tmp, 'blackbox-scenarios.json');
    for (const scenario of ALL_SCENARIOS) {
      const r = await cli('check', '--adapter', 'examples/blackbox-consumer.ts', '--scenario', scenario.name, '--regressions', regressions);
      // Never a failure; a scenario whose adversity cannot land on a consumer that books its
      // effects in its own store tests nothing, and a run of it alone is no pass either.
      if (r.out.includes(`untested ${scenario.name}`)) {
        expect(r.code, r.out).toBe(EXIT.unknown);
        expect(r.out).toContain('not a pass: nothing was exercised');
      } else expect(r.code, r.out).toBe(EXIT.pass);
    }
    expect(existsSync(regressions)).toBe(false);
  });

  it('passes the blackbox example on generated worlds', async () => {
    const r = await cli('check', '--adapter', 'examples/blackbox-consumer.ts', '--runs', '300', '--seed', '7', '--regressions', join(tmp, 'blackbox.json'));
    expect(r.err).toBe('');
    // Its effects are booked in its own store, between world calls: faults planned on effect
    // and commit calls have nothing to land on, so those scenarios are untested, not passed.
    expect(r.out).toMatch(/scenarios: \d+ of 17 passed, \d+ untested \(their adversity never fired\)/);
    expect(r.out).toMatch(/^ {2}untested failed-event-holds-watermark \(R6 R7 R8\): the error planned at effect #2 never fired: no effect call was made/m);
    expect(r.out).toMatch(/verdict: pass$/);
    expect(r.code).toBe(EXIT.pass);
  });
});

describe('a bug in the example is caught, replayed, recorded and reported', () => {
  const regressions = join(tmp, 'buggy.json');
  const junit = join(tmp, 'buggy.xml');
  const json = join(tmp, 'buggy.json.out');
  const picture = join(tmp, 'buggy.html');
  const adapter = 'examples/ledger-consumer-buggy.ts';

  it('check fails with exit 1 and a replay command that reproduces the same history', async () => {
    const r = await cli('check', '--adapter', adapter, '--runs', '300', '--seed', '7', '--regressions', regressions, '--junit', junit, '--json', json, '--timeline', picture);
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  ledger-buggy: premature-watermark');
    expect(r.out).toContain('If this fails, check R7');
    // Every failure printed in full ends with its history's hash and the command replaying it.
    const reports = [...r.out.matchAll(/History sha256 (\w+)\n\s*Replay: (npx tidemark replay --adapter examples\/ledger-consumer-buggy\.ts .*)$/gm)];
    expect(reports.length).toBeGreaterThan(0);
    for (const [, hash, replay] of reports) {
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      const again = await cli(...argvOf(replay!));
      expect(again.code, replay).toBe(EXIT.fail);
      expect(again.out).toContain(`History sha256 ${hash}`);
    }
  });

  it('writes JUnit XML with the failure and the checks that do not apply as skipped', () => {
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuites');
    expect(xml).toMatch(/<testcase classname="tidemark\.scenarios" name="R6 R7 R8 failed-event-holds-watermark" time="\d+\.\d{3}">\s*<failure message="premature-watermark/);
    expect(xml).toMatch(/<testcase classname="tidemark\.checks" name="check duplicate-effect" time="0\.000">\s*<skipped message="untested: the consumer claims at-least-once/);
  });

  it('writes the JSON summary and the timeline picture', () => {
    const summary = JSON.parse(readFileSync(json, 'utf8')) as { verdict: string; adapter: string };
    expect(summary).toMatchObject({ verdict: 'fail', adapter });
    expect(readFileSync(picture, 'utf8')).toContain('<svg');
  });

  it('records the failure in the regression file and replays it first on the next check', async () => {
    const file = readJson(regressions);
    expect(file.entries.length).toBeGreaterThan(0);
    // The file keeps the path relative to itself; read back, it is the path as typed here.
    expect(readRegressions(regressions).entries.every((e) => e.adapter === adapter && e.anomaly === 'premature-watermark')).toBe(true);
    const r = await cli('check', '--adapter', adapter, '--scenario', 'snapshot-proves-hole', '--regressions', regressions);
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain(`regressions (${regressions}): ${file.entries.length} replayed first, ${file.entries.length} still failing`);
    // Nothing new was found, so the file is unchanged.
    expect(readJson(regressions).entries).toEqual(file.entries);
  });

  it('regressions --prune keeps an entry while it fails and removes it once it passes', async () => {
    const before = readJson(regressions).entries;
    const kept = await cli('regressions', '--file', regressions, '--prune', '--adapter', adapter);
    expect(kept.code).toBe(EXIT.pass);
    expect(kept.out).toContain(`pruned 0 passing entries; ${before.length} kept`);
    expect(readJson(regressions).entries).toEqual(before);

    // The fix: the same world replayed against the correct adapter passes, so it is pruned.
    const fixed = { ...readJson(regressions) };
    // Edited as the file keeps paths: relative to the file itself.
    const correct = relative(realpathSync(dirname(regressions)), resolve('examples/ledger-consumer.ts'));
    fixed.entries = before.map((e, i) => (i === 0 ? { ...e, adapter: correct } : e));
    writeFileSync(regressions, JSON.stringify(fixed, null, 2));
    const pruned = await cli('regressions', '--file', regressions, '--prune', '--adapter', 'examples/ledger-consumer.ts');
    expect(pruned.code).toBe(EXIT.pass);
    expect(pruned.out).toContain('prune examples/ledger-consumer.ts');
    expect(pruned.out).toContain(`pruned 1 passing entry; ${before.length - 1} kept`);
    expect(readJson(regressions).entries).toEqual(before.slice(1));
  });
});

describe('registerConformance on the guide adapter', () => {
  registerConformance(ledger, { runs: 50, seed: 7, replayFlag: '--adapter examples/ledger-consumer.ts' });
});
