import { describe, expect, it } from 'vitest';
import type { SourceEvent } from '../model/event.js';
import { plan } from '../scenarios/named.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { EXIT } from '../src/cli.js';
import anchorAsProgress from './fixtures/anchor-as-progress.js';
import { cli } from './support.js';

/**
 * Step 8: a page token persisted as the replay anchor must replay from the watermark it sits
 * next to. The token that fetched an overlapping page continues after the previous page's
 * last event, past events this page still shows; when the watermark lands on one of those,
 * that token would replay from beyond it, and an event landing in between later (inside the
 * replay window) would never be read again. Found by generated worlds: repeated overlaps on
 * one event, a replay window of one, and a late insert just before the claim.
 */
const keys = [0, 1, 1, 1, 0, 1, 1, 1, 3, 0];
const events: SourceEvent[] = keys.map((k, i) => ({ id: `e0${i}`, version: 1, key: [k], attrs: { kind: 'order' }, payload: `e0${i}:order` }));
const world = plan(events, [0, 1, 2, 3].map((nth) => ({ call: 'fetch' as const, nth, kind: 'overlap' as const, after: 'e01' })), {
  source: { pageSize: 2, resumes: [], contract: { kind: 'replay-window', window: 1 } },
  leaseTtlSteps: 3,
  mutations: [
    { before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 1 },
    { before: { call: 'commit', nth: 0 }, kind: 'insert', target: 0, back: 0 },
  ],
});

describe('the replay anchor never continues past its watermark', () => {
  it.each([
    ['a position bookmark', referenceConsumer()],
    ['a cursor bookmark', referenceConsumer({ bookmark: 'cursor' })],
  ])('%s: the late insert behind the last overlapping page is read again', async (_, consumer) => {
    const run = await execute(world, consumer);
    expect(run.history.steps.some((s) => s.kind === 'mutation' && s.event.key[0] === 2)).toBe(true);
    expect(run.result.verdict).toMatchObject({ status: 'pass' });
  });
});

describe('an anchor that keeps the next-page token as progress is caught where it is stored', () => {
  // Its runs all end failing visibly (the source promises nothing) and it commits no
  // watermark: only the anchor, stored as the page arrives and resumed from after a crash,
  // shows that the page's events are skipped for good.
  it('in a named scenario, with the anchor commit as the witness', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/anchor-as-progress.ts', '--scenario', 'late-insert-without-contract');
    expect(r.code, r.out).toBe(EXIT.fail);
    expect(r.out).toMatch(/token-as-watermark: step \d+ stored the page token "[^"]+" as the replay anchor of the watermark null, but a resume by it passes over e41 at 41#e41, which had no durable outcome/);
    expect(r.out).toMatch(/» +\d+ +w1#1 +commit \[anchor /);
  });

  it("the reference consumer's anchors, each stored with the watermark it replays from, pass it", async () => {
    const tokensOnly = plan([0, 1, 2, 3, 4].map((k): SourceEvent => ({ id: `e${k}`, version: 1, key: [k], attrs: {}, payload: `e${k}` })), [{ call: 'effect', nth: 3, kind: 'crash-after' }], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } },
    });
    const run = await execute(tokensOnly, referenceConsumer());
    expect(run.history.steps.some((s) => s.kind === 'call' && s.call.kind === 'commit' && s.call.ops.some((op) => op.op === 'anchor' && op.token !== null))).toBe(true);
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    expect(run.result.results['token-as-watermark']).toEqual({ status: 'pass' });
    expect((await execute(tokensOnly, anchorAsProgress)).result.verdict.anomalies.map((a) => a.kind)).toContain('token-as-watermark');
  });
});
