import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { conformanceCases } from '../src/run/conformance-tests.js';
import { cli } from './support.js';

/**
 * Ways a pass could be had unearned, or a data file made to run code, found by attacking the
 * shard files, the regression file and the output paths as a careless CI or a hostile user
 * would. Each is refused, or judged for what it is.
 */
const dir = mkdtempSync(join(tmpdir(), 'tidemark-trust-'));
const file = (name: string): string => join(dir, name);
const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

describe('merge passes nothing that was not exercised', () => {
  it('shards in which a time limit ran no world merge to unknown, as the unsharded run is, not to a pass', async () => {
    for (const i of [1, 2]) {
      const r = await cli('check', '--consumer', 'early-caught-up', '--seed', '1', '--runs', '200', '--time-limit', '0.001', '--shard', `${i}/2`, '--json', file(`none-${i}.json`));
      // A fast machine may fit a world into the limit; then there is a verdict to merge, and this case is moot.
      if (!r.out.includes('0 of 200 generated worlds ran')) return;
    }
    const merged = await cli('merge', file('none-1.json'), file('none-2.json'));
    expect(merged.code).toBe(EXIT.unknown);
    expect(merged.out).toContain('not a pass: no generated world ran within the time limit in any shard');
    expect(merged.out).not.toContain('verdict: pass');
  });

  it("a time limit that cut one shard before the run's first world merges to unknown, whatever the other shards ran past it", async () => {
    const argv = ['check', '--consumer', 'reference', '--seed', '1', '--runs', '40', '--time-limit', '600', '--regressions', file('cut-r.json')];
    for (const i of [1, 2]) expect((await cli(...argv, '--shard', `${i}/2`, '--json', file(`cut-${i}.json`))).code).toBe(EXIT.pass);
    // Shard 1 as a slow machine leaves it: its limit ended the search before its first world,
    // world 0, which is the run's first. Shard 2 ran all of its share, worlds 1, 3, 5, ...
    const cut = readJson(file('cut-1.json'));
    cut.worlds = { ...cut.worlds, runs: 0, interrupted: true };
    cut.shard = { ...cut.shard, skipped: 0, evidence: {} };
    writeFileSync(file('cut-1-slow.json'), JSON.stringify(cut));
    const merged = await cli('merge', file('cut-1-slow.json'), file('cut-2.json'));
    expect(merged.code, merged.out + merged.err).toBe(EXIT.unknown);
    expect(merged.out).toContain("not a pass: no generated world ran within the time limit: a shard left the run's first world unrun");
    expect(merged.out).not.toContain('verdict: pass');
  });

  it('shards that replayed their shares of different regression lists, of one length, are refused: a failing entry could be left to no shard', async () => {
    const world = (path: string) => ({ adapter: 'builtin:cursor-value-exclusive', kind: 'world', seed: 1, path, anomaly: 'omission' });
    // The same two entries, in two orders: shard 1 replays the first of one, shard 2 the second of the other.
    writeFileSync(file('order-1.json'), JSON.stringify({ version: 1, entries: [world('0'), world('30')] }));
    writeFileSync(file('order-2.json'), JSON.stringify({ version: 1, entries: [world('30'), world('0')] }));
    const argv = ['check', '--consumer', 'cursor-value-exclusive', '--runs', '20', '--seed', '1'];
    for (const i of [1, 2]) await cli(...argv, '--shard', `${i}/2`, '--json', file(`order-shard-${i}.json`), '--regressions', file(`order-${i}.json`));
    const merged = await cli('merge', file('order-shard-1.json'), file('order-shard-2.json'));
    expect(merged.code, merged.out + merged.err).toBe(EXIT.usage);
    expect(merged.err).toContain('not the same entries in the same order');
    expect(merged.out).not.toContain('verdict: pass');
    // One list, and a shard's file edited to show another entry than the one it replayed.
    for (const i of [1, 2]) await cli(...argv, '--shard', `${i}/2`, '--json', file(`same-shard-${i}.json`), '--regressions', file('order-1.json'));
    const edited = readJson(file('same-shard-1.json'));
    edited.regressions[0].path = '5';
    writeFileSync(file('same-shard-1-edited.json'), JSON.stringify(edited));
    const honest = await cli('merge', file('same-shard-1.json'), file('same-shard-2.json'));
    expect(honest.code, honest.err).toBe(EXIT.fail);
    const forged = await cli('merge', file('same-shard-1-edited.json'), file('same-shard-2.json'));
    expect(forged.code, forged.out + forged.err).toBe(EXIT.usage);
    expect(forged.err).toContain("the shards' regressions, put back together, are not the entries their files say they replayed");
  });

  it('a mutants shard that claims a kill its counterexample does not show, or names no mutant, is refused', async () => {
    // One world each at seed 3: token-as-watermark is killed in it, narrow-replay-window is not.
    const argv = ['--only', 'token-as-watermark,narrow-replay-window', '--runs', '1', '--seed', '3', '--jobs', '1'];
    for (const i of [1, 2]) await cli('mutants', ...argv, '--shard', `${i}/2`, '--json', file(`m-${i}.json`));
    const rows = [...readJson(file('m-1.json')).rows, ...readJson(file('m-2.json')).rows];
    const killed = rows.find((r: any) => r.killed);
    const missed = rows.find((r: any) => !r.killed);
    expect(killed?.mutant).toBe('token-as-watermark');
    expect(missed?.mutant).toBe('narrow-replay-window');
    const honest = await cli('merge', file('m-1.json'), file('m-2.json'));
    expect(honest.code).toBe(EXIT.fail);
    // Claim the missed one killed, with the other's counterexample as its evidence.
    const which = readJson(file('m-1.json')).rows.some((r: any) => r.mutant === missed.mutant) ? 1 : 2;
    const forged = readJson(file(`m-${which}.json`));
    Object.assign(forged.rows.find((r: any) => r.mutant === missed.mutant), { killed: true, found: missed.expected[0], replay: killed.replay });
    writeFileSync(file('m-forged.json'), JSON.stringify(forged));
    const r = await cli('merge', file('m-forged.json'), file(`m-${3 - which}.json`));
    expect(r.code, r.err).toBe(EXIT.usage);
    expect(r.err).toMatch(/rows\[0\]\.killed is true, but its counterexample, replayed, shows|cannot be replayed/);
    expect(r.out).not.toContain('mutants killed, reference pass');
    const empty = { ...readJson(file('m-1.json')), mutants: [], rows: [] };
    writeFileSync(file('m-empty.json'), JSON.stringify(empty));
    const none = await cli('merge', file('m-empty.json'), file('m-2.json'));
    expect(none.code).toBe(EXIT.usage);
  });
});

