/**
 * Ground truth (model/truth.ts) on hand-written histories: a record that the replay
 * contradicts is a problem of the world, reported as the verdict `error`, never as an
 * anomaly of the consumer; a faithful record raises none.
 */
import { describe, expect, it } from 'vitest';
import { check } from '../../model/checker.js';
import type { Contract, FaultLabel, History, Step } from '../../model/history.js';
import { HistoryError } from '../../model/parse-history.js';
import blackbox from '../../examples/blackbox-consumer.js';
import { findScenario } from '../../scenarios/named.js';
import { execute } from '../../src/run/execute.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { ALL, complete, effect, ev, timeline, unlessCompleted, watermark, at, type FetchOptions, type Timeline } from './histories.js';

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
  // The drain runs w1 alone, as the world does.
  t.start('w1');
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
    expect(problems(finish(t))).toEqual([
      'fetch 1 served r, which is not eligible under the binding',
      "fetch 1 reported head 9, but the source's head is 2",
      'fetch 1 served [r], but from there the eligible stream holds []',
    ]);
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

describe('pages: no label and no missing field turns the check off', () => {
  /**
   * One incarnation reads pages and handles every event it is given, then claims caught-up:
   * when a page ends the stream early, b and c are never handled. Whether that is the
   * consumer's omission or the world's contradiction is what ground truth must decide.
   */
  function readsPages(pages: readonly [readonly ReturnType<typeof ev>[], FetchOptions][], pageSize = 3): History {
    const t = timeline({ initial: [a, b, c], pageSize });
    t.start();
    for (const [events, options] of pages) {
      t.fetch(events, options);
      for (const e of events) t.handle(e);
    }
    t.caughtUp();
    return t.build();
  }

  const first = (label?: FaultLabel): [ReturnType<typeof ev>[], FetchOptions] => [[a], { limit: 1, next: 't1', ...(label ? { fault: label } : {}) }];
  const fromT1 = { resume: { kind: 'token', token: 't1' } } as const;

  it.each<[string, History]>([
    ['no label', readsPages([[[a], { limit: 1 }]])],
    ['short', readsPages([[[a], { limit: 3, fault: 'short' }]])],
    ['overlap', readsPages([first(), [[a, b], { ...fromT1, limit: 1, fault: 'overlap' }]])],
    ['reorder', readsPages([[[b, a], { limit: 2, fault: 'reorder' }]])],
    ['empty', readsPages([[[], { limit: 3, fault: 'empty' }]])],
  ])('a page that ends the stream early is a harness error, labelled %s', (_, history) => {
    const { verdict } = check(history);
    expect(verdict.status).toBe('error');
    if (verdict.status !== 'error') return;
    expect(verdict.problems.map((p) => p.what)).toEqual([expect.stringMatching(/^fetch \d+ .*ended the stream (with an empty page )?at \d of 3 eligible events$/)]);
  });

  it('an unknown label or no page size is no history at all, never an omission of the consumer', () => {
    const unlabelled = readsPages([[[a], { limit: 1 }]]);
    const gremlin = { ...unlabelled, steps: unlabelled.steps.map((s) => (s.seq === 1 ? { ...s, fault: 'gremlin' } : s)) } as unknown as History;
    expect(() => check(gremlin)).toThrow(HistoryError);
    const { pageSize: _, ...header } = unlabelled.header;
    expect(() => check({ ...unlabelled, header } as unknown as History)).toThrow(/header\.pageSize: an integer >= 1, missing/);
  });

  it('a page with a quirk is exactly what the quirk makes of the next slice, and the stream goes on from it', () => {
    // A crash after the fetch took effect: the page is recorded, whole, though nobody read it.
    const crashed = timeline({ initial: [a, b, c], pageSize: 3 });
    crashed.start();
    crashed.fetch([a, b, c], { outcome: 'crash-after', fault: 'crash-after' });
    crashed.start();
    const cases: readonly [string, History][] = [
      ['short', readsPages([[[a], { limit: 3, next: 't1', fault: 'short' }], [[b, c], fromT1]])],
      ['overlap', readsPages([first(), [[a, b], { ...fromT1, limit: 1, next: 't2', fault: 'overlap' }], [[c], { resume: { kind: 'token', token: 't2' } }]])],
      ['reorder', readsPages([[[b, a], { limit: 2, next: 't1', fault: 'reorder' }], [[c], fromT1]])],
      ['empty', readsPages([[[], { limit: 3, next: 't0', fault: 'empty' }], [[a, b, c], { resume: { kind: 'token', token: 't0' } }]])],
      ['repeat', readsPages([first(), [[a], { limit: 1, next: 't1', fault: 'repeat' }], [[b, c], fromT1]])],
      ['crash-after', finish(crashed)],
    ];
    for (const [label, history] of cases) expect(problems(history), label).toEqual([]);
  });

  it('a quirk that did not happen as the plan and the source make it is the world contradicting itself', () => {
    expect(problems(readsPages([[[a, b, c], { limit: 3, fault: 'short' }]]))).toEqual(['fetch 1 (short) served [a b c], but a short page from there holds [a]']);
    expect(problems(readsPages([[[a, b, c], { limit: 3, fault: 'reorder' }]]))).toEqual(['fetch 1 (reorder) served [a b c], but a reordered page from there holds [b c a]']);
    expect(problems(readsPages([[[c, b, a], { limit: 3, fault: 'reorder' }]]))).toEqual(['fetch 1 (reorder) served [c b a], but a reordered page from there holds [b c a]']);
    // At the start of the stream there is nothing to overlap with: the plan's overlap does not fire.
    expect(problems(readsPages([[[a], { limit: 1, next: 't1', fault: 'overlap' }], [[b, c], fromT1]]))).toEqual([
      "call 1 (fetch) is labelled overlap, but the plan's overlap had nothing to act on there",
    ]);
    expect(problems(readsPages([[[a], { limit: 3, next: 't1', fault: 'empty' }], [[b, c], fromT1]]))).toEqual([
      'fetch 1 (empty) served [a], but an empty page from there holds []',
      // The token of an empty page resumes where its request did: from the start.
      'fetch 3 served [b c], but from there the eligible stream holds [a b c]',
    ]);
    expect(problems(readsPages([first(), [[b], { ...fromT1, limit: 1, next: 't2', fault: 'repeat' }], [[c], { resume: { kind: 'token', token: 't2' } }]]))).toEqual([
      'fetch 3 (repeat) served [b], but a repeat serves the previous page [a] again',
      // A repeat carries the previous page's token: t2 was never minted.
      'call 5 (fetch) must have failed with stale-token, but the world recorded ok, applied',
      'fetch 5 failed with stale-token, yet recorded a page',
    ]);
  });

  it('an overlap repeats exactly the two eligible events before where the page resumes', () => {
    const d = ev('d', 4);
    const overlapped = (events: readonly ReturnType<typeof ev>[]): History => {
      const t = timeline({ initial: [a, b, c, d], pageSize: 2 });
      t.start();
      t.fetch([a, b], { next: 't1' });
      t.fetch(events, { resume: { kind: 'token', token: 't1' }, limit: 2, fault: 'overlap' });
      return finish(t);
    };
    expect(problems(overlapped([a, b, c, d]))).toEqual([]);
    // One of the repeated events left out: still an overlap by its shape, but not the one the source serves.
    expect(problems(overlapped([b, c, d]))).toEqual(['fetch 2 (overlap) served [b c d], but an overlapping page from there holds [a b c d]']);
  });

  it('a repeat never crosses a change to the source: a repeated page that hides an event inserted since is a contradiction, not an omission', () => {
    const t = timeline({ initial: [a, c], pageSize: 2, contract: { kind: 'none' } });
    t.start();
    t.fetch([a, c], { limit: 2, next: 't1' });
    t.insert(b);
    t.fetch([a, c], { limit: 2, next: 't1', fault: 'repeat', head: 3 });
    expect(problems(finish(t))).toEqual([
      'fetch 1 continued the stream at 2 of 2 eligible events',
      "call 3 (fetch) is labelled repeat, but the plan's repeat had nothing to act on there",
      'fetch 3 served [a c], but from there the eligible stream holds [a b]',
    ]);
  });

  it('a label must be what the plan put there and what fired, and a call fault fires in the adversity phase only', () => {
    const ok = timeline({ initial: [a] });
    ok.start();
    ok.fetch([a]);
    ok.commit([effect(a), complete(a)], { fault: 'crash-before', outcome: 'ok' });
    expect(problems(finish(ok))).toEqual(['call 2 (commit) must have crashed its caller before it ran (crash-before), but the world recorded ok, applied']);

    // A label the plan never put there, and a fault the plan put there that the record leaves out.
    const forged = timeline({ initial: [a] });
    forged.start();
    forged.fetch([a], { label: 'short' });
    forged.commit([effect(a), complete(a)], { outcome: 'crash-after', label: null });
    forged.start();
    expect(problems(finish(forged))).toEqual(['call 1 (fetch) is labelled short, but the plan puts no fault there', "call 2 (commit) is unlabelled, but the plan's crash-after fired there"]);

    const drained = timeline({ initial: [a] });
    drained.start();
    drained.budget();
    drained.drain();
    drained.start();
    drained.fetch([a], { outcome: 'error', fault: 'error' });
    drained.caughtUp();
    expect(problems(drained.build())).toEqual([
      'call 3 (fetch) must have succeeded, but the world recorded error unavailable',
      "call 3 (fetch) is labelled error, but the plan's error does not fire in the drain phase: call faults fire in the adversity phase only",
      'fetch 3 took effect but recorded no page',
    ]);
  });

  it('an indefinite call took effect, and so did a crash-after: the record cannot say otherwise', () => {
    for (const outcome of ['indefinite', 'crash-after'] as const) {
      const t = timeline({ initial: [a] });
      t.start();
      t.fetch([a], { outcome, applied: false });
      if (outcome === 'crash-after') t.start();
      expect(problems(finish(t)), outcome).toEqual([
        outcome === 'indefinite'
          ? 'call 1 (fetch) must have taken effect, its caller hearing only timeout (indefinite), but the world recorded it as not applied'
          : 'call 1 (fetch) must have taken effect, its caller crashing before it heard (crash-after), but the world recorded it as not applied',
      ]);
    }
  });

  it('a page served for a token no page carried, or after the plan made it stale', () => {
    const forged = timeline({ initial: [a] });
    forged.start();
    forged.fetch([a], { resume: { kind: 'token', token: 'forged' } });
    expect(problems(finish(forged))).toEqual(['call 1 (fetch) must have failed with stale-token, but the world recorded ok, applied', 'fetch 1 failed with stale-token, yet recorded a page']);
    expect(problems(readsPages([first(), [[b, c], { ...fromT1, fault: 'stale' }]]))).toEqual([
      'call 3 (fetch) must have failed with stale-token, but the world recorded ok, applied',
      'fetch 3 failed with stale-token, yet recorded a page',
    ]);
    // An expired token is never accepted again.
    const t = timeline({ initial: [a, b], pageSize: 1 });
    t.start();
    t.fetch([a], { next: 't1' });
    t.fetch([], { resume: { kind: 'token', token: 't1' }, outcome: { kind: 'error', code: 'stale-token' }, fault: 'stale' });
    t.fetch([b], { resume: { kind: 'token', token: 't1' } });
    expect(problems(finish(t))).toEqual(['call 3 (fetch) must have failed with stale-token, but the world recorded ok, applied', 'fetch 3 failed with stale-token, yet recorded a page']);
  });

  it('a resume form the source does not offer is refused', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.fetch([a], { resume: { kind: 'offset', offset: 0 } });
    const h = finish(t);
    expect(problems(h)).toEqual([]);
    expect(problems({ ...h, header: { ...h.header, resumes: ['after'] } })).toEqual(['call 1 (fetch) must have failed with bad-request, but the world recorded ok, applied', 'fetch 1 failed with bad-request, yet recorded a page']);
  });

  it('a change the plan does not make is the world contradicting itself', () => {
    const t = timeline({ initial: [a, b, c] });
    t.start();
    t.insert(ev('d', 4));
    const h = finish(t);
    expect(problems(h)).toEqual([]);
    expect(problems({ ...h, header: { ...h.header, mutations: [] } })).toEqual([
      'the source changed 1 times, but the plan makes 0 changes',
      'the source changed (insert) after the last adversity call, but the plan has no change left to make',
    ]);
  });
});

