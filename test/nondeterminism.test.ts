/**
 * Replay trusts determinism, so it checks it: a consumer that reads Math.random replays to
 * another history, and that is reported as unknown (exit 2), never as a pass; a regression
 * entry of such a consumer survives `regressions --prune`.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HISTORY_VERSION } from '../model/history.js';
import { EXIT } from '../src/cli.js';
import { findMutant } from '../src/selftest/mutants.js';
import { firstDifference, replayWorld } from '../src/run/replay.js';
import { WORLDS_VERSION } from '../scenarios/arbitraries.js';
import { findScenario } from '../scenarios/named.js';
import { cli } from './support.js';

const ADAPTER = 'test/fixtures/random-consumer.ts';

describe('a consumer that is not deterministic', () => {
  it('replays to unknown, exit 2, naming the first step where the two histories part', async () => {
    const r = await cli('replay', '--adapter', ADAPTER, '--scenario', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.unknown);
    expect(r.out).toMatch(/UNKNOWN {2}random-loads: the run could not be judged: the consumer is not deterministic: 3 replays of the same world gave different histories \(from step \d+: .*probe-0\.\d+/);
  });

  it('keeps its regression entries: they are unknown, and --prune never deletes them', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tidemark-nondet-')), 'regressions.json');
    const first = await cli('check', '--adapter', ADAPTER, '--runs', '30', '--seed', '1', '--searches', '1', '--regressions', file);
    expect(first.code).toBe(EXIT.fail);
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as { entries: { hash?: string }[] };
    expect(recorded.entries.length).toBeGreaterThan(1);
    expect(recorded.entries.every((e) => typeof e.hash === 'string' && e.hash.length === 64)).toBe(true);
    const pruned = await cli('regressions', '--file', file, '--prune', '--adapter', ADAPTER);
    expect(pruned.code).toBe(EXIT.pass);
    expect(pruned.out).toContain(`pruned 0 passing entries; ${recorded.entries.length} kept`);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { entries: unknown[] }).entries).toHaveLength(recorded.entries.length);
    const again = await cli('check', '--adapter', ADAPTER, '--scenario', 'snapshot-proves-hole', '--regressions', file);
    expect(again.out).toMatch(/unknown +scenario failed-event-holds-watermark: the consumer is not deterministic/);
  });

  it('a deterministic consumer replays to the same history, and a fixed one is noted as changed', async () => {
    const consumer = findMutant('skips-failed-event')!.consumer;
    const replayed = await replayWorld(consumer, { plan: findScenario('failed-event-holds-watermark')!.plan });
    expect(replayed?.nondeterministic).toBeNull();
    expect(replayed?.execution.result.verdict.status).toBe('fail');
    const other = await replayWorld(consumer, { plan: findScenario('repeated-page')!.plan });
    expect(firstDifference(replayed!.execution.history, other!.execution.history)).toMatch(/^their headers differ|^from step \d+/);
  });
});

describe('a consumer that agrees with itself but not with its recorded failure', () => {
  const COIN = 'test/fixtures/coin-consumer.ts';
  const scratch = mkdtempSync(join(tmpdir(), 'tidemark-coin-'));

  /** Checks until the coin makes it fail (each check fails with probability at least 1/2). */
  async function recordedFailure(file: string): Promise<{ hash: string; digest: string }> {
    for (let i = 0; i < 40 && !existsSync(file); i++) await cli('check', '--adapter', COIN, '--scenario', 'failed-event-holds-watermark', '--regressions', file);
    const entries = (JSON.parse(readFileSync(file, 'utf8')) as { entries: { hash: string; digest: string }[] }).entries;
    expect(entries).toHaveLength(1);
    return entries[0]!;
  }

  it('keeps its failures through --prune however its replays agree: a changed history of unchanged code is unknown', async () => {
    const file = join(scratch, 'prune.json');
    const entry = await recordedFailure(file);
    expect(entry.digest).toMatch(/^[0-9a-f]{64}$/);
    // Three prunes, each replaying three times: a pass that is not the recorded world never removes the entry.
    for (let i = 0; i < 3; i++) {
      const pruned = await cli('regressions', '--file', file, '--prune', '--adapter', COIN);
      expect(pruned.code).toBe(EXIT.pass);
      expect(pruned.out).toContain('pruned 0 passing entries; 1 kept');
    }
  });

  it('replay of a recorded scenario is never PASS: it must give the recorded history', async () => {
    const file = join(scratch, 'replay.json');
    await recordedFailure(file);
    for (let i = 0; i < 4; i++) {
      const r = await cli('replay', '--adapter', COIN, '--scenario', 'failed-event-holds-watermark', '--regressions', file);
      expect(r.out).not.toMatch(/^PASS/m);
      expect(r.code === EXIT.fail || r.code === EXIT.unknown, r.out).toBe(true);
      if (r.code === EXIT.unknown) expect(r.out).toContain('the consumer is not deterministic');
    }
  });
});

describe('an entry recorded in an older history format', () => {
  it('is replayed from its seed and path and judged, but never held to its hash: no false verdict of nondeterminism', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-format-'));
    const file = join(dir, 'regressions.json');
    const buggy = 'examples/ledger-consumer-buggy.ts';
    const recorded = await cli('check', '--adapter', buggy, '--scenario', 'failed-event-holds-watermark', '--regressions', file);
    expect(recorded.code).toBe(EXIT.fail);
    const json = JSON.parse(readFileSync(file, 'utf8')) as { entries: { hash: string; format?: number }[] };
    expect(json.entries[0]!.format).toBe(HISTORY_VERSION);
    // The hash of the same world as an older format recorded it, whose header lacked the plan.
    const older = { ...json, entries: json.entries.map(({ format: _format, ...e }) => ({ ...e, hash: '0'.repeat(64) })) };
    writeFileSync(file, JSON.stringify(older));
    const replayed = await cli('replay', '--adapter', buggy, '--scenario', 'failed-event-holds-watermark', '--regressions', file);
    expect(replayed.code, replayed.out).toBe(EXIT.fail);
    expect(replayed.out).not.toContain('not deterministic');
    // The same hash in this format is held to: unchanged code that replays to another history is not deterministic.
    writeFileSync(file, JSON.stringify({ ...older, entries: older.entries.map((e) => ({ ...e, format: HISTORY_VERSION })) }));
    const held = await cli('replay', '--adapter', buggy, '--scenario', 'failed-event-holds-watermark', '--regressions', file);
    expect(held.code).toBe(EXIT.unknown);
    expect(held.out).toContain('not deterministic');
  });
});

