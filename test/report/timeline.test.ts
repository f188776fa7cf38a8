import { describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { renderFailure } from '../../src/report/failure.js';
import { renderTimeline } from '../../src/report/timeline.js';

const plan = findScenario('failed-event-holds-watermark')!.plan;

describe('the timeline folds repetition', () => {
  it('a consumer that returns without claiming: the repeating lives are printed once, with a count', async () => {
    const idle: Consumer = { name: 'idle', capabilities: { delivery: 'at-least-once' }, run: async () => {} };
    const run = await execute(plan, idle);
    expect(run.result.verdict.anomalies[0]?.kind).toBe('liveness');
    const text = renderFailure({ consumer: 'idle', execution: run, replay: '-' });
    // Unfolded, a line per step: well over 100 KB for the budget's 3,500 steps.
    expect(text.length).toBeLessThan(4000);
    expect(text).toContain('w1#1   starts from durable state');
    expect(text).toContain('w1#1   returned without claiming anything');
    expect(text).toMatch(/\.\.\. the 2 lines above again for w1#2 to w1#\d+ \(× 1,\d{3} in all\)/);
    // The witness is never folded away.
    expect(text).toMatch(/^».*stopped: the phase step budget ran out$/m);
  });

  it('a consumer bouncing off a held lease: lives that differ only in generations and steps fold too', async () => {
    const bouncer: Consumer = { name: 'bouncer', capabilities: { delivery: 'at-least-once' }, run: async (world) => void (await world.lease()) };
    const run = await execute(plan, bouncer);
    const lines = renderTimeline(run.history.steps, new Set(run.result.verdict.anomalies.flatMap((a) => a.steps)));
    expect(lines.length).toBeLessThan(60);
    expect(lines.some((l) => /the 9 lines above again for w1#\d+ to w1#\d+ \(× \d+ in all\)/.test(l))).toBe(true);
  });

  it('identical lines fold into one with a count; different events never fold', async () => {
    const run = await execute(plan, { name: 'leases', capabilities: { delivery: 'at-least-once' }, run: async (world) => {
      await world.lease();
      for (let i = 0; i < 1500; i++) await world.load();
      await world.fetch({ resume: { kind: 'start' }, limit: 1 });
      await world.fetch({ resume: { kind: 'start' }, limit: 2 });
      await world.fetch({ resume: { kind: 'start' }, limit: 3 });
    } });
    const lines = renderTimeline(run.history.steps);
    expect(lines).toContain('   2-1501  w1#1   load progress -> watermark none, anchor none × 1,500');
    for (const limit of [1, 2, 3]) expect(lines.filter((l) => l.includes(`fetch from start, limit ${limit} ->`))).toHaveLength(1);
  });
});
