import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findScenario } from '../scenarios/named.js';
import { AdapterLoadError, loadAdapter } from '../src/adapter/load.js';
import { EXIT } from '../src/cli.js';
import { cli } from './support.js';
import type { BlackboxConsumer, Consumer } from '../src/adapter/consumer.js';
import { refOf, type EventRef } from '../model/event.js';
import type { Position } from '../model/order.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';

const base = findScenario('failed-event-holds-watermark')!.plan;
const tmp = mkdtempSync(join(tmpdir(), 'tidemark-adapters-'));

describe('an adapter that fails to load is named, with the problem, exit 3', () => {
  it.each([
    ['test/fixtures/missing.ts', "cannot load adapter 'test/fixtures/missing.ts': no file at"],
    ['test/fixtures/throws-on-load.ts', 'the module threw while loading: database URL not set'],
    ['test/fixtures/no-export.ts', "it exports only 'unrelated'; export your consumer (or a function returning it) as the default export, or as 'consumer' or 'adapter'"],
    ['test/fixtures/cjs/empty.ts', "cannot load adapter 'test/fixtures/cjs/empty.ts': the module exports nothing"],
    ['test/fixtures/bad-shape.ts', "capabilities.delivery must be 'at-least-once' or 'exactly-once', got \"sometimes\""],
  ])('%s', async (module, message) => {
    await expect(loadAdapter(module)).rejects.toThrow(AdapterLoadError);
    const r = await cli('check', '--adapter', module, '--runs', '5', '--regressions', join(tmp, 'r.json'));
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(message);
  });

  it('loads a JavaScript module exporting an async factory', async () => {
    const consumer = await loadAdapter('test/fixtures/factory.js');
    expect(consumer.name).toBe('from-factory');
  });

  it.each([
    ['test/fixtures/cjs/named.ts', 'cjs-named'],
    ['test/fixtures/cjs/named.cts', 'cts-named'],
  ])('loads the named export of a CommonJS module: %s', async (module, name) => {
    expect((await loadAdapter(module)).name).toBe(name);
  });

  it('a TypeScript adapter is loaded anew each time, what it imports once per process', async () => {
    const file = join(tmp, 'versioned.ts');
    const names: string[] = [];
    for (const n of [1, 2]) {
      writeFileSync(file, `export default { name: 'v${n}', capabilities: { delivery: 'at-least-once' as const }, run: async (world: { caughtUp(): Promise<void> }) => world.caughtUp() };\n`);
      names.push((await loadAdapter(file)).name);
    }
    // A file changed between two loads is read again.
    expect(names).toEqual(['v1', 'v2']);
    const g = globalThis as { adapterLoads?: number; importedLoads?: number };
    const before = { adapter: g.adapterLoads ?? 0, imported: g.importedLoads ?? 0 };
    for (let i = 0; i < 3; i++) await loadAdapter('test/fixtures/counted/adapter.ts');
    // Its code at import runs at each load; what it imports is not transformed and evaluated
    // again for each (an adapter importing the whole harness paid for that every load).
    expect((g.adapterLoads ?? 0) - before.adapter).toBe(3);
    expect((g.importedLoads ?? 0) - before.imported).toBeLessThanOrEqual(1);
  });

  it('refuses --adapter together with --consumer', async () => {
    const r = await cli('check', '--adapter', 'x.ts', '--consumer', 'reference');
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('not both');
  });
});