describe('a consumer seen only to fail visibly passes nothing', () => {
  // It claims only sources without a contract, where a correct run may end failing visibly,
  // and fails before it fetches anything: liveness is all a world judges of it.
  const FAILS = 'test/fixtures/fails-visibly-only.ts';
  const reason = 'liveness was the only check exercised: in no world did the consumer make an effect, commit a watermark or mark an event done';

  it('check, and the merge of its shards, say unknown with the reason; the vitest generated-worlds case fails with it, never leaving the suite green', async () => {
    const r = await cli('check', '--adapter', FAILS, '--runs', '60', '--seed', '1');
    expect(r.code, r.out).toBe(EXIT.unknown);
    expect(r.out).toContain(`not a pass: ${reason}`);
    expect(r.out).not.toContain('verdict: pass');
    for (const i of [1, 2]) {
      const shard = await cli('check', '--adapter', FAILS, '--runs', '60', '--seed', '1', '--shard', `${i}/2`, '--json', file(`fails-${i}.json`));
      expect(shard.code, shard.out).toBe(EXIT.unknown);
    }
    const merged = await cli('merge', file('fails-1.json'), file('fails-2.json'));
    expect(merged.code, merged.out).toBe(EXIT.unknown);
    expect(merged.out).toContain(`not a pass: ${reason}`);
    const { default: consumer } = await import('./fixtures/fails-visibly-only.js');
    const worlds = conformanceCases(consumer, { runs: 60, seed: 1 }).find((c) => c.name === 'R1-R10 generated worlds')!;
    expect(await worlds.run()).toEqual({ failure: expect.stringContaining(`not a pass: ${reason}`) });
  });

  it('replay of one of its worlds, and judge of that history, say unknown (exit 2) with the reason, never PASS', async () => {
    const one = 'liveness was the only check exercised: the consumer made no effect, committed no watermark and marked no event done';
    const json = file('fails-world.json');
    const r = await cli('replay', '--adapter', FAILS, '--seed', '1', '--path', '0', '--json', json);
    expect(r.code, r.out).toBe(EXIT.unknown);
    expect(r.out).toContain(`UNTESTED  fails-visibly-only: the world at seed 1, path 0 broke no rule, but ${one}`);
    expect(r.out).not.toContain('PASS');
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ verdict: 'unknown', reason: expect.stringContaining(one) });
    const j = await cli('judge', json);
    expect(j.code, j.out).toBe(EXIT.unknown);
    expect(j.out).toContain(`broke no rule, but ${one}`);
    expect(j.out.split('\n').at(-1)).toBe('verdict: unknown');
  });
});

