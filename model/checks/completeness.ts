import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { formatRef, positionOf, refKey } from '../event.js';
import type { History, Step } from '../history.js';
import { formatPosition } from '../order.js';
import type { Facts, Truth } from '../truth.js';
import { Changes } from './changes.js';
import type { Checker } from './checker.js';

/**
 * Omission (R1, R5-R10): a caught-up claim says every eligible event was handled, and so does
 * the store of each event it marks done. Every claim
 * is judged, against every eligible event the source held unchanged for the claiming
 * incarnation's whole life: it had every chance to see those. An event the source inserted,
 * moved or flipped while the incarnation was alive may have changed after it last looked, so
 * the claim is not held to it; the drain phase's final claim is, because the drain starts new
 * incarnations on a source that holds still from then on (model/checks/liveness.ts says why a
 * final claim that could not be held to it is unknown, not a pass). Handled means an effect
 * (or, for a poison event, a dead letter): an outbox entry never delivered is not handled yet.
 *
 * The store is judged once the run is over, whatever it ended in: a completion record, or an
 * outbox entry taken out as delivered, tells every later reader of the store to skip that
 * event for good, so an eligible event the store marks done but that was never handled is
 * lost, even in a run that ends failing visibly (where no claim is judged), or that a later
 * caught-up claim would not have been held to.
 */
export class CompletenessChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['omission'];
  readonly anomalies: Anomaly[] = [];
  private readonly changes = new Changes();
  private readonly omitted = new Set<string>();
  private judged = 0;
  /** Eligible events the store marked done, judged at the end. */
  private marked = 0;
  /** A blackbox consumer keeps its store to itself: what it marks done is not seen. */
  private blackbox = false;

  visit(step: Step, facts: Facts, truth: Truth): void {
    this.changes.see(step);
    if (step.kind !== 'call' || step.call.kind !== 'claim' || step.call.claim.kind !== 'caught-up' || !facts.applied) return;
    this.judged++;
    for (const e of truth.unhandled()) {
      if (this.changes.changedDuring(step.actor, e.id) !== null) continue;
      const key = refKey(e);
      if (this.omitted.has(key)) continue;
      this.omitted.add(key);
      this.anomalies.push(anomaly('omission', `${formatRef(e)} at ${formatPosition(positionOf(e))} is eligible but was never handled, and the consumer claimed caught-up at step ${step.seq}`, [{ id: e.id, version: e.version }], [step.seq]));
    }
  }

  finish(truth: Truth, history: History): void {
    this.blackbox = history.header.consumer === 'blackbox';
    const end = history.steps.length - 1;
    for (const e of truth.eligible()) {
      if (!truth.markedInStore(e)) continue;
      this.marked++;
      const lost = truth.lostInStore(e);
      const key = refKey(e);
      if (lost === null || this.omitted.has(key)) continue;
      this.omitted.add(key);
      this.anomalies.push(
        anomaly('omission', `${formatRef(e)} at ${formatPosition(positionOf(e))} is eligible but was never handled, and the store marks it done (${lost}): a consumer reading the store skips it for good`, [{ id: e.id, version: e.version }], end >= 0 ? [end] : []),
      );
    }
  }

  untested(): string | null {
    if (this.judged > 0 || this.marked > 0) return null;
    // Said as it is: an inspection shows a blackbox store's effects and watermark, not the
    // completion marks it keeps, so one written before its effect goes unseen without a claim.
    return this.blackbox ? "the consumer never claimed caught-up, and what a blackbox consumer's own store marks done is not seen" : 'the consumer never claimed caught-up, and its store marked no eligible event done';
  }
}
