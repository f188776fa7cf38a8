import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import type { Step } from '../history.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

/**
 * Competing workers (R6): a watermark write takes effect only from the newest lease
 * generation, unless a compare-and-set on the value it read guarded it. The generation a worker holds is the one it heard granted; the newest is the
 * one ground truth replayed, whether or not its holder ever heard.
 */
export class GenerationChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['stale-generation-commit'];
  readonly anomalies: Anomaly[] = [];
  private contested = 0;

  visit(step: Step, facts: Facts, truth: Truth): void {
    if ((step.kind !== 'call' && step.kind !== 'observed') || facts.watermarks.length === 0) return;
    // A compare-and-set that held is a guard of its own (R6: "a compare-and-set, a lease
    // generation, or an ownership epoch"): it applied only because nobody had moved the
    // watermark since it was read, so the writer's lapsed lease overwrote nothing newer.
    const guarded = step.kind === 'call' && step.call.kind === 'commit' && step.call.ops.every((op) => op.op !== 'watermark' || 'expect' in op);
    for (const value of facts.watermarks) {
      if (step.kind === 'observed' && value === null) continue;
      if (truth.generation >= 2) this.contested++;
      const held = truth.generationOf(step.actor);
      if (held < truth.generation && !guarded) {
        this.anomalies.push(
          anomaly('stale-generation-commit', `step ${step.seq} committed a watermark from ${actorKey(step.actor)}, generation ${held}, after generation ${truth.generation} was granted`, [], [step.seq]),
        );
      }
    }
  }

  finish(): void {}

  untested(): string | null {
    return this.contested === 0 && this.anomalies.length === 0 ? 'no watermark was written after a second lease generation was granted' : null;
  }
}