describe('the regression file is data', () => {
  it('replay --last or replay ID of an entry that names a command runs nothing, and prints the command', async () => {
    const pwned = file('PWNED');
    const reg = file('reg.json');
    writeFileSync(reg, JSON.stringify({ version: 1, entries: [{ adapter: `command:touch ${pwned}; exit 1`, kind: 'scenario', scenario: 'stale-token', anomaly: 'omission' }] }));
    const r = await cli('replay', '--last', '--regressions', reg);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('names a command, which a replay by ID never runs');
    expect(r.err).toContain(`npx tidemark replay --command 'touch ${pwned}; exit 1' --scenario stale-token`);
    expect(existsSync(pwned)).toBe(false);
  });

  it('an entry whose world size is beyond any --events is refused when the file is read (exit 3), never a harness error', async () => {
    const reg = file('huge.json');
    writeFileSync(reg, JSON.stringify({ version: 1, entries: [{ adapter: 'examples/ledger-consumer.ts', kind: 'world', seed: 1, path: '0', events: 999999999, anomaly: 'omission' }] }));
    const r = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--scenario', 'stale-token', '--regressions', reg);
    expect(r.code, r.err).toBe(EXIT.usage);
    expect(r.err).toContain("entries[0] must be");
    expect(r.err).toContain('events (a world\'s size, 1 to 100000)');
  });

  it('an entry whose path starts beyond any run is refused when the file is read, not walked for hours', async () => {
    const reg = file('far.json');
    writeFileSync(reg, JSON.stringify({ version: 1, entries: [{ adapter: 'examples/ledger-consumer.ts', kind: 'world', seed: 1, path: '999999999', anomaly: 'omission' }] }));
    const r = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--scenario', 'stale-token', '--regressions', reg);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('entries[0] must be');
  });
});

describe('odd paths and options', () => {
  it('a loop of symbolic links as the regression file is a usage error before the run', async () => {
    execFileSync('ln', ['-s', file('loop-b'), file('loop-a')]);
    execFileSync('ln', ['-s', file('loop-a'), file('loop-b')]);
    const r = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--regressions', file('loop-a'));
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('is a loop of symbolic links');
  });

  it('--option keys are keys, whatever their name: __proto__ and toString too', async () => {
    const r = await cli('check', '--adapter', 'examples/ledger-variants.ts', '--option', '__proto__=1', '--option', 'toString=2', '--scenario', 'stale-token');
    expect(r.code).toBe(EXIT.usage);
    // The adapter's factory saw both keys and refused them as unknown: they were not lost or merged.
    expect(r.err).toContain('unknown option __proto__, toString');
  });
});
