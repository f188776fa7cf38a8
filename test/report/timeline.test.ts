import { describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { renderFailure } from '../../src/report/failure.js';
import { cutTimeline, renderTimeline, timelineEntries } from '../../src/report/timeline.js';
import type { Step } from '../../model/history.js';

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

  it('identical lines fold into one with a count; a few different calls are each shown', async () => {
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

  it('a long run of like calls (the same call by the same life, to the same outcome) shows its first and last, and what was folded', async () => {
    const run = await execute(plan, { name: 'pages', capabilities: { delivery: 'at-least-once' }, run: async (world) => {
      await world.lease();
      for (let limit = 1; limit <= 30; limit++) await world.fetch({ resume: { kind: 'start' }, limit });
    } });
    // The first life: it returns, and the next one does the same.
    const lines = renderTimeline(run.history.steps.slice(0, 33));
    expect(lines.at(-1)).toMatch(/^\s+32  w1#1   returned without claiming anything$/);
    expect(lines.filter((l) => l.includes('fetch from start, limit 1 ->'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('fetch from start, limit 30 ->'))).toHaveLength(1);
    expect(lines).toContain('     3-30  ... 28 more steps like the line above: 28 fetch');
    for (const limit of [2, 15, 29]) expect(lines.some((l) => l.includes(`limit ${limit} ->`))).toBe(false);
  });
});

describe('a long timeline is cut around the witness', () => {
  it('past its limit, the start, the witness told and the end are kept, and each cut says what it held', () => {
    // Lines that never fold: each life throws its own error.
    const steps = Array.from({ length: 2000 }, (_, seq) => ({ kind: 'life', seq, phase: 'adversity', actor: { worker: 'w1', incarnation: seq + 1 }, event: seq % 2 === 0 ? { kind: 'start' } : { kind: 'threw', message: `error ${seq}` } }) as Step);
    const witness = 1001;
    const entries = timelineEntries(steps, new Set([witness, 1501]));
    expect(entries).toHaveLength(1 + 2000);
    const lines = cutTimeline(entries, steps, 160, new Set([witness]));
    expect(lines.length).toBeLessThanOrEqual(160);
    expect(lines.filter((l) => l.startsWith('»'))).toEqual([expect.stringMatching(/^»\s+1001  w1#1002 threw: error 1001$/)]);
    expect(lines).toContain('  ... 956 lines cut: steps 39-994, 478 threw, 478 start');
    // The other witness, of a finding only counted, is cut, and the cut says so.
    expect(lines).toContain('  ... 952 lines cut: steps 1,008-1,959, 476 start, 476 threw, 1 marked »');
    expect(lines.at(-1)).toMatch(/^\s+1999  w1#2000 threw: error 1999$/);
  });
});
