import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { formatRef } from '../event.js';
import type { Delivery, Step } from '../history.js';
import type { Facts } from '../truth.js';
import type { Checker } from './checker.js';

/**
 * Effects (R2, R4, R5, R10): every effect is for an event version the source served under
 * the binding it was handled for; a repeated effect carries what was served; and a consumer
 * that claims exactly-once makes one effect per event version.
 */
export class EffectChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['phantom-effect', 'divergent-duplicate', 'duplicate-effect'];
  readonly anomalies: Anomaly[] = [];
  private effects = 0;
  private repeats = 0;

  constructor(private readonly delivery: Delivery) {}

  visit(step: Step, facts: Facts): void {
    for (const e of facts.effects) {
      this.effects++;
      if (!e.served) {
        this.anomalies.push(anomaly('phantom-effect', `effect for ${formatRef(e.ref)} at step ${step.seq}, which the source never served under this binding`, [e.ref], [step.seq]));
      }
      if (e.seen === 0) continue;
      this.repeats++;
      if (!e.faithful) {
        this.anomalies.push(anomaly('divergent-duplicate', `repeated effect for ${formatRef(e.ref)} at step ${step.seq} carries content the source never served for it`, [e.ref], [step.seq]));
      }
      if (this.delivery === 'exactly-once') {
        this.anomalies.push(anomaly('duplicate-effect', `effect number ${e.seen + 1} for ${formatRef(e.ref)} at step ${step.seq} from a consumer that claims exactly-once`, [e.ref], [step.seq]));
      }
    }
  }

  finish(): void {}

  untested(kind: AnomalyKind): string | null {
    if (kind === 'duplicate-effect' && this.delivery !== 'exactly-once') return 'the consumer claims at-least-once delivery, so duplicates are allowed';
    if (this.effects === 0) return 'no effect was made';
    if (kind === 'divergent-duplicate' && this.repeats === 0) return 'no event was handled twice';
    return null;
  }
}
