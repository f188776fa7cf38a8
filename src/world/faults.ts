import type { Call, CallKind } from '../../model/history.js';
import { isPosition } from './order.js';
import type { Fault, Placement } from '../../scenarios/plan.js';

/** What a fault and a placement share: which call they name (a placement never counts `since`). */
type Addressed = Pick<Placement, 'call' | 'nth' | 'after'> & Pick<Fault, 'since'>;

/**
 * The events a call is about: the event it emits, the events it asks about, and for a
 * commit the events its operations name, the watermark's included.
 */
export function eventsOf(call: Call): readonly string[] | null {
  switch (call.kind) {
    case 'emit':
      return [call.event.id];
    case 'completed':
      return call.events.map((e) => e.id);
    case 'commit':
      return call.ops.flatMap((op) => ('event' in op ? [op.event.id] : op.op === 'watermark' && isPosition(op.value) ? [op.value.id] : []));
    default:
      return null;
  }
}

/** The events whose effect a call makes durable, or null when it makes none durable: what an `effect` address counts. */
export function effectsOf(call: Call): readonly string[] | null {
  if (call.kind === 'emit') return [call.event.id];
  if (call.kind !== 'commit') return null;
  const ids = call.ops.flatMap((op) => (op.op === 'effect' || op.op === 'outbox' ? [op.event.id] : []));
  return ids.length === 0 ? null : ids;
}

/** Whether a call is a checkpoint: a commit that writes the watermark (see CheckpointCall). */
export function isCheckpoint(call: Call): boolean {
  return call.kind === 'commit' && call.ops.some((op) => op.op === 'watermark');
}

type Counted = CallKind | 'effect' | 'checkpoint';

/**
 * Counts calls per kind and says whether a call is the one an address names. Addresses count
 * per kind rather than by global step so that they stay at the same boundary when shrinking
 * removes others before them. An address tied to an event (`after`) holds still when
 * shrinking removes other events too: it counts only the emits, completion checks and
 * commits about that event, and any other call only from the first fetch that returned it.
 */
export class CallCounter {
  private readonly total = new Map<Counted, number>();
  /** For each event delivered so far, the counts as they stood when a fetch first returned it. */
  private readonly since = new Map<string, ReadonlyMap<Counted, number>>();
  /** For each event, how many calls of each kind were about it. */
  private readonly about = new Map<string, Map<Counted, number>>();

  /** The counts as they stood right after each effect a `since` address names, by its index. */
  private readonly afterEffect = new Map<number, ReadonlyMap<Counted, number>>();

  /** `sinces`: the effect indices addresses count from (see Fault.since); only those are kept. */
  constructor(private readonly sinces: ReadonlySet<number> = new Set()) {}

  /** Counts one call and returns the test for addresses naming it. */
  count(call: Call): (address: Addressed) => boolean {
    const concrete = this.tally(call.kind, eventsOf(call));
    // The same call may also be an effect call, or a checkpoint: it counts under those names
    // too, for the events whose effect it carries.
    const effects = effectsOf(call);
    const effect = effects === null ? null : this.tally('effect', effects);
    const checkpoint = isCheckpoint(call) ? this.tally('checkpoint', eventsOf(call)) : null;
    // After the counts of this call, so that a `since` address counts from the call after it.
    if (effects !== null && this.sinces.size > 0) {
      const index = (this.total.get('effect') ?? 0) - 1;
      if (this.sinces.has(index)) this.afterEffect.set(index, new Map(this.total));
    }
    return (a) => (a.call === 'effect' ? effect !== null && effect(a) : a.call === 'checkpoint' ? checkpoint !== null && checkpoint(a) : a.call === call.kind && concrete(a));
  }

  private tally(kind: Counted, ids: readonly string[] | null): (address: Addressed) => boolean {
    const nth = this.total.get(kind) ?? 0;
    this.total.set(kind, nth + 1);
    // Each event's count of calls of this kind about it, before this one; only calls about events carry one.
    const nths = ids === null ? null : new Map<string, number>();
    for (const id of new Set(ids)) {
      const counts = this.about.get(id) ?? new Map<Counted, number>();
      const n = counts.get(kind) ?? 0;
      nths?.set(id, n);
      counts.set(kind, n + 1);
      this.about.set(id, counts);
    }
    return (a) => {
      if (a.since !== undefined) {
        const base = this.afterEffect.get(a.since);
        return base !== undefined && a.nth === nth - (base.get(kind) ?? 0);
      }
      if (a.after === undefined) return a.nth === nth;
      if (nths !== null) return nths.get(a.after) === a.nth;
      const base = this.since.get(a.after);
      return base !== undefined && a.nth === nth - (base.get(kind) ?? 0);
    };
  }

  /** A fetch returned these events: later calls count towards addresses tied to them. */
  delivered(ids: readonly string[]): void {
    for (const id of ids) if (!this.since.has(id)) this.since.set(id, new Map(this.total));
  }
}

/** The fault, if any, the plan put at each call boundary. */
export class FaultPlan {
  readonly calls: CallCounter;

  constructor(private readonly faults: readonly Fault[]) {
    this.calls = new CallCounter(new Set(faults.flatMap((f) => (f.since === undefined ? [] : [f.since]))));
  }

  next(call: Call): Fault | undefined {
    return this.faults.find(this.calls.count(call));
  }
}