describe('a misbehaving adapter gets a verdict, never a hang or a harness crash', () => {
  it('malformed calls fail with bad-request, are recorded, and the run goes on', async () => {
    const errors: string[] = [];
    const sloppy: Consumer = {
      name: 'sloppy',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        const calls = [
          () => world.fetch(undefined as never),
          () => world.fetch({ resume: { kind: 'sideways' }, limit: 1 } as never),
          () => world.commit('all of it' as never),
          () => world.commit([{ op: 'explode' }] as never),
          () => world.commit([{ op: 'effect', event: { id: 'e41' } }] as never),
          () => world.emit({ id: 'e41', version: 1 }, 42 as never),
          () => world.completed([1, 2] as never),
        ];
        for (const call of calls) await call().catch((e: Error & { code: string }) => errors.push(e.code));
        return referenceConsumer().run(world);
      },
    };
    const { history, result } = await execute(base, sloppy);
    expect(errors.slice(0, 7)).toEqual(Array(7).fill('bad-request'));
    const malformed = history.steps.filter((s) => s.kind === 'call' && s.call.kind === 'malformed');
    expect(malformed.length).toBeGreaterThanOrEqual(7);
    expect(result.verdict.status).toBe('pass');
  });

  it('an adapter that loops on malformed calls runs out of budget: liveness, not a hang', async () => {
    const looper: Consumer = {
      name: 'looper',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        for (;;) await world.commit(null as never).catch(() => {});
      },
    };
    const { result } = await execute({ ...base, budget: { adversity: 30, drain: 30 } }, looper);
    expect(result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('a consumer waiting on a real timer is given grace, then judged', async () => {
    const slow: Consumer = {
      name: 'slow',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return referenceConsumer().run(world);
      },
    };
    const { result } = await execute(base, slow);
    expect(result.verdict.status).toBe('pass');
  });

  it.each<[string, (looked: () => Promise<void>) => Promise<void>, 'pass' | 'unknown']>([
    ['setImmediate', () => new Promise<void>((resolve) => setImmediate(resolve)), 'pass'],
    ['a 1 ms timer', () => new Promise<void>((resolve) => setTimeout(resolve, 1)), 'pass'],
    // Past the grace its writes cannot be waited for: the run cannot be judged, never failed
    // for a claim its late writes had not reached yet. The write ends just after the world
    // first looks into the store while it is still writing, which it does when the grace is
    // over: past the grace however slowly a loaded machine counts it (a timer of a fixed
    // length is not), and in time to make its claim if the world waited a second grace.
    ['a write that ends just after the grace', (looked) => looked(), 'unknown'],
  ])('a blackbox consumer whose database write waits on %s: what it wrote is seen before its next call, credited to it, or past the grace the run is unknown; never a failure for writes not seen yet', async (_, write, verdict) => {
    // Resolved at the next look into the store (inspect), after which the write ends.
    let onLook: (() => void) | null = null;
    const looked = (): Promise<void> => new Promise<void>((resolve) => (onLook = resolve));
    // One worker, no fault: it books each page's events after an asynchronous write, as a
    // consumer on a real database does, then claims. Were its store looked at only one turn
    // after its last call, the claim would be judged against a store still empty.
    type Db = { watermark: Position | null; effects: { event: EventRef; payload: string }[] };
    const booking: BlackboxConsumer<Db> = {
      name: 'async-db',
      kind: 'blackbox',
      capabilities: { delivery: 'at-least-once' },
      open: () => ({ watermark: null, effects: [] }),
      inspect: (db) => {
        const shown = { watermark: db.watermark, effects: [...db.effects] };
        const wake = onLook;
        onLook = null;
        if (wake !== null) setImmediate(wake);
        return shown;
      },
      run: async (world, db) => {
        let resume: Parameters<typeof world.fetch>[0]['resume'] = { kind: 'start' };
        for (;;) {
          const page = await world.fetch({ resume, limit: world.source.pageSize });
          // One transaction a page: the write, awaited, then the page's rows, then the next call.
          await write(looked);
          for (const e of page.events) {
            db.effects.push({ event: refOf(e), payload: e.payload });
            db.watermark = { key: [...e.key], id: e.id };
          }
          if (page.next === null) return world.caughtUp();
          resume = { kind: 'token', token: page.next };
        }
      },
    };
    const { history, result } = await execute({ ...base, faults: [] }, booking);
    expect(result.verdict.status, JSON.stringify(result.verdict)).toBe(verdict);
    if (verdict !== 'pass') return;
    // Its first incarnation claims at the end of the adversity phase; the drain's books everything again.
    const claim = history.steps.findIndex((s) => s.kind === 'call' && s.call.kind === 'claim');
    const observed = history.steps.flatMap((s) => (s.kind === 'observed' && s.seq < claim ? [s] : []));
    // Every write of the first incarnation is seen before its claim, credited to it.
    expect(observed.map((s) => `${s.actor.worker}#${s.actor.incarnation}`)).toEqual(['w1#1']);
    expect(observed.flatMap((s) => s.effects).length).toBe(base.events.length);
    // However long the writes took, the world looked at the same moments: the same history.
    expect(JSON.stringify((await execute({ ...base, faults: [] }, booking)).history)).toBe(JSON.stringify(history));
  });

  it('a hanging adapter gives verdict unknown (exit 2) with a replay command', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/hangs.ts', '--scenario', 'failed-event-holds-watermark', '--regressions', join(tmp, 'hang.json'));
    expect(r.code).toBe(EXIT.unknown);
    expect(r.out).toContain('stopped calling the world and never returned');
    expect(r.out).toContain('Replay: npx tidemark replay --adapter test/fixtures/hangs.ts --scenario failed-event-holds-watermark');
  });

  it('a blackbox inspection hook that returns the wrong shape is an adapter error, exit 3', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/blackbox-bad-inspect.ts', '--scenario', 'failed-event-holds-watermark', '--regressions', join(tmp, 'bb.json'));
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('inspect() must return { watermark (or watermarks by binding fingerprint), effects');
  });

  it('a blackbox store whose effects shrink is refused, exit 3, naming the effect that is gone: never counted as still delivered', async () => {
    // An earlier run's green JUnit file at the path this run is asked for: taken away as the run starts, and the run writes none.
    const junit = join(tmp, 'torn.xml');
    expect((await cli('check', '--consumer', 'reference', '--scenario', 'ties-across-page-boundary', '--junit', junit, '--regressions', join(tmp, 'torn-green.json'))).code).toBe(EXIT.pass);
    expect(readFileSync(junit, 'utf8')).toContain('failures="0" errors="0"');
    const r = await cli('check', '--adapter', 'test/fixtures/blackbox-torn-tail.ts', '--scenario', 'ties-across-page-boundary', '--junit', junit, '--regressions', join(tmp, 'torn.json'));
    expect(existsSync(junit)).toBe(false);
    expect(r.code, r.out + r.err).toBe(EXIT.usage);
    expect(r.err).toContain("A blackbox consumer's effects, as inspect() returns them, only grow");
    expect(r.err).toMatch(/no longer shows \S+ v1 .* \(it shows \d+ effect\(s\), where it showed \d+\)/);
    // The world that shows the loss, to replay at 2 a.m.
    expect(r.err).toContain('Replay that world: npx tidemark replay --adapter test/fixtures/blackbox-torn-tail.ts --scenario ties-across-page-boundary');
    expect(r.out).not.toContain('verdict: pass');
  });

  it('an adapter error in a large generated world prints the replay of that world at its size, which throws it again; a regression entry is named at its own size', async () => {
    const adapter = 'test/fixtures/blackbox-loses-when-large.ts';
    const file = join(tmp, 'large.json');
    const r = await cli('check', '--adapter', adapter, '--events', '200', '--runs', '100', '--seed', '3', '--regressions', file);
    expect(r.code, r.out + r.err).toBe(EXIT.usage);
    const replay = /Replay that world: npx tidemark replay --adapter \S+ --seed 3 --path "([\d:]+)" --events 200$/m.exec(r.err);
    expect(replay, r.err).not.toBeNull();
    const lost = /no longer shows .*$/m.exec(r.err)?.[0];
    const again = await cli('replay', '--adapter', adapter, '--seed', '3', '--path', replay![1]!, '--events', '200', '--regressions', file);
    expect(again.code).toBe(EXIT.usage);
    expect(again.err).toContain(lost);
    // The same world as a regression entry, replayed by a check of worlds of the default size.
    writeFileSync(file, JSON.stringify({ version: 1, entries: [{ adapter, kind: 'world', seed: 3, path: replay![1], events: 200, anomaly: 'omission' }] }));
    const entry = await cli('check', '--adapter', adapter, '--runs', '5', '--seed', '1', '--regressions', file);
    expect(entry.code).toBe(EXIT.usage);
    expect(entry.err).toContain(`Replay that world: npx tidemark replay --adapter ${adapter} --seed 3 --path "${replay![1]}" --events 200`);
  });

  it('a blackbox store that shows its effects in another order than before (rows ordered by a sequence drawn at insert, committed out of it) loses nothing, and passes', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/blackbox-insert-order.ts', '--runs', '300', '--seed', '1', '--regressions', join(tmp, 'insert-order.json'));
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
  });

  it('an at-least-once blackbox store that compacts its duplicates shows an effect fewer times, loses nothing, and passes', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/blackbox-compacting.ts', '--runs', '200', '--seed', '5', '--regressions', join(tmp, 'compacting.json'));
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
  });
});

