import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { History } from '../model/history.js';
import { findScenario } from '../scenarios/named.js';
import { EXIT } from '../src/cli.js';
import { execute } from '../src/run/execute.js';
import { killAllConsumers, liveResources, processConsumer, processStats, type ProcessOptions } from '../src/adapter/process/bridge.js';
import { ConsumerProcess, running } from '../src/adapter/process/consumer-process.js';
import { alive, cli, pidsGone } from './support.js';

/**
 * The warm pool and session crashes are outside the simulation: the histories they give
 * must be those of the unpooled bridge, byte for byte, and no process they start may be
 * left behind, checked by pid. And what a session crash cannot see (state kept outside the
 * incarnation) must be caught by the real-kill replay of the failure.
 */
const FIXTURES = 'test/fixtures/process';
const scratch = mkdtempSync(join(tmpdir(), 'tidemark-pool-'));
let files = 0;
const pidFile = (): string => join(scratch, `pids-${files++}`);
const pidsIn = (file: string): number[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : []);

const incarnations = (h: History): number => h.steps.filter((s) => s.kind === 'life' && s.event.kind === 'start').length;

/** Crashes before and between calls, two competing workers, a rebind: each restarts processes differently. */
const SCENARIOS = ['crash-before-first-effect', 'crash-between-effect-and-completion', 'stale-generation-cannot-advance', 'binding-change-same-store'];

/** The scenarios through the node ledger, with these options; a first world (the one `sampled` always kills for real) is run and set aside. */
async function run(options: ProcessOptions): Promise<{ hashes: string[]; lives: number; spawned: number; pids: number[]; stats: ReturnType<typeof processStats> }> {
  const file = pidFile();
  const consumer = await processConsumer(`node ${FIXTURES}/pid-ledger.mjs ${file}`, options);
  await execute(findScenario('failed-event-holds-watermark')!.plan, consumer);
  const before = processStats(consumer)!.spawned;
  const hashes: string[] = [];
  let lives = 0;
  for (const name of SCENARIOS) {
    const e = await execute(findScenario(name)!.plan, consumer);
    expect(e.result.verdict.status, name).toBe('pass');
    hashes.push(e.hash);
    lives += incarnations(e.history);
  }
  const stats = processStats(consumer);
  return { hashes, lives, spawned: stats!.spawned - before, pids: pidsIn(file), stats };
}

/**
 * The processes of a command the harness started and has not killed, read at once: no turn of
 * the event loop passes, so nothing the loop would run later (an end-of-turn sweep) counts.
 */
function unkilled(file: string): number[] {
  const command = (pid: number): string => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  };
  return [...running].flatMap((p) => (p instanceof ConsumerProcess && !p.killed && p.pid !== undefined && command(p.pid).includes(file) ? [p.pid] : []));
}

