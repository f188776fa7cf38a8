import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { formatRef, refKey, type EventRef } from '../event.js';
import type { Delivery, Step } from '../history.js';
import type { EffectFact, Facts } from '../truth.js';
import type { Checker } from './checker.js';

/** The first effect made for one event version: what every repeat must carry again. */
interface First {
  /** Its content: the payload, and the key when the effect carries one. */
  readonly content: string;
  readonly seq: number;
}

/** An effect's content, as a repeat must carry it again: its payload, and its key when it carries one. */
function contentOf(e: EffectFact): string {
  return e.key === undefined ? e.payload : `${e.payload}\u0000${JSON.stringify(e.key)}`;
}

/** Whether the effect carries the key the source served its version at (an effect without a key is judged by its payload alone). */
function placed(e: EffectFact): boolean {
  if (e.key === undefined) return true;
  const at = e.servedAt;
  return e.key !== null && at !== undefined && e.key.length === at.length && e.key.every((k, i) => k === at[i]);
}

function formatKey(key: readonly number[]): string {
  return `[${key.join(', ')}]`;
}

/**
 * Effects (R2, R4, R5, R10): every effect is for an event version the source served under
 * the binding it was handled for; every effect, the first one too, carries the content the
 * source served for that version (its payload, and its key when the effect carries one, as a
 * connector's record carries its cursor value), and a repeat carries what the first effect
 * did; and a consumer that claims exactly-once makes one effect per event version.
 */
export class EffectChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['phantom-effect', 'divergent-duplicate', 'duplicate-effect'];
  readonly anomalies: Anomaly[] = [];
  private effects = 0;
  /** Effects whose content could be compared with a served version (a phantom has none to compare with). */
  private judged = 0;
  /**
   * The first effect of a version, kept only where it did not carry the content the source
   * served (or the version was not served at all). A version is served with one content
   * only: a page showing other content than the source holds for that version is a harness
   * error. So a first effect that carried what was served, and a repeat that does too, are
   * the same; only a first effect kept here can differ from a faithful repeat. Keeping every
   * first effect cost a tenth of the checker's time at a million steps. Version 1 is found
   * by id, a later version by `id@version`: nearly every effect is for a version 1.
   */
  private readonly strayOfV1 = new Map<string, First>();
  private readonly strayOfLater = new Map<string, First>();

  constructor(private readonly delivery: Delivery) {}

  visit(step: Step, facts: Facts): void {
    for (const e of facts.effects) {
      this.effects++;
      let stray: First | undefined;
      const where = placed(e);
      if (e.seen === 0 && !(e.served && e.faithful && where)) stray = this.stray(e.ref, { content: contentOf(e), seq: step.seq });
      else if (e.seen > 0 && this.strayOfV1.size + this.strayOfLater.size > 0) stray = this.stray(e.ref, null);
      if (!e.served) {
        this.anomalies.push(anomaly('phantom-effect', `effect for ${formatRef(e.ref)} at step ${step.seq}, which the source never served under this binding`, [e.ref], [step.seq]));
      } else {
        this.judged++;
        const which = e.seen === 0 ? 'the first effect' : 'a repeated effect';
        if (!e.faithful) {
          this.anomalies.push(anomaly('divergent-duplicate', `${which} for ${formatRef(e.ref)} at step ${step.seq} carries content the source never served for it`, [e.ref], [step.seq]));
        } else if (!where) {
          const carries = e.key === null || e.key === undefined ? 'carries no key' : `carries the key ${formatKey(e.key)}`;
          const served = e.servedAt === undefined ? '' : `, but the source served it at ${formatKey(e.servedAt)}`;
          this.anomalies.push(anomaly('divergent-duplicate', `${which} for ${formatRef(e.ref)} at step ${step.seq} ${carries}${served}`, [e.ref], [step.seq]));
        } else if (e.seen > 0 && stray !== undefined && contentOf(e) !== stray.content) {
          this.anomalies.push(
            anomaly('divergent-duplicate', `a repeated effect for ${formatRef(e.ref)} at step ${step.seq} differs from the first effect for it, at step ${stray.seq}`, [e.ref], [stray.seq, step.seq]),
          );
        }
      }
      if (e.seen > 0 && this.delivery === 'exactly-once') {
        this.anomalies.push(anomaly('duplicate-effect', `effect number ${e.seen + 1} for ${formatRef(e.ref)} at step ${step.seq} from a consumer that claims exactly-once`, [e.ref], [step.seq]));
      }
    }
  }

  /** The first effect for a version, if it was kept; `made` keeps it. */
  private stray(ref: EventRef, made: First | null): First | undefined {
    const map = ref.version === 1 ? this.strayOfV1 : this.strayOfLater;
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
