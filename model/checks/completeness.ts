import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { formatRef, positionOf, refKey } from '../event.js';
import type { Step } from '../history.js';
import { formatPosition } from '../order.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

/**
 * Omission (R1, R5-R10): a caught-up claim says every eligible event was handled. It is
 * judged whenever the source held still for the claiming incarnation's whole life: then
 * "caught up" has one meaning. A claim made while the source was changing under it is judged
 * only by the drain phase's final claim, where the source holds still. Handled means an
 * effect (or, for a poison event, a dead letter): an outbox entry never delivered is not
 * handled yet.
 */
export class CompletenessChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['omission'];
  readonly anomalies: Anomaly[] = [];
  private readonly born = new Map<string, number>();
  private lastMutation = -1;
  private readonly omitted = new Set<string>();
  private judged = 0;

  visit(step: Step, facts: Facts, truth: Truth): void {
    if (step.kind === 'mutation') this.lastMutation = step.seq;
    if (step.kind === 'life' && step.event.kind === 'start') this.born.set(actorKey(step.actor), step.seq);
    if (step.kind !== 'call' || step.call.kind !== 'claim' || step.call.claim.kind !== 'caught-up' || !facts.applied) return;
    if ((this.born.get(actorKey(step.actor)) ?? -1) < this.lastMutation) return;
    this.judged++;
    for (const e of truth.unhandled()) {
      const key = refKey(e);
      if (this.omitted.has(key)) continue;
      this.omitted.add(key);
      this.anomalies.push(anomaly('omission', `${formatRef(e)} at ${formatPosition(positionOf(e))} is eligible but was never handled, and the consumer claimed caught-up at step ${step.seq}`, [{ id: e.id, version: e.version }], [step.seq]));
    }
  }

  finish(): void {}

  untested(): string | null {
    return this.judged === 0 ? 'the consumer never claimed caught-up while the source held still' : null;
  }
}
