import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import type { Step } from '../history.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

/**
 * Competing workers (R6): a watermark write takes effect only from the newest lease
 * generation. The generation a worker holds is the one it heard granted; the newest is the
 * one ground truth replayed, whether or not its holder ever heard.
 */
export class GenerationChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['stale-generation-commit'];
  readonly anomalies: Anomaly[] = [];
  private contested = 0;

  visit(step: Step, facts: Facts, truth: Truth): void {
    if (step.kind !== 'call' && step.kind !== 'observed') return;
    for (const value of facts.watermarks) {
      if (step.kind === 'observed' && value === null) continue;
      if (truth.generation >= 2) this.contested++;
      const held = truth.generationOf(step.actor);
      if (held < truth.generation) {
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
