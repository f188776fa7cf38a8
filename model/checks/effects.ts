import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { formatRef, refKey, type EventRef } from '../event.js';
import type { Delivery, Step } from '../history.js';
import type { Facts } from '../truth.js';
import type { Checker } from './checker.js';

/** The first effect made for one event version: what every repeat must carry again. */
interface First {
  readonly payload: string;
  readonly seq: number;
}

/**
 * Effects (R2, R4, R5, R10): every effect is for an event version the source served under
 * the binding it was handled for; every effect, the first one too, carries the content the
 * source served for that version, and a repeat carries what the first effect did; and a
 * consumer that claims exactly-once makes one effect per event version.
 */
export class EffectChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['phantom-effect', 'divergent-duplicate', 'duplicate-effect'];
  readonly anomalies: Anomaly[] = [];
  private effects = 0;
  /** Effects whose content could be compared with a served version (a phantom has none to compare with). */
  private judged = 0;
  /**
   * The first effect of each version 1 by id, and of each later version by `id@version`:
   * nearly every effect is for a version 1, and its lookup builds no string.
   */
  private readonly firstOfV1 = new Map<string, First>();
  private readonly firstOfLater = new Map<string, First>();

  constructor(private readonly delivery: Delivery) {}

  visit(step: Step, facts: Facts): void {
    for (const e of facts.effects) {
      this.effects++;
      const first = this.first(e.ref, e.seen === 0 ? { payload: e.payload, seq: step.seq } : null);
      if (!e.served) {
        this.anomalies.push(anomaly('phantom-effect', `effect for ${formatRef(e.ref)} at step ${step.seq}, which the source never served under this binding`, [e.ref], [step.seq]));
      } else {
        this.judged++;
        if (!e.faithful) {
          const which = e.seen === 0 ? 'the first effect' : 'a repeated effect';
          this.anomalies.push(anomaly('divergent-duplicate', `${which} for ${formatRef(e.ref)} at step ${step.seq} carries content the source never served for it`, [e.ref], [step.seq]));
        } else if (first !== undefined && e.seen > 0 && e.payload !== first.payload) {
          this.anomalies.push(
            anomaly('divergent-duplicate', `a repeated effect for ${formatRef(e.ref)} at step ${step.seq} differs from the first effect for it, at step ${first.seq}`, [e.ref], [first.seq, step.seq]),
          );
        }
      }
      if (e.seen > 0 && this.delivery === 'exactly-once') {
        this.anomalies.push(anomaly('duplicate-effect', `effect number ${e.seen + 1} for ${formatRef(e.ref)} at step ${step.seq} from a consumer that claims exactly-once`, [e.ref], [step.seq]));
      }
    }
  }

  /** The first effect for a version; `made` records it when this effect is that first one. */
  private first(ref: EventRef, made: First | null): First | undefined {
    const map = ref.version === 1 ? this.firstOfV1 : this.firstOfLater;
    const key = ref.version === 1 ? ref.id : refKey(ref);
    if (made === null) return map.get(key);
    map.set(key, made);
    return made;
  }

  finish(): void {}

  untested(kind: AnomalyKind): string | null {
    if (kind === 'duplicate-effect' && this.delivery !== 'exactly-once') return 'the consumer claims at-least-once delivery, so duplicates are allowed';
    if (this.effects === 0) return 'no effect was made';
    if (kind === 'divergent-duplicate' && this.judged === 0) return 'no effect was made for an event version the source served';
    return null;
  }
}
