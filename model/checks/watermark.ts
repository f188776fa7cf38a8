import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { compareCuts, covers, formatCut, NOTHING, readCut, type Cut } from '../cut.js';
import { isEligible } from '../binding.js';
import { formatRef, positionOf, refKey, type SourceEvent } from '../event.js';
import type { CallStep, History, Step } from '../history.js';
import { comparePositions, formatPosition } from '../order.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

/** A request resuming by a kept page token: the events it passes over that had no durable outcome then. */
interface Kept {
  readonly passed: readonly SourceEvent[];
}

interface Resumed extends Kept {
  readonly seq: number;
  readonly actor: string;
  readonly token: string;
}

interface Committed {
  readonly cut: Cut;
  readonly seq: number;
}

/**
 * The committed watermark (R3, R6, R8, R10): a point of the bound order, never lower than the
 * highest one committed before under the same binding, and never past an eligible event
 * without a durable outcome. A watermark is judged by the positions it covers (see
 * model/cut.ts), so an event's position, a position between events and a cursor value alone
 * are all watermarks, ordered as points of one total order.
 *
 * A page token kept in durable state and resumed by is judged too (R8): what it passed over
 * that never got a durable outcome was skipped by a token kept as progress (beforeFetch).
 *
 * Premature is judged twice. When a watermark is committed, against the eligible stream of
 * that moment. And at the end of the run, against the final stream: a watermark that passed a
 * hole, a position where the source later put an eligible event (an insert, a move or a flip
 * the contract allows there), passed what the contract did not prove. It is harmless only if
 * the consumer read the event back and gave it a durable outcome before the run ended (as a
 * consumer does that re-reads its replay window); a visible failure afterwards does not
 * excuse it.
 */
