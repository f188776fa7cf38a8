/**
 * The oracle on hand-written histories of the adversity the world adds on top of plain
 * crashes: a rebind to another binding on the same store, durable outbox handoffs, mutable
 * records (move and flip), divergent duplicates per version, and how a verdict with several
 * kinds of anomaly is ordered.
 */
import { describe, expect, it } from 'vitest';
import { ANOMALIES, ANOMALY_KINDS, type Anomaly, type AnomalyKind } from '../../model/anomalies.js';
import { fingerprint, type Binding } from '../../model/binding.js';
import { check, type Verdict } from '../../model/checker.js';
import type { SourceEvent } from '../../model/event.js';
import type { StoreOp } from '../../model/history.js';
import type { Position } from '../../model/order.js';
import { ALL, at, complete, effect, ev, outbox, outboxDone, ref, timeline, watermark, type Timeline } from './histories.js';

function verdictOf(t: Timeline): Verdict {
  return check(t.build()).verdict;
}

/** The anomalies of a failing run, after checking each carries its kind's rules. */
function anomaliesOf(t: Timeline): readonly Anomaly[] {
  const verdict = verdictOf(t);
  expect(verdict.status).toBe('fail');
  for (const a of verdict.anomalies) expect(a.rules).toEqual(ANOMALIES[a.kind].rules);
  return verdict.anomalies;
}

/** Kind, witness events (as refs) and witness steps of each anomaly, in verdict order. */
function summary(t: Timeline): { kind: AnomalyKind; events: string[]; steps: readonly number[] }[] {
  return anomaliesOf(t).map((a) => ({ kind: a.kind, events: a.events.map((e) => `${e.id}@${e.version}`), steps: a.steps }));
}

function passes(t: Timeline): void {
  expect(verdictOf(t)).toEqual({ status: 'pass', anomalies: [] });
}

/** A watermark op with an explicit binding label, where the builder's default would not say what the test means. */
function labelled(binding: Binding, value: Position): StoreOp {
  return { op: 'watermark', binding: fingerprint(binding), value };
}

const ORDERS: Binding = { scope: 'orders', filter: { kind: 'equals', attr: 'kind', value: 'order' }, ordering: ['seq'], upTo: null };
const REFUNDS: Binding = { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'refund' } };
const BOTH: Binding = { ...ORDERS, filter: { kind: 'in', attr: 'kind', values: ['order', 'refund'] } };

const order = { kind: 'order' };
const refund = { kind: 'refund' };
const o1 = ev('o1', 1, { attrs: order });
const r2 = ev('r2', 2, { attrs: refund });
const o3 = ev('o3', 3, { attrs: order });
const r4 = ev('r4', 4, { attrs: refund });
const r6 = ev('r6', 6, { attrs: refund });

// A plain log for the binding-free tests.
const a = ev('a', 1);
const b = ev('b', 2);
const c = ev('c', 3);
const d = ev('d', 4);

/** The ORDERS worker handles o1 and o3; its watermark for o3 carries `label`. Then the stream is rebound to REFUNDS. */
function ordersThenRefunds(label: Binding, initial: readonly SourceEvent[] = [o1, r2, o3, r4]): Timeline {
  const t = timeline({ initial, binding: ORDERS });
  t.start();
  t.load();
  t.fetch([o1, o3]);
  t.handle(o1);
  t.commit([effect(o3), complete(o3), labelled(label, at(o3))]);
  t.rebind(REFUNDS);
  return t;
}

