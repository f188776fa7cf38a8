import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { pruneRegressions, readRegressions, recordRegressions, TIDEMARK_VERSION, versionWarning, writeRegressions, type RegressionEntry } from '../src/run/regressions.js';
import { WORLDS_VERSION } from '../scenarios/arbitraries.js';
import { EXIT } from '../src/cli.js';
import { BUILT_CLI, cli, HANG_MS } from './support.js';

/**
 * The regression file under the conditions CI gives it: checks running at once against one
 * file, and checks killed in the middle of a write. Writers run as real processes.
 */
const WRITER = 'test/fixtures/hostile/regressions-writer.ts';
const scratch = mkdtempSync(join(tmpdir(), 'tidemark-regressions-'));
/**
 * Takes the lock, counting the waits for it: a lock whose holder is gone is taken over without
 * one (the lock's waits are Atomics.wait, a synchronous sleep).
 */
function waitsWhile<T>(work: () => T): { result: T; waits: number } {
  const wait = vi.spyOn(Atomics, 'wait');
  try {
    return { result: work(), waits: wait.mock.calls.length };
  } finally {
    wait.mockRestore();
  }
}
const entry = (adapter: string, scenario: string): RegressionEntry => ({ adapter, kind: 'scenario', scenario, anomaly: 'omission' });

function writer(...args: string[]): { done: Promise<number | null>; started: Promise<void>; kill: () => void; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const started = new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { done, started, kill: () => child.kill('SIGKILL'), stderr: () => err };
}