describe('check output for CI', () => {
  it('a verdict that is no pass is never a green JUnit file, even when no case failed: the run itself is an error case with the reason', async () => {
    const junit = join(tmp, 'nothing.xml');
    // This mutant's API never serves a repeat page: the one scenario asked is skipped, and nothing is exercised.
    const r = await cli('check', '--consumer', 'retries-served-scroll-request', '--scenario', 'repeated-page', '--junit', junit, '--regressions', join(tmp, 'nothing.json'));
    expect(r.code).toBe(EXIT.unknown);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="tidemark" tests="\d+" failures="0" errors="1"/);
    expect(xml).toContain('<testcase classname="tidemark.run" name="verdict"');
    expect(xml).toContain('unknown: nothing was exercised');
  });

  it('writes JUnit XML and JSON, and skips what does not apply', async () => {
    const junit = join(tmp, 'out.xml');
    const json = join(tmp, 'out.json');
    const r = await cli('check', '--consumer', 'reference', '--runs', '50', '--seed', '3', '--junit', junit, '--json', json, '--regressions', join(tmp, 'ci.json'));
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('check duplicate-effect: untested, the consumer claims at-least-once delivery');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="tidemark" tests="\d+" failures="0" errors="0" time="\d+\.\d{3}">\n  <testsuite name="tidemark check reference" tests="\d+" failures="0" errors="0" skipped="1" /);
    expect(xml).toContain('<testcase classname="tidemark.checks" name="check duplicate-effect" time="0.000">\n      <skipped message="untested: the consumer claims at-least-once delivery, so duplicates are allowed"/>');
    const summary = JSON.parse(readFileSync(json, 'utf8'));
    expect(summary).toMatchObject({ consumer: 'reference', seed: 3, verdict: 'pass', worlds: { status: 'pass', runs: 50 } });
  });

  it("a built-in consumer's failure is kept out of the regression file, and --prune removes one an older tidemark left", async () => {
    // Recording and replaying a user's failure: test/examples.test.ts, with a buggy adapter.
    const file = join(tmp, 'regress.json');
    const first = await cli('check', '--consumer', 'token-as-watermark', '--runs', '100', '--seed', '4', '--regressions', file);
    expect(first.code).toBe(EXIT.fail);
    expect(first.out).not.toContain('recorded');
    expect(existsSync(file)).toBe(false);
    writeFileSync(file, JSON.stringify({ version: 1, entries: [{ adapter: 'builtin:token-as-watermark', kind: 'scenario', scenario: 'snapshot-proves-hole', anomaly: 'token-as-watermark' }] }));
    const pruned = await cli('regressions', '--file', file, '--prune', '--consumer', 'reference');
    expect(pruned.out).toContain('prune builtin:token-as-watermark: scenario snapshot-proves-hole (a built-in consumer, not yours)');
    expect(JSON.parse(readFileSync(file, 'utf8')).entries).toEqual([]);
  });
});
