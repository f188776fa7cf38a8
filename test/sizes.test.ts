import fc from 'fast-check';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET, planArb, sizedBudget, sizedWorlds } from '../scenarios/arbitraries.js';
import { ev, plan } from '../scenarios/named.js';
import { execute } from '../src/run/execute.js';
import { builtInConsumer } from '../src/selftest/registry.js';
import { EXIT } from '../src/cli.js';
import { argvOf, cli, SEED } from './support.js';

/**
 * Worlds the size of what connectors read (`--events N`): real consumers checkpoint every
 * so many records, and in worlds of 40 events that never happens mid-stream.
 */
describe('--events N', () => {
  it('worlds reach thousands of events in pages of hundreds, with a budget that grows with them', () => {
    const options = sizedWorlds(5000);
    const plans = fc.sample(planArb(options), { numRuns: 40, seed: SEED });
    const sizes = plans.map((p) => p.events.length);
    expect(Math.max(...sizes)).toBeGreaterThan(2500);
    expect(sizes.filter((n) => n > 1000).length).toBeGreaterThan(10);
    expect(Math.max(...plans.map((p) => p.source.pageSize))).toBeGreaterThan(100);
    for (const p of plans) {
      expect(p.source.pageSize).toBeLessThanOrEqual(500);
      // Each world's budgets come from its own size: a large one gets twelve steps an event.
      expect(p.budget).toEqual(sizedBudget(p.events.length + p.mutations.length, p.faults.filter((f) => f.kind === 'stale').length));
      expect(p.budget.adversity).toBeGreaterThanOrEqual(12 * p.events.length);
    }
    // A world shrunk to a few events gets the default budgets, whatever size was asked for.
    expect(sizedBudget(3, 1)).toEqual(DEFAULT_BUDGET);
    expect(() => sizedWorlds(0)).toThrow('events must be an integer from 1 to 100000, got 0');
  });

  it('the drain budget lets a correct newest-first consumer read its whole stream again after each stale page the world may hold', async () => {
    // 300 events one a page, newest first, and an adversity phase too short to read any: the
    // drain reads them all, and each stale page sends the consumer back to the top, a full
    // read again. With as many as the faults a world of this size may hold, the reference
    // still catches up on the budget of its own size (events * 8 ran out at two).
    const events = 300;
    const { size } = sizedWorlds(events);
    const stale = Array.from({ length: size!.maxFaults }, (_, i) => ({ call: 'fetch' as const, nth: 250 + i * 300, kind: 'stale' as const }));
    const world = plan(Array.from({ length: events }, (_, i) => ev(i + 1)), stale, { budget: { adversity: 3, drain: sizedBudget(events, stale.length).drain }, source: { pageSize: 1, resumes: [], contract: { kind: 'insertion-stable' }, order: 'newest-first' } });
    const run = await execute(world, builtInConsumer('reference-newest-first')!);
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    // The stale pages did fire in the drain, each sending it back to the top.
    const fired = run.history.steps.filter((s) => s.kind === 'call' && s.phase === 'drain' && s.outcome.kind === 'error' && s.outcome.code === 'stale-token');
    expect(fired.length).toBeGreaterThanOrEqual(2);
  });

  it('a failure in large worlds shrinks, its result says its size, and its replay command names it and replays it', async () => {
    const json = join(mkdtempSync(join(tmpdir(), 'tidemark-sizes-')), 'result.json');
    const r = await cli('check', '--consumer', 'max-position-fetched', '--events', '500', '--runs', '30', '--seed', '7', '--searches', '1', '--json', json);
    expect(r.code).toBe(EXIT.fail);
    const replay = r.out.match(/^ {2}Replay: (npx tidemark replay --consumer max-position-fetched --seed \S+ --path "[\d:]+" --events 500)$/m)?.[1];
    expect(replay, r.out).toBeDefined();
    const hash = r.out.match(/History sha256 (\w+)\n\s*Replay: npx tidemark replay --consumer max-position-fetched --seed/)?.[1];
    const again = await cli(...argvOf(replay!));
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(`History sha256 ${hash}`);
    // A built-in consumer's failures stay out of the regression file; the JSON result says the size.
    expect(JSON.parse(readFileSync(json, 'utf8')).worlds).toMatchObject({ status: 'fail', events: 500 });
    // Without the size, the same seed and path lead to another world, or to none.
    const other = await cli(...argvOf(replay!.replace(' --events 500', '')));
    expect(other.out).not.toContain(`History sha256 ${hash}`);
  });

  it('is refused with a named scenario, or out of its bounds', async () => {
    const scenario = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--events', '500');
    expect(scenario.code).toBe(EXIT.usage);
    expect(scenario.err).toContain('--scenario cannot be combined with --events');
    const zero = await cli('check', '--consumer', 'reference', '--events', '0');
    expect(zero.code).toBe(EXIT.usage);
    expect(zero.err).toContain('--events');
  });
});