describe('binding-confusion', () => {
  it.each([
    ['labelled with its own binding', ORDERS],
    // A consumer that stores the wrong label (or none that means anything) must not hide the
    // confusion: the checker knows from ground truth which binding's worker wrote the slot.
    ['mislabelled with the new binding', REFUNDS],
  ])('R2 binding-confusion: a REFUNDS worker resumes after the ORDERS watermark (%s) and commits past r2', (_, label) => {
    const t = ordersThenRefunds(label);
    t.start();
    // The reply shows the label as stored, so a consumer checking it would be fooled too.
    const load = t.loadState({ watermark: { binding: fingerprint(label), value: at(o3) }, anchor: null, outbox: [] });
    t.fetch([r4], { resume: { kind: 'after', position: at(o3) } });
    const commit = t.handle(r4);
    t.budget();
    t.drain();
    t.start();
    t.fetch([r2, r4]);
    t.commit([effect(r2), complete(r2)]);
    t.caughtUp();
    // The most specific diagnosis leads: the foreign watermark, then the symptom.
    expect(summary(t)).toEqual([
      { kind: 'binding-confusion', events: ['r2@1'], steps: [load, commit] },
      { kind: 'premature-watermark', events: ['r2@1'], steps: [commit] },
    ]);
    const [confusion] = anomaliesOf(t);
    expect(confusion?.explanation).toContain('3#o3');
    expect(confusion?.explanation).toContain(`step ${load}`);
  });

  it('R2 binding-confusion: the skipped event is never handled, so the omission at the claim is blamed on the same load', () => {
    const t = ordersThenRefunds(ORDERS);
    t.start();
    const load = t.load(at(o3));
    t.fetch([r4], { resume: { kind: 'after', position: at(o3) } });
    const commit = t.handle(r4);
    t.budget();
    t.drain();
    t.start();
    t.load(at(r4));
    t.fetch([], { resume: { kind: 'after', position: at(r4) } });
    const claim = t.caughtUp();
    expect(summary(t)).toEqual([
      { kind: 'binding-confusion', events: ['r2@1'], steps: [load, commit] },
      { kind: 'binding-confusion', events: ['r2@1'], steps: [load, claim] },
      { kind: 'premature-watermark', events: ['r2@1'], steps: [commit] },
      { kind: 'omission', events: ['r2@1'], steps: [claim] },
    ]);
  });

  it('R2 binding-confusion near miss: the REFUNDS worker loads the foreign watermark, ignores it and starts over', () => {
    const t = ordersThenRefunds(ORDERS);
    t.start();
    t.load(at(o3));
    t.fetch([r2, r4]);
    t.handle(r2);
    t.handle(r4);
    t.budget();
    t.drain();
    t.start();
    t.load(at(r4));
    t.fetch([], { resume: { kind: 'after', position: at(r4) } });
    t.caughtUp();
    passes(t);
  });

  it('R2 binding-confusion near miss: a foreign watermark loaded and ignored is not blamed for the consumer`s own premature checkpoint', () => {
    // The REFUNDS worker loads the ORDERS watermark (o3), ignores it: it fetches from the
    // start and handles p2, behind o3. Then it checkpoints past r2 by a mistake of its own.
    // r2 lies behind o3 too, but the foreign watermark was not used: the real cause leads.
    const p2 = ev('p', 2, { attrs: { kind: 'refund' } });
    const t = ordersThenRefunds(ORDERS, [o1, p2, r2, o3, r4]);
    t.start();
    t.load(at(o3));
    t.fetch([p2, r2, r4]);
    t.handle(p2);
    const premature = t.commit([effect(r4), complete(r4), watermark(at(r4))]);
    t.budget();
    t.drain();
    t.start();
    t.load(at(r4));
    t.fetch([], { resume: { kind: 'after', position: at(r4) } });
    const claim = t.caughtUp();
    expect(summary(t)).toEqual([
      { kind: 'premature-watermark', events: ['r2@1'], steps: [premature] },
      { kind: 'omission', events: ['r2@1'], steps: [claim] },
    ]);
  });

  it('R2 binding-confusion near miss: events skipped through their completion records are deduplicated, not skipped behind the foreign watermark', () => {
    // The REFUNDS worker loads the ORDERS watermark (o3), ignores it, fetches from the start
    // and asks the completion records about r2: r2 was marked complete by an earlier life
    // whose effect was lost, so it skips r2. Its own mistake, not the foreign watermark.
    const t = ordersThenRefunds(ORDERS);
    t.start();
    t.fetch([r2, r4]);
    t.commit([complete(r2)], { outcome: 'crash-after' }); // a completion record before its effect, then a crash
    t.start();
    t.load(at(o3));
    t.fetch([r2, r4]);
    t.completed([r2, r4], [true, false]);
    t.handle(r4);
    t.budget();
    t.drain();
    t.start();
    t.load(at(r4));
    t.fetch([], { resume: { kind: 'after', position: at(r4) } });
    t.caughtUp();
    expect(summary(t).map((a) => a.kind)).toEqual(['premature-watermark', 'omission']);
  });

  it('R2 binding-confusion near miss: a watermark its own binding wrote (whatever its label) is no foreign progress', () => {
    // The REFUNDS worker starts over without loading and commits a premature watermark of its
    // own; the builder labels it with the header's (ORDERS) fingerprint. Its next incarnation
    // loads it and commits past r2 again: premature twice, but never binding-confusion.
    const t = ordersThenRefunds(ORDERS, [o1, r2, o3, r4, r6]);
    t.start();
    t.fetch([r2, r4], { next: 'p1' });
    const first = t.commit([effect(r4), complete(r4), watermark(at(r4))], { outcome: 'crash-after' });
    t.start();
    t.loadState({ watermark: { binding: fingerprint(ORDERS), value: at(r4) }, anchor: null, outbox: [] });
    t.fetch([r6], { resume: { kind: 'after', position: at(r4) } });
    const second = t.handle(r6);
    t.budget();
    t.drain();
    t.start();
    t.fetch([r2, r4, r6]);
    t.commit([effect(r2), complete(r2)]);
    t.caughtUp();
    expect(summary(t)).toEqual([
      { kind: 'premature-watermark', events: ['r2@1'], steps: [first] },
      { kind: 'premature-watermark', events: ['r2@1'], steps: [second] },
    ]);
  });
});

