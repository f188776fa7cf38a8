import { describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { PendingCalls } from '../../src/world/pending.js';

describe('the pending-call scheduler', () => {
  it('takes the k-th oldest call of a worker exactly as a list would, under any mix of pushes and takes', () => {
    const pending = new PendingCalls<number>();
    const model = new Map<string, number[]>();
    // A fixed linear congruential sequence: the same mix every run.
    let seed = 12345;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 50_000; i++) {
      const worker = `w${1 + Math.floor(next() * 3)}`;
      const list = model.get(worker) ?? [];
      model.set(worker, list);
      if (next() < 0.55 || list.length === 0) {
        pending.push(worker, i);
        list.push(i);
      } else {
        const rank = Math.floor(next() * list.length);
        expect(pending.take(worker, rank)).toBe(list.splice(rank, 1)[0]);
      }
      if (i % 997 === 0) {
        const workers = [...model].filter(([, l]) => l.length > 0).map(([w]) => w).sort();
        expect(pending.workers()).toEqual(workers);
        // What a pick reads without building the list.
        expect(pending.activeCount()).toBe(workers.length);
        for (const [k, w] of workers.entries()) expect(pending.activeAt(k)).toBe(w);
        expect(pending.size).toBe([...model.values()].reduce((n, l) => n + l.length, 0));
      }
    }
    pending.clear();
    expect(pending.size).toBe(0);
    expect(pending.workers()).toEqual([]);
    expect(pending.activeCount()).toBe(0);
  });

  it('10,000 un-awaited emits in one world finish in seconds, every one recorded in order', async () => {
    const n = 10_000;
    const flood: Consumer = {
      name: 'flood',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        for (let i = 0; i < n; i++) void world.emit({ id: 'e41', version: 1 }, `effect ${i}`).catch(() => {});
        await world.caughtUp();
      },
    };
    const plan = { ...findScenario('failed-event-holds-watermark')!.plan, faults: [], budget: { adversity: n + 10, drain: 1 } };
    const run = await execute(plan, flood);
    const emits = run.history.steps.flatMap((s) => (s.kind === 'call' && s.call.kind === 'emit' ? [s.call.payload] : []));
    expect(emits).toHaveLength(n);
    // The schedule is empty, so choice 0 every time: the oldest call first.
    expect(emits.slice(0, 3)).toEqual(['effect 0', 'effect 1', 'effect 2']);
    expect(emits.at(-1)).toBe(`effect ${n - 1}`);
    // What it costs (a scan of every pending call per step made such a world quadratic) is the
    // bench's `pending` row, not a timed test.
  });
});
