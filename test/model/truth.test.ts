/**
 * Ground truth (model/truth.ts) on hand-written histories: a record that the replay
 * contradicts is a problem of the world, reported as the verdict `error`, never as an
 * anomaly of the consumer; a faithful record raises none.
 */
import { describe, expect, it } from 'vitest';
import { check } from '../../model/checker.js';
import type { Contract, History, Step } from '../../model/history.js';
import { ALL, complete, effect, ev, timeline, unlessCompleted, watermark, at, type Timeline } from './histories.js';

const a = ev('a', 1);
const b = ev('b', 2);
const c = ev('c', 3);

/** The problems ground truth finds, as text; [] for a faithful record. */
function problems(history: History): string[] {
  const { verdict } = check(history);
  return verdict.status === 'error' ? verdict.problems.map((p) => p.what) : [];
}

/** Ends the adversity phase (every worker in `workers` runs out of budget), then drains to a claim. */
function finish(t: Timeline, workers: readonly string[] = []): History {
  if (workers.length === 0) t.budget();
  for (const w of workers) {
    t.as(w);
    t.budget();
  }
  t.drain();
  t.start();
  t.caughtUp();
  return t.build();
}

/** The same history with one step replaced. */
function edit(history: History, seq: number, change: (step: Step) => Step): History {
  return { ...history, steps: history.steps.map((s) => (s.seq === seq ? change(s) : s)) };
}

describe('pages: what the source served', () => {
  it('a faithful page raises nothing, with the page size known', () => {
    const t = timeline({ initial: [a, b, c] });
    t.start();
    t.fetch([a, b], { limit: 2, next: 'T1' });
    t.fetch([c], { limit: 2, resume: { kind: 'token', token: 'T1' } });
    const h = finish(t);
    expect(problems({ ...h, header: { ...h.header, pageSize: 2 } })).toEqual([]);
  });

  it('an event served in a version or content the source does not hold', () => {
    const t = timeline({ initial: [a, b] });
    t.start();
    t.fetch([a, { ...b, payload: 'forged' }]);
    expect(problems(finish(t))).toEqual([expect.stringMatching(/^fetch 1 served b as .*forged.*but the source holds/)]);
  });

  it('an event the binding does not admit, and a head the source never had', () => {
    const refund = ev('r', 2, { attrs: { kind: 'refund' } });
    const t = timeline({ initial: [a, refund], binding: { ...ALL, filter: { kind: 'equals', attr: 'kind', value: 'order' } } });
    t.start();
    t.fetch([refund], { head: 9 });
    expect(problems(finish(t))).toEqual(['fetch 1 served r, which is not eligible under the binding', "fetch 1 reported head 9, but the source's head is 2"]);
  });

  it('a page that is not the next slice of the stream, or ends it early', () => {
    const t = timeline({ initial: [a, b, c] });
    t.start();
    t.fetch([a, c], { limit: 2, next: 'T1' });
    t.fetch([b], { limit: 2, resume: { kind: 'after', position: at(a) } });
    const h = finish(t);
    expect(problems({ ...h, header: { ...h.header, pageSize: 2 } })).toEqual([
      'fetch 1 served [a c], but from there the eligible stream holds [a b]',
      'fetch 2 served [b], but from there the eligible stream holds [b c]',
    ]);
  });
});

describe('the store: every guard decided again', () => {
  it('a fenced commit from an old generation cannot have applied', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.lease(1);
    t.start('w2');
    t.lease(2);
    t.as('w1');
    t.commit([watermark(at(a))], { fence: 1 });
    expect(problems(finish(t, ['w1', 'w2']))).toEqual(['call 4 (commit) must have failed with conflict, but the world recorded ok, applied']);
  });

  it('a commit whose guards hold cannot have been refused', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.fetch([a]);
    t.commit([unlessCompleted(a), effect(a), complete(a)], { outcome: { kind: 'error', code: 'conflict' } });
    expect(problems(finish(t))).toEqual(['call 2 (commit) must have succeeded, but the world recorded error conflict']);
  });

  it('load and completed answer from the store as it is', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.fetch([a]);
    t.handle(a);
    t.load(null);
    t.completed([a], [false]);
    expect(problems(finish(t))).toEqual([
      expect.stringMatching(/^load at step 3 returned .* but the store holds /),
      'completed at step 4 answered [false], but the store\'s completion records say [true]',
    ]);
  });

  it('a call that never ran cannot have applied, and a poison effect is always refused', () => {
    const t = timeline({ initial: [a, b], poison: ['b'] });
    t.start();
    t.fetch([a, b]);
    t.emit(b);
    const h = finish(t);
    const lied = edit(h, 2, (s) => s);
    expect(problems(lied)).toEqual(['call 2 (emit) must have failed with rejected, but the world recorded ok, applied']);
    const ran = edit(h, 1, (s) => (s.kind === 'call' ? { ...s, outcome: { kind: 'crash-before' } } : s));
    expect(problems(ran)).toContainEqual('call 1 (fetch) is recorded as applied, though it never ran (crash-before)');
  });
});

describe('the lease, replayed from its time to live', () => {
  it('a lease held by another worker and not expired cannot be granted', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.lease(1);
    t.start('w2');
    t.lease(2);
    const h = finish(t, ['w1', 'w2']);
    expect(problems({ ...h, header: { ...h.header, leaseTtl: 10 } })).toEqual(['call 3 (lease) must have failed with conflict, but the world recorded ok, applied']);
    // Expired by step 3 with a time to live of 1: a new generation, as recorded.
    expect(problems({ ...h, header: { ...h.header, leaseTtl: 1 } })).toEqual([]);
  });

  it('a generation that does not follow from the grants before it', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.lease(3);
    const h = finish(t);
    expect(problems({ ...h, header: { ...h.header, leaseTtl: 10 } })).toEqual(['lease at step 1 granted generation 3, but the replay grants 1']);
  });
});

describe('changes to the source, held to the declared contract', () => {
  const behind = ev('m', 0);
  const cases: readonly [Contract, string, boolean][] = [
    [{ kind: 'snapshot' }, 'insert behind the newest position', true],
    [{ kind: 'insertion-stable' }, 'insert behind the newest position', true],
    [{ kind: 'replay-window', window: 1 }, 'insert outside the window', true],
    [{ kind: 'replay-window', window: 5 }, 'insert inside the window', false],
    [{ kind: 'none' }, 'insert anywhere', false],
  ];
  it.each(cases)('%j: %s breaks it: %s', (contract, _, broken) => {
    const t = timeline({ initial: [a, b, c], contract });
    t.start();
    t.insert(behind);
    const found = problems(finish(t));
    expect(found.some((p) => p.includes(`breaks its ${contract.kind} contract`))).toBe(broken);
  });

  it('an insert at the newest key with a larger id is insertion-stable', () => {
    const t = timeline({ initial: [a, b, c] });
    t.start();
    t.insert(ev('z', 3));
    expect(problems(finish(t))).toEqual([]);
  });

  it('a new version must follow the one the source held', () => {
    const t = timeline({ initial: [a, b], contract: { kind: 'none' } });
    t.start();
    t.move(ev('a', 5, { version: 3 }));
    expect(problems(finish(t))).toEqual(["the source's move of a@3 does not follow from what it held (version 1)"]);
  });
});