describe('outbox', () => {
  it('R5 R6 premature near miss: an outbox handoff is a durable outcome, for a watermark in the same or a later transaction', () => {
    const t = timeline({ initial: [a, b, c] });
    t.start();
    t.fetch([a, b, c]);
    t.commit([outbox(a), complete(a), watermark(at(a))]);
    t.commit([outbox(b), complete(b)]);
    t.commit([outbox(c), complete(c)]);
    t.commit([watermark(at(c))]);
    t.emit(a);
    t.emit(b);
    t.emit(c);
    t.commit([outboxDone(a), outboxDone(b), outboxDone(c)]);
    t.budget();
    t.drain();
    t.start();
    t.load(at(c));
    t.fetch([], { resume: { kind: 'after', position: at(c) } });
    t.caughtUp();
    passes(t);
  });

  it('R5 R6 premature-watermark: an outbox handoff that never applied is no outcome', () => {
    const t = timeline({ initial: [a, b] });
    t.start();
    t.fetch([a, b]);
    t.commit([outbox(a), complete(a), watermark(at(a))]);
    t.commit([outbox(b), complete(b)], { outcome: 'crash-before' });
    t.start();
    const bad = t.commit([watermark(at(b))]);
    t.emit(a);
    t.budget();
    t.drain();
    t.start();
    t.emit(b);
    t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'premature-watermark', events: ['b@1'], steps: [bad] }]);
  });

  it('R5 omission: an outbox entry never delivered is no effect when the consumer claims it is caught up', () => {
    const t = timeline({ initial: [a, b] });
    t.start();
    t.fetch([a, b]);
    t.commit([outbox(a), outbox(b), complete(a), complete(b), watermark(at(b))]);
    t.emit(a);
    t.commit([outboxDone(a)]);
    t.budget();
    t.drain();
    t.start();
    t.loadState({ watermark: { binding: fingerprint(ALL), value: at(b) }, anchor: null, outbox: [{ event: ref(b), payload: b.payload }] });
    t.fetch([], { resume: { kind: 'after', position: at(b) } });
    const claim = t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'omission', events: ['b@1'], steps: [claim] }]);
  });

  it('R5 omission: a change after a claim judged clean is the world contradicting itself, and does not hide what it put behind the claim', () => {
    // The completeness check starts each claim where everything before is handled; a
    // mutation behind that point must move it back, or the later claim would skip b and a@2.
    // The world never changes the source after a claim (it ends the phase), so such a history
    // is an error; the omissions are still found, for whoever reads the results.
    const c = ev('c', 3);
    const t = timeline({ initial: [a, c], contract: { kind: 'none' } });
    t.start();
    t.fetch([a, c]);
    t.commit([effect(a), effect(c), watermark(at(c))]);
    t.caughtUp();
    const late = ev('b', 2);
    t.insert(late);
    t.flip({ ...a, version: 2 });
    t.drain();
    t.start();
    const claim = t.caughtUp();
    const result = check(t.build());
    expect(result.verdict.status).toBe('error');
    expect((result.verdict as { reason: string }).reason).toMatch(/the source changed \(insert of b\) after the claim at step \d+, which ended the adversity phase/);
    const omission = result.results.omission;
    expect(omission.status).toBe('fail');
    expect(omission.status === 'fail' ? omission.anomalies.map((x) => ({ events: x.events.map((e) => `${e.id}@${e.version}`), steps: x.steps })) : []).toEqual([
      { events: ['a@2'], steps: [claim] },
      { events: ['b@1'], steps: [claim] },
    ]);
  });

  it('R5 omission near miss: a transactional effect needs no outbox', () => {
    const t = timeline({ initial: [a, b] });
    t.start();
    t.fetch([a, b]);
    t.commit([outbox(a), complete(a)]);
    t.commit([effect(b), complete(b), watermark(at(b))]);
    t.emit(a);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    passes(t);
  });

  it('R2 phantom near miss: an outbox entry handed off under the old binding is delivered after the rebind', () => {
    const t = timeline({ initial: [o1, r2, o3], binding: BOTH });
    t.start();
    t.fetch([o1, r2, o3]);
    t.commit([outbox(o1), outbox(r2), outbox(o3), complete(o1), complete(r2), complete(o3), watermark(at(o3))]);
    t.emit(o1);
    t.rebind(ORDERS);
    t.start();
    t.loadState({
      watermark: { binding: fingerprint(BOTH), value: at(o3) },
      anchor: null,
      outbox: [o1, r2, o3].map((e) => ({ event: { id: e.id, version: e.version }, payload: e.payload })),
    });
    // r2 is no longer eligible and ORDERS never served it: its delivery acts for BOTH.
    t.emit(r2);
    t.emit(o3);
    t.commit([outboxDone(o1), outboxDone(r2), outboxDone(o3)]);
    t.budget();
    t.drain();
    t.start();
    t.fetch([o1, o3]);
    t.caughtUp();
    passes(t);
  });

  it('R2 phantom-effect: the same delivery after the rebind without an outbox handoff', () => {
    const t = timeline({ initial: [o1, r2, o3], binding: BOTH });
    t.start();
    t.fetch([o1, r2, o3]);
    t.commit([outbox(o1), outbox(o3), complete(o1), complete(o3)]);
    t.rebind(ORDERS);
    t.start();
    const bad = t.emit(r2);
    t.emit(o1);
    t.emit(o3);
    t.budget();
    t.drain();
    t.start();
    t.fetch([o1, o3]);
    t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'phantom-effect', events: ['r2@1'], steps: [bad] }]);
  });
});

