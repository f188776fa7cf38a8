import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ev, plan } from '../scenarios/named.js';
import { aim, CELLS, cellName, cellsFor } from '../scenarios/adversity.js';
import { planArb, sizedWorlds } from '../scenarios/arbitraries.js';
import { validatePlan } from '../scenarios/validate.js';
import type { Plan } from '../scenarios/plan.js';
import { census, medianFirst, reachedIn } from '../src/selftest/adversity-census.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { checkProperty } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, SEED } from './support.js';

const window = { pageSize: 2, resumes: [], contract: { kind: 'replay-window', window: 1 } } as const;
const stream = [ev(1), ev(2), ev(3), ev(4), ev(5), ev(6), ev(7), ev(8)];
const crashes = (h: Awaited<ReturnType<typeof execute>>['history']) =>
  h.steps.flatMap((s) => (s.kind === 'call' && (s.fault === 'crash-before' || s.fault === 'crash-after') ? [s] : []));

describe('faults placed by what the consumer does', () => {
  it('at its nth checkpoint: the commit that writes the watermark, whatever commits come between', async () => {
    const run = await execute(plan(stream, [{ call: 'checkpoint', nth: 1, kind: 'crash-before' }], { source: window }), referenceConsumer());
    const [crash] = crashes(run.history);
    expect(crash?.call.kind).toBe('commit');
    expect(crash?.call.kind === 'commit' && crash.call.ops.some((op) => op.op === 'watermark')).toBe(true);
    // The second checkpoint: exactly one watermark commit took effect before it.
    const before = run.history.steps.filter((s) => s.kind === 'call' && s.seq < (crash?.seq ?? 0) && s.applied && s.call.kind === 'commit' && s.call.ops.some((op) => op.op === 'watermark'));
    expect(before).toHaveLength(1);
    expect(reachedIn(run.history).items.has('checkpoint-crash')).toBe(true);
    expect(run.result.verdict.status).toBe('pass');
  });

  it('between the nth effect and the next commit: a crash between checkpoints, with the effects made since the last', async () => {
    const run = await execute(plan(stream, [{ call: 'commit', nth: 0, since: 4, kind: 'crash-before' }], { source: window }), referenceConsumer());
    const [crash] = crashes(run.history);
    const effects = run.history.steps.filter((s) => s.kind === 'call' && s.seq < (crash?.seq ?? 0) && s.applied && s.call.kind === 'emit');
    // The fifth effect (from 0, the fourth) was made, and the commit right after it crashed.
    expect(effects).toHaveLength(5);
    expect(crash?.call.kind).toBe('commit');
    const reached = reachedIn(run.history);
    expect(reached.items.has('between-checkpoints')).toBe(true);
    expect(reached.depth).toBeGreaterThanOrEqual(1);
    expect(run.result.verdict.status).toBe('pass');
  });

  it('a plan may not count a fault both from an event and from an effect', () => {
    expect(() => validatePlan(plan(stream, [{ call: 'commit', nth: 0, since: 1, after: 'e1', kind: 'error' }]))).toThrow(/since/);
  });
});

