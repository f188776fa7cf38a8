import type { CallKind } from '../../model/history.js';
import type { Fault, Placement } from '../../scenarios/plan.js';

/** What a fault and a placement share: which call they name. */
type Addressed = Pick<Placement, 'call' | 'nth' | 'after'>;

/**
 * Counts calls per kind, from the start of the run and from the first delivery of each
 * event, and says whether a call is the one an address names. Addresses count per kind
 * rather than by global step so that they stay at the same boundary when shrinking removes
 * others before them; an address tied to an event (`after`) also stays put when shrinking
 * removes the events before that one.
 */
export class CallCounter {
  private readonly total = new Map<CallKind, number>();
  /** For each event delivered so far, the counts as they stood when a fetch first returned it. */
  private readonly since = new Map<string, ReadonlyMap<CallKind, number>>();

  /** Counts one call of this kind and returns the test for addresses naming it. */
  count(kind: CallKind): (address: Addressed) => boolean {
    const nth = this.total.get(kind) ?? 0;
    this.total.set(kind, nth + 1);
    return (a) => {
      if (a.call !== kind) return false;
      if (a.after === undefined) return a.nth === nth;
      const base = this.since.get(a.after);
      return base !== undefined && a.nth === nth - (base.get(kind) ?? 0);
    };
  }

  /** A fetch returned these events: calls after it count towards addresses tied to them. */
  delivered(ids: readonly string[]): void {
    for (const id of ids) if (!this.since.has(id)) this.since.set(id, new Map(this.total));
  }
}

/** The fault, if any, the plan put at each call boundary. */
export class FaultPlan {
  readonly calls = new CallCounter();

  constructor(private readonly faults: readonly Fault[]) {}

  next(kind: CallKind): Fault | undefined {
    const here = this.calls.count(kind);
    return this.faults.find(here);
  }
}