describe('a rebind changes eligibility', () => {
  /** ORDERS handles o1 and o3, then the stream is rebound to BOTH, where r2 becomes eligible. */
  function widened(): Timeline {
    const t = timeline({ initial: [o1, r2, o3], binding: ORDERS });
    t.start();
    t.fetch([o1, o3]);
    t.handle(o1);
    t.handle(o3);
    t.rebind(BOTH);
    return t;
  }

  it('R2 omission: an event eligible only under the new binding must be handled after the rebind', () => {
    const t = widened();
    t.start();
    t.fetch([o1, r2, o3]);
    t.completed([o1, r2, o3], [true, false, true]);
    t.budget();
    t.drain();
    t.start();
    const claim = t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'omission', events: ['r2@1'], steps: [claim] }]);
  });

  it('R2 omission near miss: the new binding handles r2 after the rebind', () => {
    const t = widened();
    t.start();
    t.fetch([o1, r2, o3]);
    t.completed([o1, r2, o3], [true, false, true]);
    t.commit([effect(r2), complete(r2)]);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    passes(t);
  });

  it('R2 R3 regression near miss: a watermark below the old binding\'s last one is the first of the new binding', () => {
    const t = widened();
    t.start();
    t.fetch([o1, r2, o3]);
    t.handle(r2); // 2#r2, below 3#o3 that ORDERS committed
    t.handle(o3);
    t.budget();
    t.drain();
    t.start();
    t.load(at(o3));
    t.fetch([], { resume: { kind: 'after', position: at(o3) } });
    t.caughtUp();
    passes(t);
  });

  it('R3 watermark-regression: within the new binding, a lower commit after a higher one', () => {
    const t = widened();
    t.start();
    t.fetch([o1, r2, o3]);
    t.handle(r2);
    const high = t.handle(o3);
    const low = t.commit([watermark(at(r2))]);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'watermark-regression', events: [], steps: [high, low] }]);
  });
});

