import type { CallKind } from '../../model/history.js';
import type { Fault } from '../../scenarios/plan.js';

/**
 * Counts calls per kind through the adversity phase and says which fault, if any, the
 * plan put at this call boundary. Faults are addressed by (kind, nth) rather than by a
 * global step number so that a fault stays at the same boundary when shrinking removes
 * others before it.
 */
export class FaultPlan {
  private readonly counts = new Map<CallKind, number>();

  constructor(private readonly faults: readonly Fault[]) {}

  next(kind: CallKind): Fault | undefined {
    const nth = this.counts.get(kind) ?? 0;
    this.counts.set(kind, nth + 1);
    return this.faults.find((f) => f.call === kind && f.nth === nth);
  }
}