describe('a claim ends its phase', () => {
  /** The history with `step` put right after the step at `after`, the steps after it renumbered. */
  function insertAfter(h: History, after: number, step: Step): History {
    const steps = [...h.steps.slice(0, after + 1), { ...step, seq: after + 1 }, ...h.steps.slice(after + 1).map((s) => ({ ...s, seq: s.seq + 1 }))];
    return { ...h, steps };
  }

  it('a call or a start in the phase after its claim is the world contradicting itself: the claim was judged against a phase that went on', () => {
    const t = timeline({ initial: [a, b] });
    t.start();
    t.fetch([a, b]);
    const emitted = t.emit(a);
    const claim = t.caughtUp();
    t.drain();
    t.start('w1');
    t.emit(b);
    t.caughtUp();
    const h = t.build();
    expect(problems(h)).toEqual([]);
    const emit = h.steps[emitted] as Step;
    expect(problems(insertAfter(h, claim, emit))).toEqual([`w1#1 made a call (emit) after the claim at step ${claim}, which ended the adversity phase`]);
    const start = h.steps[0] as Step;
    expect(problems(insertAfter(h, claim, { ...start, actor: { worker: 'w1', incarnation: 2 } } as Step))).toEqual([`w1#2 was started after the claim at step ${claim}, which ended the adversity phase`]);
  });

  it.each([
    ['mutation', 'late-insert-without-contract', 'the source changed (insert of'],
    ['rebind', 'binding-change-same-store', 'a rebind after the claim'],
    ['observed', 'failed-event-holds-watermark', "a look into w1#1's store after the claim"],
  ] as const)('a %s step in the phase after its claim is the world contradicting itself', async (kind, scenario, told) => {
    const consumer = kind === 'observed' ? blackbox : referenceConsumer();
    const h = (await execute(findScenario(scenario)!.plan, consumer)).history;
    expect(problems(h)).toEqual([]);
    const claim = h.steps.findIndex((s) => s.kind === 'call' && s.call.kind === 'claim');
    const step = h.steps.find((s) => s.kind === kind && s.seq < claim) as Step;
    expect(claim).toBeGreaterThan(0);
    expect(step).toBeDefined();
    const late = problems(insertAfter(h, claim, step));
    expect(late.some((p) => p.startsWith(told) && p.includes(`after the claim at step ${claim}, which ended the adversity phase`))).toBe(true);
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
    expect(problems(ran)).toContainEqual('call 1 (fetch) must have succeeded, but the world recorded crash-before, applied');
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
    expect(problems({ ...h, header: { ...h.header, leaseTtlSteps: 10 } })).toEqual(['call 3 (lease) must have failed with conflict, but the world recorded ok, applied']);
    // Expired by step 3 with a time to live of 1: a new generation, as recorded.
    expect(problems({ ...h, header: { ...h.header, leaseTtlSteps: 1 } })).toEqual([]);
  });

  it('a generation that does not follow from the grants before it', () => {
    const t = timeline({ initial: [a] });
    t.start();
    t.lease(3);
    const h = finish(t);
    expect(problems({ ...h, header: { ...h.header, leaseTtlSteps: 10 } })).toEqual(['lease at step 1 granted generation 3, but the replay grants 1']);
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

  it('an id the source holds twice from the start: the second would silently replace the first', () => {
    const t = timeline({ initial: [a, ev('a', 2), b] });
    t.start();
    expect(problems(finish(t))).toContainEqual("the source's initial events hold a twice");
  });

  it('a new version must follow the one the source held', () => {
    const t = timeline({ initial: [a, b], contract: { kind: 'none' } });
    t.start();
    t.move(ev('a', 5, { version: 3 }));
    expect(problems(finish(t))).toEqual(["the source's move of a@3 does not follow from what it held (version 1)"]);
  });
});