describe('the regression file', () => {
  it('five checks recording at once into one file keep every entry', async () => {
    const file = join(scratch, 'concurrent.json');
    const writers = Array.from({ length: 5 }, (_, id) => writer('record', file, String(id), '20'));
    const codes = await Promise.all(writers.map((w) => w.done));
    expect(codes, writers.map((w) => w.stderr()).join('\n')).toEqual([0, 0, 0, 0, 0]);
    const entries = readRegressions(file).entries;
    expect(entries).toHaveLength(100);
    for (let id = 0; id < 5; id++) for (let k = 0; k < 20; k++) expect(entries.some((e) => e.adapter === `writer-${id}.ts` && e.kind === 'scenario' && e.scenario === `scenario-${k}`)).toBe(true);
    expect(readdirSync(scratch).filter((n) => n.startsWith('.concurrent.json') || n.endsWith('.lock'))).toEqual([]);
  });

  it('a check killed in the middle of writing leaves the old file, and does not stop the next check', async () => {
    const file = join(scratch, 'killed.json');
    const n = 2000;
    writeRegressions(file, { version: 1, entries: Array.from({ length: n }, (_, k) => entry('big.ts', `scenario-${k}`)) });
    const before = readFileSync(file, 'utf8');
    const w = writer('die-mid-write', file, String(n));
    expect(await w.done, w.stderr()).toBeNull();
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Its lock and its temporary file are left behind: the next check takes over the lock of a
    // process that is gone, and removes the temporary file, at once.
    expect(readdirSync(scratch).filter((name) => name.startsWith('.killed.json') || name === 'killed.json.lock').length).toBeGreaterThan(0);
    const after = waitsWhile(() => recordRegressions(file, [entry('after.ts', 'stale-token')]));
    expect(after.result).toHaveLength(1);
    expect(after.waits).toBe(0);
    expect(readRegressions(file).entries).toHaveLength(n + 1);
    expect(readdirSync(scratch).filter((name) => name.startsWith('.killed.json') || name === 'killed.json.lock')).toEqual([]);
  });

  it('entries note the tidemark version; one from another version gets a warning', () => {
    const file = join(scratch, 'version.json');
    const [added] = recordRegressions(file, [entry('mine.ts', 'stale-token')]);
    expect(added?.tidemark).toBe(TIDEMARK_VERSION);
    expect(JSON.parse(readFileSync(file, 'utf8')).entries[0].tidemark).toBe(TIDEMARK_VERSION);
    expect(versionWarning(added!)).toBeNull();
    expect(versionWarning({ ...added!, tidemark: '0.0.1' })).toBe(
      `recorded by tidemark 0.0.1, replayed by tidemark ${TIDEMARK_VERSION}: the world it names may have changed. If it no longer fails, check that the bug is fixed before pruning it.`,
    );
    expect(versionWarning(entry('old.ts', 'stale-token'))).toContain('recorded by a tidemark that did not note its version');
    // The worlds a seed and path name can change within a version: a world entry says under which generators it was drawn.
    const world: RegressionEntry = { adapter: 'mine.ts', kind: 'world', seed: 42, path: '163', anomaly: 'omission', tidemark: TIDEMARK_VERSION, worlds: WORLDS_VERSION };
    expect(versionWarning(world)).toBeNull();
    expect(versionWarning({ ...world, worlds: WORLDS_VERSION - 1 })).toBe(
      `recorded by tidemark ${TIDEMARK_VERSION} (its worlds drawn as version ${WORLDS_VERSION - 1} drew them, where these are drawn as version ${WORLDS_VERSION}), replayed by tidemark ${TIDEMARK_VERSION}: the world it names may have changed. If it no longer fails, check that the bug is fixed before pruning it.`,
    );
    const { worlds: _, ...unstamped } = world;
    expect(versionWarning(unstamped)).toContain('its worlds drawn as version 1 drew them');
  });

  it("built-in consumers' failures are kept out; recording what is already there adds nothing", () => {
    const file = join(scratch, 'builtin.json');
    expect(recordRegressions(file, [entry('builtin:token-as-watermark', 'stale-token')])).toEqual([]);
    expect(existsSync(file)).toBe(false);
    recordRegressions(file, [entry('mine.ts', 'stale-token')]);
    expect(recordRegressions(file, [entry('mine.ts', 'stale-token')])).toEqual([]);
    expect(readRegressions(file).entries).toHaveLength(1);
  });

  it("an adapter's failures are its own however its path is typed: ./x.ts, x.ts, the absolute path and a link to it are one module", async () => {
    const file = join(scratch, 'spelt.json');
    const recorded = await cli('check', '--adapter', './examples/ledger-consumer-buggy.ts', '--runs', '50', '--seed', '1', '--regressions', file);
    expect(recorded.code).toBe(EXIT.fail);
    const entries = readRegressions(file).entries;
    expect(entries.length).toBeGreaterThan(0);
    const link = join(scratch, 'buggy-link.ts');
    symlinkSync(resolve('examples/ledger-consumer-buggy.ts'), link);
    for (const spelling of ['examples/ledger-consumer-buggy.ts', resolve('examples/ledger-consumer-buggy.ts'), link]) {
      const r = await cli('check', '--adapter', spelling, '--scenario', 'repeated-page', '--regressions', file);
      expect(r.out).toContain(`regressions (${file}): ${entries.length} replayed first`);
      expect(r.code, r.out).toBe(EXIT.fail);
    }
  });

  it('a failure recorded from another directory is replayed and pruned from the root: the file keeps adapter paths relative to itself', async () => {
    const file = join(scratch, 'elsewhere.json');
    const module = resolve('examples/ledger-consumer-buggy.ts');
    // Recorded as a developer in examples/ records it: the path typed there names the module from there only.
    const recorded = spawnSync(process.execPath, [resolve(BUILT_CLI), 'check', '--adapter', 'ledger-consumer-buggy.ts', '--runs', '50', '--seed', '1', '--regressions', file], { cwd: 'examples', encoding: 'utf8', timeout: HANG_MS });
    expect(recorded.status, recorded.stdout + recorded.stderr).toBe(EXIT.fail);
    const kept = (JSON.parse(readFileSync(file, 'utf8')) as { entries: RegressionEntry[] }).entries;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.map((e) => e.adapter)).toEqual(kept.map(() => relative(scratch, module)));
    expect(readRegressions(file).entries.map((e) => e.adapter)).toEqual(kept.map(() => 'examples/ledger-consumer-buggy.ts'));
    const r = await cli('check', '--adapter', 'examples/ledger-consumer-buggy.ts', '--scenario', 'repeated-page', '--regressions', file);
    expect(r.out).toContain(`regressions (${file}): ${kept.length} replayed first`);
    expect(r.code, r.out).toBe(EXIT.fail);
    const pruned = await cli('regressions', '--prune', '--adapter', 'examples/ledger-consumer-buggy.ts', '--file', file);
    expect(pruned.out).toContain(`pruned 0 passing entries; ${kept.length} kept`);
    expect(pruned.out).not.toContain('of other targets');
    // Another target's check replays none of them, and says so, naming whose they are.
    const other = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--scenario', 'repeated-page', '--regressions', file);
    expect(other.out).toContain(`regressions (${file}): ${kept.length} recorded failure(s) of other targets not replayed: --adapter examples/ledger-consumer-buggy.ts\n`);
    expect(other.code, other.out).toBe(EXIT.pass);
  });

  it('one file named through a linked directory or by its own path keeps and reads the same paths', () => {
    // The link sits deeper than the file: paths kept relative to the link's directory would lead elsewhere from the file's own.
    const real = mkdtempSync(join(scratch, 'real-'));
    const deep = join(scratch, 'deep', 'er');
    mkdirSync(deep, { recursive: true });
    symlinkSync(real, join(deep, 'link'));
    recordRegressions(join(deep, 'link', 'r.json'), [entry('examples/ledger-consumer.ts', 'one')]);
    for (const named of [join(real, 'r.json'), join(deep, 'link', 'r.json')]) expect(readRegressions(named).entries.map((e) => e.adapter)).toEqual(['examples/ledger-consumer.ts']);
    expect(recordRegressions(join(real, 'r.json'), [entry('examples/ledger-consumer.ts', 'one')])).toEqual([]);
  });

  it("a file an earlier tidemark wrote (paths relative to where it ran) is read so, whatever lies beside it, gets no duplicates, prunes, and is rewritten relative to itself", () => {
    // Deeper than the working directory, with a decoy beside it under the same relative path:
    // a path read relative to the file would name the decoy.
    const dir = join(scratch, 'earlier', 'a', 'b');
    mkdirSync(join(dir, 'examples'), { recursive: true });
    writeFileSync(join(dir, 'examples', 'ledger-consumer.ts'), 'export default {};\n');
    const file = join(dir, 'earlier.json');
    writeFileSync(file, JSON.stringify({ version: 1, entries: [entry('examples/ledger-consumer.ts', 'one')] }));
    expect(readRegressions(file).entries.map((e) => e.adapter)).toEqual(['examples/ledger-consumer.ts']);
    expect(recordRegressions(file, [entry('examples/ledger-consumer.ts', 'one')])).toEqual([]);
    recordRegressions(file, [entry('examples/ledger-consumer.ts', 'two')]);
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { paths: string; entries: RegressionEntry[] };
    expect(raw.paths).toBe('relative to this file');
    expect(raw.entries.map((e) => e.adapter)).toEqual(['one', 'two'].map(() => relative(realpathSync(dir), resolve('examples/ledger-consumer.ts'))));
    expect(readRegressions(file).entries.map((e) => e.adapter)).toEqual(['examples/ledger-consumer.ts', 'examples/ledger-consumer.ts']);
    expect(pruneRegressions(file, [entry('examples/ledger-consumer.ts', 'one')])).toEqual({ removed: 1, kept: 1 });
  });

  it('a relative link to the file, named through a linked directory, is followed as the kernel follows it', () => {
    const target = join(scratch, 'shared', 'x');
    mkdirSync(target, { recursive: true });
    const checkout = join(scratch, 'checkout');
    mkdirSync(join(checkout, 'sub'), { recursive: true });
    symlinkSync('../../shared/x/r.json', join(checkout, 'sub', 'link.json'));
    const deep = join(scratch, 'deeper', 'a', 'b');
    mkdirSync(deep, { recursive: true });
    symlinkSync(checkout, join(deep, 'co'));
    recordRegressions(join(deep, 'co', 'sub', 'link.json'), [entry('examples/ledger-consumer.ts', 'one')]);
    expect(readRegressions(join(target, 'r.json')).entries.map((e) => e.adapter)).toEqual(['examples/ledger-consumer.ts']);
  });

  it('merge records nothing, and says why, when the shards named their adapter from another directory', async () => {
    const dir = mkdtempSync(join(scratch, 'merge-'));
    for (const i of [1, 2]) {
      const shard = spawnSync(process.execPath, [resolve(BUILT_CLI), 'check', '--adapter', 'ledger-consumer-buggy.ts', '--seed', '3', '--runs', '20', '--shard', `${i}/2`, '--json', join(dir, `s${i}.json`), '--regressions', join(dir, `own-${i}.json`)], { cwd: 'examples', encoding: 'utf8', timeout: HANG_MS });
      expect(shard.status, shard.stdout + shard.stderr).toBe(EXIT.fail);
    }
    const file = join(dir, 'merged.json');
    const merged = await cli('merge', join(dir, 's1.json'), join(dir, 's2.json'), '--regressions', file);
    expect(merged.code).toBe(EXIT.fail);
    expect(merged.err).toContain('the adapter ledger-consumer-buggy.ts names no file from this directory');
    expect(existsSync(file)).toBe(false);
  });

  it('a recorded failure that cannot be replayed here (a scenario this tidemark does not have, or one that no longer applies) is unknown, never a pass, and prune keeps it', async () => {
    const file = join(scratch, 'unplayable.json');
    writeRegressions(file, { version: 1, entries: [entry('examples/ledger-consumer.ts', 'a-scenario-since-renamed')] });
    const junit = join(scratch, 'unplayable.xml');
    const renamed = await cli('check', '--adapter', 'examples/ledger-consumer.ts', '--scenario', 'repeated-page', '--regressions', file, '--junit', junit);
    expect(renamed.code, renamed.out).toBe(EXIT.unknown);
    expect(renamed.out).toContain('unknown scenario a-scenario-since-renamed (it names a scenario this tidemark does not have');
    // Its case says why it could not be replayed, and offers no replay command: one would be a usage error.
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('name="regression: scenario a-scenario-since-renamed"');
    expect(xml).not.toContain('--scenario a-scenario-since-renamed');
    // This mutant's API never serves a repeat page: its recorded failure there would replay a world it never meets, and pass.
    const other = join(scratch, 'inapplicable.json');
    writeRegressions(other, { version: 1, entries: [entry('builtin:retries-served-scroll-request', 'repeated-page')] });
    const inapplicable = await cli('check', '--consumer', 'retries-served-scroll-request', '--scenario', 'repeated-page', '--regressions', other);
    expect(inapplicable.code, inapplicable.out).toBe(EXIT.unknown);
    expect(inapplicable.out).toContain("unknown scenario repeated-page (its scenario does not apply to this consumer now: the consumer's API never serves a repeat page");
    expect(inapplicable.out).not.toContain('verdict: pass');
    const pruned = await cli('regressions', '--file', other, '--prune', '--consumer', 'retries-served-scroll-request');
    expect(pruned.out).toContain('keep  builtin:retries-served-scroll-request: scenario repeated-page: its scenario does not apply');
    expect(readRegressions(other).entries).toHaveLength(1);
  });

  it('pruning removes only the given entries from the file as it is now', () => {
    const file = join(scratch, 'prune.json');
    recordRegressions(file, [entry('a.ts', 'one'), entry('a.ts', 'two')]);
    // Another check records while this one replays the file's entries.
    recordRegressions(file, [entry('b.ts', 'three')]);
    expect(pruneRegressions(file, [entry('a.ts', 'one')])).toEqual({ removed: 1, kept: 2 });
    expect(readRegressions(file).entries.map((e) => (e.kind === 'scenario' ? e.scenario : ''))).toEqual(['two', 'three']);
  });

  it('a lock left by a process that is gone is taken over', () => {
    const file = join(scratch, 'stale-lock.json');
    // A pid that is not running: the lock's holder was killed.
    writeFileSync(`${file}.lock`, 'pid 2147483646 since 2020-01-01T00:00:00.000Z\n');
    const taken = waitsWhile(() => recordRegressions(file, [entry('a.ts', 'one')]));
    expect(taken.result).toHaveLength(1);
    expect(taken.waits).toBe(0);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