describe('mutable records: move and flip', () => {
  it('R10 omission near miss: a moved event needs only its new version delivered', () => {
    const a2 = ev('a', 4, { version: 2 });
    const t = timeline({ initial: [a, b, c], contract: { kind: 'none' } });
    t.start();
    t.move(a2); // before anything was read: a@1 is gone from the stream
    t.fetch([b, c, a2]);
    t.handle(b); // were a@1 still owed, this watermark would pass it
    t.handle(c);
    t.handle(a2);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    passes(t);
  });

  it('R6 R10 omission: a moved event whose new version was never delivered, though the old one was', () => {
    const a2 = ev('a', 4, { version: 2 });
    const t = timeline({ initial: [a, b, c], contract: { kind: 'none' } });
    t.start();
    t.fetch([a, b, c]);
    t.handle(a);
    t.handle(b);
    t.handle(c);
    t.move(a2);
    t.budget();
    t.drain();
    t.start();
    t.fetch([a2], { resume: { kind: 'after', position: at(c) } });
    const claim = t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'omission', events: ['a@2'], steps: [claim] }]);
  });

  it('R6 R10 premature-watermark: a flip in place behind the watermark owes the new version before the watermark moves on', () => {
    const b2 = ev('b', 2, { version: 2, attrs: { colour: 'blue' } });
    const t = timeline({ initial: [a, b, c, d], contract: { kind: 'none' } });
    t.start();
    t.fetch([a, b, c], { next: 't1' });
    t.handle(a);
    t.handle(b);
    t.handle(c);
    t.flip(b2); // same position 2#b, new version
    t.fetch([d], { resume: { kind: 'after', position: at(c) } });
    const bad = t.handle(d);
    t.budget();
    t.drain();
    t.start();
    t.fetch([a, b2, c, d]);
    t.commit([effect(b2), complete(b2)]);
    t.caughtUp();
    expect(summary(t)).toEqual([{ kind: 'premature-watermark', events: ['b@2'], steps: [bad] }]);
  });

  it('R2 R10 omission: a flip into the filter makes the new version eligible and owed', () => {
    const r2in = ev('r2', 2, { version: 2, attrs: order });
    const t = timeline({ initial: [o1, r2, o3], binding: ORDERS, contract: { kind: 'none' } });
    t.start();
    t.fetch([o1, o3]);
    t.handle(o1);
    const handled = t.handle(o3);
    const flipped = t.flip(r2in);
    t.budget();
    t.drain();
    t.start();
    t.load(at(o3));
    t.fetch([], { resume: { kind: 'after', position: at(o3) } });
    const claim = t.caughtUp();
    // The watermark at o3 passed 2#r2, a hole the 'none' contract does not prove: the cause first.
    expect(summary(t)).toEqual([
      { kind: 'premature-watermark', events: ['r2@2'], steps: [handled, flipped] },
      { kind: 'omission', events: ['r2@2'], steps: [claim] },
    ]);
  });

  it('R2 R10 omission near miss: the flipped-in version is read back from the window and handled', () => {
    const r2in = ev('r2', 2, { version: 2, attrs: order });
    const t = timeline({ initial: [o1, r2, o3], binding: ORDERS, contract: { kind: 'none' } });
    t.start();
    t.fetch([o1, o3]);
    t.handle(o1);
    t.handle(o3);
    t.flip(r2in);
    t.budget();
    t.drain();
    t.start();
    t.fetch([o1, r2in, o3]);
    t.commit([effect(r2in), complete(r2in)]);
    t.caughtUp();
    passes(t);
  });
});