describe('a world entry recorded by a tidemark that drew worlds another way', () => {
  it('is replayed from its seed and path and judged, never held to its hash: a changed generator is no nondeterminism', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-worlds-'));
    const file = join(dir, 'regressions.json');
    const buggy = 'examples/ledger-consumer-buggy.ts';
    const found = await cli('check', '--adapter', buggy, '--runs', '100', '--seed', '21', '--regressions', file);
    expect(found.code).toBe(EXIT.fail);
    type Entry = { kind: string; seed?: number; path?: string; hash: string; worlds?: number };
    const json = JSON.parse(readFileSync(file, 'utf8')) as { entries: Entry[] };
    const world = json.entries.find((e) => e.kind === 'world') as Entry;
    expect(world.worlds).toBe(WORLDS_VERSION);
    // As an earlier tidemark recorded it: no worlds field, and the hash of the world its seed and path named then.
    const { worlds: _worlds, ...earlier } = world;
    writeFileSync(file, JSON.stringify({ ...json, entries: [{ ...earlier, hash: '0'.repeat(64) }] }));
    const replayed = await cli('replay', '--adapter', buggy, '--seed', String(world.seed), '--path', world.path as string, '--regressions', file);
    expect(replayed.code, replayed.out).toBe(EXIT.fail);
    expect(replayed.out).not.toContain('not deterministic');
    // Under this tidemark's worlds the same hash is held to.
    writeFileSync(file, JSON.stringify({ ...json, entries: [{ ...world, hash: '0'.repeat(64) }] }));
    const held = await cli('replay', '--adapter', buggy, '--seed', String(world.seed), '--path', world.path as string, '--regressions', file);
    expect(held.code).toBe(EXIT.unknown);
    expect(held.out).toContain('not deterministic');
  });
});

describe('the regression file is data: nothing it names is run', () => {
  it('--prune needs a target, replays only its entries, and leaves a foreign command entry untouched and unrun', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-foreign-'));
    const pwned = join(dir, 'pwned');
    const file = join(dir, 'regressions.json');
    const foreign = { adapter: `command:touch ${pwned}`, kind: 'scenario', scenario: 'stale-token', anomaly: 'omission' };
    const mine = { adapter: 'examples/ledger-consumer.ts', kind: 'scenario', scenario: 'stale-token', anomaly: 'omission' };
    writeFileSync(file, JSON.stringify({ version: 1, entries: [foreign, mine] }));
    const bare = await cli('regressions', '--file', file, '--prune');
    expect(bare.code).toBe(EXIT.usage);
    expect(bare.err).toContain('--prune replays entries, which runs their consumer: name it as check takes it');
    expect(bare.err).toContain(JSON.stringify(foreign.adapter));
    const pruned = await cli('regressions', '--file', file, '--prune', '--adapter', 'examples/ledger-consumer.ts');
    expect(pruned.code).toBe(EXIT.pass);
    expect(pruned.out).toContain('prune examples/ledger-consumer.ts: scenario stale-token');
    expect(pruned.out).toContain('1 entry of other targets left as they are');
    expect(existsSync(pwned)).toBe(false);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { entries: unknown[] }).entries).toEqual([foreign]);
  });
});

describe('where two histories part', () => {
  it('names the first differing step and shows the place within it where they differ', async () => {
    const plan = findScenario('failed-event-holds-watermark')!.plan;
    const consumer = findMutant('skips-failed-event')!.consumer;
    const one = (await replayWorld(consumer, { plan }))!.execution.history;
    // The same history with one request's limit changed far into the step's JSON.
    const other = { ...one, steps: one.steps.map((s) => (s.kind === 'call' && s.call.kind === 'fetch' && s.seq === one.steps.find((x) => x.kind === 'call' && x.call.kind === 'fetch')!.seq ? { ...s, call: { ...s.call, request: { ...s.call.request, limit: 99 } } } : s)) };
    const said = firstDifference(one, other);
    expect(said).toMatch(/^from step \d+: /);
    expect(said).toContain('"limit":3');
    expect(said).toContain('"limit":99');
  });
});

describe('a pass is only for what was exercised', () => {
  it('a check whose only scenario never fired its adversity is no pass: unknown, exit 2, with the reason', async () => {
    const r = await cli('check', '--consumer', 'reference-exactly-once', '--scenario', 'crash-between-effect-and-completion');
    expect(r.code).toBe(EXIT.unknown);
    expect(r.out).toContain('not a pass: nothing was exercised');
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it('replay of that scenario says UNTESTED, not PASS, and exits 2', async () => {
    const r = await cli('replay', '--consumer', 'reference-exactly-once', '--scenario', 'crash-between-effect-and-completion');
    expect(r.code).toBe(EXIT.unknown);
    expect(r.out).toMatch(/^UNTESTED {2}reference-exactly-once: scenario crash-between-effect-and-completion broke no rule, but the adversity it exists for never fired: the crash-after planned at emit #1 never fired/);
  });
});