describe('the warm pool and session crashes', () => {
  it.each([
    ['hangs (a stall)', 'blackbox-stalls.py', 'unknown'],
    ['is stopped by an error (an inspection never answered)', 'blackbox-silent.py', 'no inspection answers'],
  ])('a world that %s kills its spare before it returns, not at the end of a turn', async (_, fixture, end) => {
    const file = `${FIXTURES}/${fixture}`;
    const consumer = await processConsumer(`python3 ${file}`, { stallMs: 1000 });
    const outcome = await execute(findScenario('failed-event-holds-watermark')!.plan, consumer).then(
      (e) => e.result.verdict.status,
      (error: Error) => (/protocol error: no inspection answers inspect i0 within 1000 ms/.test(error.message) ? 'no inspection answers' : error.message),
    );
    // Read in the turn the world ended in: the event loop may not come back for a long time
    // (timers that keep expiring hold it in its timers phase), and the run may be over.
    const left = unkilled(file);
    expect(outcome).toBe(end);
    // Its own process and the spare its first world call started.
    expect(processStats(consumer)?.spawned).toBe(2);
    expect(left).toEqual([]);
  });


  it('give the unpooled bridge its histories byte for byte, and leave no process behind, by pid', async () => {
    const cold = await run({ warm: false });
    const warm = await run({});
    const session = await run({ kills: 'sampled' });
    expect(warm.hashes).toEqual(cold.hashes);
    expect(session.hashes).toEqual(cold.hashes);
    // Unpooled: one process per incarnation, and none started ahead.
    expect(cold.stats?.fromSpare).toBe(0);
    // Warm: every incarnation still its own process, most of them started ahead of need.
    expect(warm.stats?.fromSpare).toBeGreaterThan(cold.lives / 2);
    expect(new Set(warm.pids).size).toBeGreaterThan(cold.lives);
    expect(warm.stats?.sessionCrashes).toBe(0);
    // Sessions: every scenario world crashed its incarnations by message, in far fewer processes.
    expect(session.stats?.sessionWorlds).toBe(SCENARIOS.length);
    expect(session.stats?.sessionCrashes).toBeGreaterThanOrEqual(cold.lives);
    expect(cold.spawned).toBe(cold.lives);
    // At most one process per worker alive at once, and a spare.
    expect(session.spawned).toBeLessThanOrEqual(3);
    // Nothing of any of them runs on: spares and idle sessions die with the last world.
    for (const r of [cold, warm, session]) expect(await pidsGone(r.pids)).toEqual([]);
    expect(liveResources().groups).toEqual([]);
  });

  it('a spare and idle sessions are in the registry a signal handler kills, and the pool recovers after', async () => {
    const file = pidFile();
    const consumer = await processConsumer(`node ${FIXTURES}/pid-ledger.mjs ${file}`, { kills: 'sampled' });
    const plan = findScenario('crash-between-effect-and-completion')!.plan;
    const first = await execute(plan, consumer);
    await execute(plan, consumer);
    // Right after the world, before the turn in which they would be swept: the idle session
    // and the spare still run, registered (by process group, the shell the command runs in).
    const groups = liveResources().groups;
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.every(alive)).toBe(true);
    expect(killAllConsumers()).toBe(groups.length);
    expect(await pidsGone([...groups, ...pidsIn(file)])).toEqual([]);
    // The next world starts fresh processes and gives the same history.
    expect((await execute(plan, consumer)).hash).toBe(first.hash);
    expect(await pidsGone(pidsIn(file))).toEqual([]);
  });

  it('state kept outside the incarnation escapes session crashes, and the final replay under real kills says so', async () => {
    const command = `node ${FIXTURES}/session-leak.mjs`;
    const plan = findScenario('crash-before-first-effect')!.plan;
    const real = await processConsumer(command);
    expect((await execute(plan, real)).result.verdict.status).toBe('pass');
    const sampled = await processConsumer(command, { kills: 'sampled' });
    await execute(plan, sampled);
    const leaked = await execute(plan, sampled);
    expect(leaked.result.verdict.status).toBe('fail');
    expect(leaked.result.verdict.anomalies[0]?.kind).toBe('premature-watermark');

    const regressions = join(scratch, 'leak.json');
    const r = await cli('check', '--command', command, '--runs', '3', '--seed', '1', '--regressions', regressions);
    expect(r.out).toMatch(/final replays under real kills: \d+ failure\(s\) run again, 0 with the same history/);
    expect(r.out).toContain('warning: scenario crash-before-first-effect under real kills: pass, History sha256');
    expect(r.out).toContain('no failure happens under real kills');
    expect(r.out).toMatch(/verdict: unknown$/m);
    expect(r.code).toBe(EXIT.unknown);

    // Split over two machines, each with its own regression file, and merged where the consumer
    // is not: the same verdict, from the real-kill histories the shards carry, judged again.
    const shards = [1, 2].map((i) => join(scratch, `leak-${i}.json`));
    for (const [i, json] of shards.entries()) {
      const shard = await cli('check', '--command', command, '--runs', '3', '--seed', '1', '--shard', `${i + 1}/2`, '--json', json, '--regressions', join(scratch, `leak-r${i + 1}.json`));
      expect(shard.code, shard.out).toBe(EXIT.unknown);
    }
    const merged = await cli('merge', ...shards);
    expect(merged.out).toContain('not a pass: no failure happens under real kills');
    expect(merged.out).toMatch(/verdict: unknown$/m);
    expect(merged.code).toBe(EXIT.unknown);
    // A real-kill history that is not the one its hash names is refused, never judged.
    const edited = JSON.parse(readFileSync(shards[0]!, 'utf8'));
    const failure = [...edited.scenarios, ...edited.regressions].find((x: { failure?: { realHistory?: unknown } }) => x.failure?.realHistory !== undefined)?.failure;
    expect(failure).toBeDefined();
    failure.realHistory.steps.pop();
    writeFileSync(shards[0]!, JSON.stringify(edited));
    const refused = await cli('merge', ...shards);
    expect(refused.err).toContain('is not the one realHash names');
    expect(refused.code).toBe(EXIT.usage);
  });

  it('a failure found with session crashes is recorded with the history real kills gave, and its replay, which kills for real, is held to that: never called non-deterministic for differing from the sessions one', async () => {
    const command = `node ${FIXTURES}/session-path.mjs`;
    const regressions = join(scratch, 'path.json');
    const r = await cli('check', '--command', command, '--runs', '3', '--seed', '2', '--regressions', regressions);
    expect(r.code, r.out).toBe(EXIT.fail);
    type Entry = { kind: string; scenario?: string; kills?: string; hash: string; realHash?: string };
    const entries = (JSON.parse(readFileSync(regressions, 'utf8')) as { entries: Entry[] }).entries;
    expect(entries.every((e) => e.kills === 'sampled')).toBe(true);
    const differs = entries.find((e) => e.kind === 'scenario' && e.realHash !== undefined);
    expect(differs, r.out).toBeDefined();
    const entry = differs as Entry;
    expect(entry.realHash).not.toBe(entry.hash);
    expect(r.out).toContain(`warning: scenario ${entry.scenario} under real kills: fail, History sha256 ${entry.realHash}`);
    // The replay command the check printed for it, as a user runs it.
    const replay = await cli('replay', '--command', command, '--scenario', entry.scenario as string, '--regressions', regressions);
    expect(replay.code, replay.out).toBe(EXIT.fail);
    expect(replay.out).not.toContain('not deterministic');
    expect(replay.out).toContain(`History sha256 ${entry.realHash}`);
    // A check with session crashes replays its recorded failures as replay does, each run of
    // each with real kills: one failing, not three runs that differ (the first world of a
    // process is killed for real, the next in sessions).
    const one = join(scratch, 'path-one.json');
    writeFileSync(one, JSON.stringify({ ...JSON.parse(readFileSync(regressions, 'utf8')), entries: [entry] }));
    const again = await cli('check', '--command', command, '--scenario', entry.scenario as string, '--regressions', one);
    expect(again.out).not.toContain('not deterministic');
    expect(again.out).toMatch(/regressions \(.*\): 1 replayed first, 1 still failing\n/);

    // Shards merged into the regression file record how they killed, and what real kills gave.
    const shards = [1, 2].map((i) => join(scratch, `path-shard-${i}.json`));
    for (const [i, json] of shards.entries()) await cli('check', '--command', command, '--runs', '1', '--seed', '2', '--shard', `${i + 1}/2`, '--json', json, '--regressions', join(scratch, `path-shard-${i + 1}-regressions.json`));
    const merged = join(scratch, 'path-merged.json');
    expect((await cli('merge', ...shards, '--regressions', merged)).code).toBe(EXIT.fail);
    const mergedEntries = (JSON.parse(readFileSync(merged, 'utf8')) as { entries: Entry[] }).entries;
    expect(mergedEntries.every((e) => e.kills === 'sampled')).toBe(true);
    const mergedDiffers = mergedEntries.find((e) => e.kind === 'scenario' && e.realHash !== undefined) as Entry;
    expect(mergedDiffers).toBeDefined();
    const fromMerged = await cli('replay', '--command', command, '--scenario', mergedDiffers.scenario as string, '--regressions', merged);
    expect(fromMerged.code, fromMerged.out).toBe(EXIT.fail);
    expect(fromMerged.out).toContain(`History sha256 ${mergedDiffers.realHash}`);
  });

  it('--kills takes real or sampled, with --command only', async () => {
    const bad = await cli('check', '--command', 'node examples/node/consumer.mjs', '--kills', 'sometimes', '--runs', '1');
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.err).toContain("--kills must be real or sampled, got 'sometimes'");
    const stray = await cli('check', '--consumer', 'reference', '--kills', 'real', '--runs', '1');
    expect(stray.code).toBe(EXIT.usage);
    expect(stray.err).toContain('--kills applies only to a --command consumer');
  });
});