describe('divergent-duplicate per event version', () => {
  const e1 = ev('e', 1, { payload: 'e:v1' });
  const e2 = ev('e', 5, { version: 2, payload: 'e:v2' });

  /** e@1 is handled, e is moved to e@2, e@2 is handled with crash-after, and replayed with `replayed`. */
  function replay(replayed: string): { t: Timeline; replay: number } {
    const t = timeline({ initial: [e1], contract: { kind: 'none' } });
    t.start();
    t.fetch([e1]);
    t.handle(e1);
    t.move(e2);
    t.fetch([e2], { resume: { kind: 'after', position: at(e1) } });
    t.commit([effect(e2), complete(e2), watermark(at(e2))], { outcome: 'crash-after' });
    t.start();
    t.fetch([e2], { resume: { kind: 'after', position: at(e1) } });
    const seq = t.commit([effect(e2, replayed), complete(e2), watermark(at(e2))]);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    return { t, replay: seq };
  }

  it("R4 divergent-duplicate: a repeated effect for e@2 carrying e@1's payload", () => {
    const { t, replay: seq } = replay(e1.payload);
    expect(summary(t)).toEqual([{ kind: 'divergent-duplicate', events: ['e@2'], steps: [seq] }]);
  });

  it("R4 divergent near miss: the repeated effect for e@2 carries e@2's payload", () => {
    passes(replay(e2.payload).t);
  });

  it("R4 divergent near miss: a late replay of e@1 with e@1's payload after e@2 superseded it", () => {
    const t = timeline({ initial: [e1], contract: { kind: 'none' } });
    t.start();
    t.fetch([e1]);
    t.commit([effect(e1), complete(e1)], { outcome: 'crash-after' });
    t.start();
    t.move(e2);
    t.commit([effect(e1), complete(e1), watermark(at(e1))]);
    t.fetch([e2], { resume: { kind: 'after', position: at(e1) } });
    t.handle(e2);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    passes(t);
  });
});

describe('anomaly order', () => {
  it('a verdict lists kinds in the order of ANOMALY_KINDS, earliest evidence first within a kind', () => {
    const t = timeline({ initial: [a, b, c, d] });
    t.start();
    t.fetch([a, b, c], { next: 't1' });
    const premature1 = t.commit([effect(b), complete(b), watermark(at(b))]); // a has no outcome
    const regression = t.commit([effect(a), complete(a), watermark(at(a))]); // below 2#b
    const phantom = t.emit(d); // d was never served
    const token = t.commit([watermark('q8Zx1c')]);
    const premature2 = t.commit([watermark(at(c))]); // c has no outcome
    t.budget();
    t.drain();
    t.start();
    const claim = t.caughtUp();
    const found = summary(t);
    expect(found).toEqual([
      { kind: 'token-as-watermark', events: [], steps: [token] },
      { kind: 'watermark-regression', events: [], steps: [premature1, regression] },
      { kind: 'premature-watermark', events: ['a@1'], steps: [premature1] },
      { kind: 'premature-watermark', events: ['c@1'], steps: [premature2] },
      { kind: 'phantom-effect', events: ['d@1'], steps: [phantom] },
      { kind: 'omission', events: ['c@1'], steps: [claim] },
    ]);
    // Found in history order, they were: premature, regression, phantom, token, premature, omission.
    const ranks = found.map((x) => ANOMALY_KINDS.indexOf(x.kind));
    expect(ranks).toEqual([...ranks].sort((x, y) => x - y));
  });

  it('duplicates under exactly-once: divergent-duplicate is told before duplicate-effect, each in step order', () => {
    const t = timeline({ initial: [a, b], delivery: 'exactly-once' });
    t.start();
    t.fetch([a, b]);
    t.emit(a);
    t.emit(b);
    const dupA = t.emit(a); // same content: duplicate only
    const divB = t.emit(b, { payload: 'b, rewritten' }); // new content: divergent and duplicate
    t.commit([complete(a), complete(b), watermark(at(b))]);
    t.budget();
    t.drain();
    t.start();
    t.caughtUp();
    expect(summary(t)).toEqual([
      { kind: 'divergent-duplicate', events: ['b@1'], steps: [divB] },
      { kind: 'duplicate-effect', events: ['a@1'], steps: [dupA] },
      { kind: 'duplicate-effect', events: ['b@1'], steps: [divB] },
    ]);
  });
});
