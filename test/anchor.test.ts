import { describe, expect, it } from 'vitest';
import type { SourceEvent } from '../model/event.js';
import { plan } from '../scenarios/named.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';

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
