import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { compareCuts, covers, formatCut, readCut, type Cut } from '../cut.js';
import { formatRef, positionOf } from '../event.js';
import type { Step } from '../history.js';
import { formatPosition } from '../order.js';
import type { Facts, Truth } from '../truth.js';
import type { Checker } from './checker.js';

/**
 * The committed watermark (R3, R6, R8): a point of the bound order, never lower than before
 * under the same binding, and never past an eligible event without a durable outcome. A
 * watermark is judged by the positions it covers (see model/cut.ts), so an event's position,
 * a position between events and a cursor value alone are all watermarks.
 */
export class WatermarkChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['token-as-watermark', 'watermark-regression', 'premature-watermark'];
  readonly anomalies: Anomaly[] = [];
  private readonly last = new Map<string, { readonly cut: Cut; readonly seq: number }>();
  private written = 0;
  private repeated = 0;

  visit(step: Step, facts: Facts, truth: Truth): void {
    for (const value of facts.watermarks) {
      // A blackbox store that holds nothing yet for the current binding (state kept per
      // binding, read right after a rebind) has not committed anything.
      if (step.kind === 'observed' && value === null && !this.last.has(truth.bound)) continue;
      this.written++;
      const reading = readCut(value, truth.binding.ordering.length);
      if ('notAPoint' in reading) {
        this.anomalies.push(anomaly('token-as-watermark', `step ${step.seq} committed the watermark ${JSON.stringify(value)?.slice(0, 80)}: ${reading.notAPoint}, which is not a point of the bound order`, [], [step.seq]));
        continue;
      }
      const { cut } = reading;
      const previous = this.last.get(truth.bound);
      if (previous !== undefined) {
        this.repeated++;
        const lost = compareCuts(cut, previous.cut) < 0 ? truth.coveredOnlyBy(previous.cut, cut) : undefined;
        if (lost !== undefined) {
          this.anomalies.push(
            anomaly('watermark-regression', `step ${step.seq} committed ${formatCut(cut)}, below ${formatCut(previous.cut)} committed at step ${previous.seq} (${formatRef(lost)} is no longer covered)`, [], [previous.seq, step.seq]),
          );
        }
      }
      this.last.set(truth.bound, { cut, seq: step.seq });
      const gap = truth.firstWithoutOutcome();
      if (gap !== undefined && covers(cut, positionOf(gap))) {
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

  finish(): void {}

  untested(kind: AnomalyKind): string | null {
    if (this.written === 0) return 'no watermark was committed';
    if (kind === 'watermark-regression' && this.repeated === 0) return 'no second watermark was committed under one binding';
    return null;
  }
}