export class WatermarkChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['token-as-watermark', 'watermark-regression', 'premature-watermark'];
  readonly anomalies: Anomaly[] = [];
  /** Per binding fingerprint: the highest watermark committed so far, and the latest one. */
  private readonly highest = new Map<string, Committed>();
  private readonly latest = new Map<string, Committed>();
  /** Commits already found premature: the end of the run adds nothing to them. */
  private readonly premature = new Set<number>();
  /** The step at which the source last changed each event id. */
  private readonly changed = new Map<string, number>();
  /** Watermarks committed that claim something: a null claims nothing done, so it exercises nothing. */
  private written = 0;
  private nulls = 0;
  /** Watermarks committed where a higher one stood before, under the same binding: what could have fallen back. */
  private repeated = 0;
  /**
   * Watermarks committed that covered an eligible event, then or by the end of the run: one
   * that lies before the whole stream claims nothing it holds done, so it could pass no event
   * without an outcome (a connector's lookback wider than every world claims that way).
   */
  private covering = 0;
  private hung = false;
  private drained = false;
  /** Page tokens each incarnation got from its own pages. */
  private readonly pageTokens = new Map<string, Set<string>>();
  /** Requests resumed by a page token an incarnation did not get from its own pages. */
  private resumedFromKept = 0;
  /** Those requests that passed over events without an outcome, judged at the end. */
  private readonly resumes: Resumed[] = [];

  visit(step: Step, facts: Facts, truth: Truth): void {
    if (step.kind === 'mutation') this.changed.set(step.event.id, step.seq);
    if (step.kind === 'life' && step.event.kind === 'hung') this.hung = true;
    if (step.phase === 'drain') this.drained = true;
    for (const value of facts.watermarks) {
      // A blackbox store that holds nothing yet for the current binding (state kept per
      // binding, read right after a rebind) has not committed anything.
      if (step.kind === 'observed' && value === null && !this.latest.has(truth.bound)) continue;
      if (value === null) this.nulls++;
      else this.written++;
      const reading = readCut(value, truth.binding.ordering.length);
      if ('notAPoint' in reading) {
        this.anomalies.push(anomaly('token-as-watermark', `step ${step.seq} committed the watermark ${JSON.stringify(value)?.slice(0, 80)}: ${reading.notAPoint}, which is not a point of the bound order`, [], [step.seq]));
        continue;
      }
      const { cut } = reading;
      const top = this.highest.get(truth.bound);
      const order = top === undefined ? 1 : compareCuts(cut, top.cut);
      if (top !== undefined && top.cut !== NOTHING) {
        this.repeated++;
        // R3 says "may never lower it": lower than the highest committed is a regression even
        // when no eligible event lies between the two today. Every position between them is
        // uncovered again, and a source that changes may yet put an event there.
        if (order < 0) {
          const lost = truth.coveredOnlyBy(top.cut, cut);
          const uncovers = lost !== undefined ? `${formatRef(lost)} is no longer covered` : 'no eligible event lies between them now';
          this.anomalies.push(
            anomaly('watermark-regression', `step ${step.seq} committed ${formatCut(cut)}, below ${formatCut(top.cut)} committed at step ${top.seq} (${uncovers})`, [], [top.seq, step.seq]),
          );
        }
      }
      const committed = { cut, seq: step.seq };
      if (order > 0) this.highest.set(truth.bound, committed);
      this.latest.set(truth.bound, committed);
      const first = truth.eligible()[0];
      if (first !== undefined && covers(cut, positionOf(first))) this.covering++;
      const gap = truth.firstWithoutOutcome();
      if (gap !== undefined && covers(cut, positionOf(gap))) {
        this.premature.add(step.seq);
        this.anomalies.push(
          anomaly(
            'premature-watermark',
            `step ${step.seq} committed the watermark ${formatCut(cut)} while ${formatRef(gap)} at ${formatPosition(positionOf(gap))} had no durable outcome`,
            [{ id: gap.id, version: gap.version }],
            [step.seq],
          ),
        );
      }
    }
  }

  /**
   * A request that resumes by a page token its incarnation did not get from a page of its own
   * (R8): the token was kept (a replay anchor, or wherever the consumer keeps it), and
   * resuming by it is a restart. What it passes over without a durable outcome, beyond what
   * the stored watermark covers (that is the watermark's own premature gap), is noted here,
   * before the request is replayed (a scroll's token moves when it serves), and judged once
   * the run is over: an event that never got an outcome was skipped for good by a token kept
   * as progress. One that got it later was held somewhere durable the harness does not see (a
   * blackbox consumer's own inbox, say): no loss. A token an incarnation got from its own
   * page is its traversal going on, even after it reads durable state again (to refresh what
   * its compare-and-set expects, say); one it stored and reads back in the same life is not
   * told apart from that, and a loss through it is told by the checks of what it skipped.
   */
  beforeFetch(step: CallStep, truth: Truth): Kept | null {
    const { resume } = step.call.kind === 'fetch' ? step.call.request : { resume: null };
    if (resume?.kind !== 'token' || this.pageTokens.get(actorKey(step.actor))?.has(resume.token) === true) return null;
    const slot = truth.slot;
    const held = slot !== null && slot.writer === truth.bound ? readCut(slot.value ?? null, truth.binding.ordering.length) : null;
    const cut = held !== null && 'cut' in held ? held.cut : null;
    return { passed: truth.passedOverByToken(resume.token).filter((e) => cut === null || !covers(cut, positionOf(e))) };
  }

  /** A fetch replayed: the tokens an incarnation heard from its own pages, and the kept tokens it resumed by. */
  afterFetch(step: CallStep, facts: Facts, kept: Kept | null): void {
    const { call, result } = step;
    if (step.outcome.kind === 'ok' && result?.kind === 'page' && result.page.next !== null) {
      const who = actorKey(step.actor);
      let tokens = this.pageTokens.get(who);
      if (tokens === undefined) this.pageTokens.set(who, (tokens = new Set()));
      tokens.add(result.page.next);
    }
    if (kept === null || call.kind !== 'fetch' || call.request.resume.kind !== 'token') return;
    this.resumedFromKept++;
    if (kept.passed.length > 0 && facts.applied) this.resumes.push({ seq: step.seq, actor: actorKey(step.actor), token: call.request.resume.token, ...kept });
  }

  /**
   * The hole a watermark passed, found once the run is over: the watermark in the store
   * covers an eligible event that has no durable outcome, though it had none to cover when it
   * was committed. Not judged for a run the consumer never finished (it hung, or there was no
   * drain): it may still have been about to read the event back.
   */
  finish(truth: Truth, history: History): void {
    // A hole covered is an event covered by the end: the source put one where the watermark lay.
    const first = truth.eligible()[0];
    const top = this.highest.get(truth.bound);
    if (this.covering === 0 && first !== undefined && top !== undefined && covers(top.cut, positionOf(first))) this.covering++;
    if (this.hung || !this.drained) return;
    this.keptTokens(truth);
    const held = this.latest.get(truth.bound);
    if (held === undefined || this.premature.has(held.seq)) return;
    const gap = truth.firstWithoutOutcome();
    if (gap === undefined || !covers(held.cut, positionOf(gap))) return;
    const change = this.changed.get(gap.id);
    const how = change !== undefined && change > held.seq ? `the source put ${formatRef(gap)} there at step ${change}` : `${formatRef(gap)} lies there`;
    this.anomalies.push(
      anomaly(
        'premature-watermark',
        `the watermark ${formatCut(held.cut)} committed at step ${held.seq} passed ${formatPosition(positionOf(gap))}, a hole the ${history.header.contract.kind} contract does not prove: ${how}, and it never got a durable outcome`,
        [{ id: gap.id, version: gap.version }],
        change !== undefined && change > held.seq ? [held.seq, change] : [held.seq],
      ),
    );
  }

  /**
   * Events a kept token passed over that never got a durable outcome, the run over: skipped
   * for good. Not those at or after the first poison event left without one: a consumer that
   * stops for an operator there (refusals: fail-visibly) leaves what follows unhandled on
   * purpose, wherever it holds it.
   */
  private keptTokens(truth: Truth): void {
    if (this.resumes.length === 0) return;
    const told = new Set<string>();
    const stop = truth.firstPoisonWithoutOutcome();
    for (const r of this.resumes) {
      const lost = r.passed.find((e) => {
        const now = truth.event(e.id);
        return now !== undefined && now.version === e.version && isEligible(truth.binding, now) && !truth.hasOutcome(e) && (stop === undefined || comparePositions(now, stop) < 0) && !told.has(refKey(e));
      });
      if (lost === undefined) continue;
      told.add(refKey(lost));
      this.anomalies.push(
        anomaly(
          'token-as-watermark',
          `step ${r.seq}: ${r.actor} resumed by the page token ${JSON.stringify(r.token).slice(0, 40)}, which it had kept (it did not get it from a page of its own), and the token passed over ${formatRef(lost)} at ${formatPosition(positionOf(lost))}, which never got a durable outcome: a page token kept as progress skipped it`,
          [{ id: lost.id, version: lost.version }],
          [r.seq],
        ),
      );
    }
  }

  untested(kind: AnomalyKind): string | null {
    if (kind === 'token-as-watermark' && this.written === 0 && this.resumedFromKept > 0) return null;
    if (this.written === 0) return this.nulls === 0 ? 'no watermark was committed' : `every watermark committed (${this.nulls}) was null, which claims nothing done: none could pass an event or fall back`;
    if (kind === 'watermark-regression' && this.repeated === 0) return 'no second watermark was committed under one binding';
    if (kind === 'premature-watermark' && this.covering === 0 && !this.anomalies.some((a) => a.kind === 'premature-watermark')) {
      return 'no watermark committed covered an eligible event (each lay before the whole stream, claiming none of it done): none could pass one without a durable outcome';
    }
    return null;
  }
}
