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
    // Behind the head too (one asked to land nowhere behind it is a new record past it, and
    // moves the head on, so that the late insert before the claim would land past 2).
    { before: { call: 'commit', nth: 0 }, kind: 'insert', target: 0, back: 1 },
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

describe('a next-page token kept as progress in the replay anchor is caught where a restart resumes by it', () => {
  // Its runs all end failing visibly (the source promises nothing) and it commits no
  // watermark: only the anchor, stored as the page arrives and resumed from after a crash,
  // shows that the events it passes over are skipped for good.
  it('in a named scenario, with the resume by the kept token as the witness', async () => {
    const r = await cli('check', '--adapter', 'test/fixtures/anchor-as-progress.ts', '--scenario', 'late-insert-without-contract');
    expect(r.code, r.out).toBe(EXIT.fail);
    // The source puts m0 behind the token kept in the anchor; the next life resumes by it.
    expect(r.out).toMatch(/token-as-watermark: step \d+: w1#2 resumed by the page token "[^"]+", which it had kept \(it did not get it from a page of its own\), and the token passed over m0 at 42#m0, which never got a durable outcome/);
    expect(r.out).toMatch(/» +\d+ +w1#2 +fetch token /);
  });

  it("the reference consumer's anchors, each stored with the watermark it replays from, pass it where the fixture's fail", async () => {
    const tokensOnly = plan([0, 1, 2, 3, 4].map((k): SourceEvent => ({ id: `e${k}`, version: 1, key: [k], attrs: {}, payload: `e${k}` })), [{ call: 'effect', nth: 2, kind: 'crash-before' }], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } },
    });
    const run = await execute(tokensOnly, referenceConsumer());
    expect(run.history.steps.some((s) => s.kind === 'call' && s.call.kind === 'commit' && s.call.ops.some((op) => op.op === 'anchor' && op.token !== null))).toBe(true);
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    expect(run.result.results['token-as-watermark']).toEqual({ status: 'pass' });
    expect((await execute(tokensOnly, anchorAsProgress)).result.verdict.anomalies.map((a) => a.kind)).toContain('token-as-watermark');
  });
});