describe('directed search: worlds aim at the census cells, from their own draw', () => {
  it('the same seed gives the same worlds, and a path replays the world it names exactly', async () => {
    const options = sizedWorlds(200);
    const a = fc.sample(planArb(options), { numRuns: 40, seed: SEED });
    expect(fc.sample(planArb(options), { numRuns: 40, seed: SEED })).toEqual(a);
    // A mutant's minimal world, found and shrunk, is the one its seed and path replay.
    const mutant = findMutant('skips-failed-event')!.consumer;
    const found = await checkProperty(mutant, { runs: 300, seed: SEED, searches: 1 });
    expect(found.status).toBe('fail');
    const again = await checkProperty(mutant, { runs: 300, seed: found.seed, path: found.path as string });
    expect(again.replayed?.hash).toBe(found.counterexample?.hash);
  });

  it('every cell of the census is reached within 200 worlds for the reference consumer', async () => {
    // A fixed seed: bench/census.ts --medians measures the spread over 20 of them.
    const s = await census(referenceConsumer(), 200, 20260401);
    expect(s.cells.map((c) => c.name)).toEqual(cellsFor({ contracts: ['snapshot', 'insertion-stable', 'replay-window', 'none'] }).map(cellName));
    // Without aiming, the combinations came up after hundreds of worlds or never.
    const never = s.cells.filter((c) => c.firstWorld === null).map((c) => c.name);
    expect(never).toEqual([]);
  });

  it('every cell of the census is reached within 200 worlds for the newest-first reference consumer', async () => {
    // It checkpoints once a read and claims right after, which ends the adversity phase: the
    // cells with a crash between checkpoints need a second read, which the aim arranges.
    const s = await census(referenceConsumer({ order: 'newest-first' }), 200, 20260401);
    expect(s.cells.map((c) => c.name)).toEqual(cellsFor({ profile: { order: 'newest-first' }, contracts: ['snapshot', 'insertion-stable', 'replay-window', 'none'] }).map(cellName));
    const never = s.cells.filter((c) => c.firstWorld === null).map((c) => c.name);
    expect(never).toEqual([]);
  });

  describe('a newest-first world aimed between checkpoints crashes a second read, after the first read checkpointed', () => {
    const newest = (contract: Plan['source']['contract'], kind = 'order') =>
      plan(
        Array.from({ length: 9 }, (_, i) => ev(i + 1, kind)),
        [],
        { source: { pageSize: 3, resumes: [], contract, order: 'newest-first' }, binding: { scope: 'orders', filter: { kind: 'equals', attr: 'kind', value: kind }, ordering: ['ts'], upTo: null } },
      );
    const draw = { event: 0, nth: 0, depth: 4, kind: 0 };
    const all = ['snapshot', 'insertion-stable', 'replay-window', 'none'] as const;
    it.each([
      ['a snapshot, made insertion-stable', newest({ kind: 'snapshot' }), all, 'insertion-stable'],
      ['a consumer of replay windows only', newest({ kind: 'insertion-stable' }), ['replay-window'] as const, 'replay-window'],
      ['a binding of refunds, so the new row is one', newest({ kind: 'replay-window', window: 2 }, 'refund'), all, 'insertion-stable'],
    ])('%s', async (_, base, contracts, contract) => {
      const eligible = base.events.map((e) => e.id);
      const aimed = aim(base, ['between-checkpoints'], draw, { eligible, contracts });
      const run = await execute(aimed, referenceConsumer({ order: 'newest-first' }));
      expect(run.result.verdict.status).toBe('pass');
      const reached = reachedIn(run.history);
      expect(reached.items.has('between-checkpoints')).toBe(true);
      // A source that gains rows behind the watermark, among those the consumer reads.
      expect(aimed.source.contract.kind).toBe(contract);
      // The crash that reached it came from a later incarnation than the first read's.
      const [first, second] = crashes(run.history);
      expect(first?.actor.incarnation).toBe(1);
      expect(second?.actor.incarnation).toBe(2);
      expect(reached.depth).toBeGreaterThanOrEqual(1);
    });
  });

  it('a newest-first consumer has cells of its own; an ascending one is never aimed at them', () => {
    const ascending = cellsFor({ contracts: ['insertion-stable'] }).map(cellName);
    const newest = cellsFor({ profile: { order: 'newest-first' }, contracts: ['insertion-stable'] }).map(cellName);
    expect(ascending.some((c) => c.includes('newest-first-error'))).toBe(false);
    expect(newest).toContain('newest-first-error');
    expect(CELLS.length).toBeGreaterThan(newest.length - 1);
  });

  it('a median counts a seed that never reached a cell as beyond every budget', () => {
    expect(medianFirst([3, 5, null])).toBe(5);
    expect(medianFirst([3, null, null])).toBeNull();
    expect(medianFirst([2, 4])).toBe(3);
  });
});

describe('a consumer that checkpoints every 1,000 records', () => {
  it('is crashed between its checkpoints at --events 5000, and check --verbose says so', async () => {
    const regressions = join(mkdtempSync(join(tmpdir(), 'tidemark-census-')), 'regressions.json');
    const r = await cli('check', '--adapter', 'examples/checkpoint-interval.ts', '--option', 'every=1000', '--events', '5000', '--runs', '2', '--seed', '1', '--verbose', '--regressions', regressions);
    expect(r.out).toMatch(/verdict: pass/);
    const line = r.out.split('\n').find((l) => l.trim().startsWith('between-checkpoints '));
    expect(line, r.out).toMatch(/reached after \d+ world\(s\), in \d+; the deepest (\d+) effect\(s\) past a checkpoint/);
    expect(r.code).toBe(0);
  });
});
