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
  if (call.kind !== 'commit') return false;
  for (const op of call.ops) if (op.op === 'watermark') return true;
  return false;
}

type Counted = CallKind | 'effect' | 'checkpoint';

/** Every name a call is counted under, each with its slot in the count arrays. */
const COUNTED: readonly Counted[] = ['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'claim', 'malformed', 'effect', 'checkpoint'];
const SLOT = new Map<Counted, number>(COUNTED.map((name, i) => [name, i]));
const EFFECT = SLOT.get('effect') as number;
const CHECKPOINT = SLOT.get('checkpoint') as number;

/** What the counter keeps about one event an address names: per counted name, how many calls were about it. */
interface Tracked {
  readonly about: number[];
  /** The tally (by its stamp) of the last call about it under each name, and its count before that call. */
  readonly stamp: number[];
  readonly before: number[];
  /** The counts as they stood when a fetch first returned it; null until then. */
  delivered: readonly number[] | null;
}

/** One name the last call was counted under: its slot, its index among calls of that name, and its stamp. */
interface Tally {
  slot: number;
  nth: number;
  stamp: number;
  /** Whether the call names events under this name (an emit, a completion check, a commit). */
  aboutEvents: boolean;
}

/**
 * Counts calls per kind and says whether a call is the one an address names. Addresses count
 * per kind rather than by global step so that they stay at the same boundary when shrinking
 * removes others before them. An address tied to an event (`after`) holds still when
 * shrinking removes other events too: it counts only the emits, completion checks and
 * commits about that event, and any other call only from the first fetch that returned it.
 *
 * The counter is told up front every address it will be asked about, and keeps only what
 * they can ask: per-event counts for the events they name, snapshots after the effects they
 * count from. Counting a call then allocates nothing; counting every event of every call,
 * and a snapshot of every count at each event's first delivery, was a twentieth of a
 * world's CPU.
 */
export class CallCounter {
  private readonly total: number[] = COUNTED.map(() => 0);
  /** The events addresses name (`after`), by id. */
  private readonly tracked = new Map<string, Tracked>();
  /** The counts as they stood right after each effect a `since` address names, by its index. */
  private readonly afterEffect = new Map<number, readonly number[]>();
  private readonly sinces: ReadonlySet<number>;
  /** The names the last call was counted under: its kind, and maybe effect and checkpoint. */
  private readonly concrete: Tally = { slot: 0, nth: -1, stamp: 0, aboutEvents: false };
  private readonly effect: Tally = { slot: EFFECT, nth: -1, stamp: 0, aboutEvents: true };
  private readonly checkpoint: Tally = { slot: CHECKPOINT, nth: -1, stamp: 0, aboutEvents: true };
  private kind: CallKind | null = null;
  private isEffect = false;
  private isCheckpoint = false;
  private stamps = 0;

  constructor(addresses: readonly Addressed[]) {
    const sinces = new Set<number>();
    for (const a of addresses) {
      if (a.since !== undefined) sinces.add(a.since);
      if (a.after !== undefined && !this.tracked.has(a.after)) {
        this.tracked.set(a.after, { about: COUNTED.map(() => 0), stamp: COUNTED.map(() => 0), before: COUNTED.map(() => 0), delivered: null });
      }
    }
    this.sinces = sinces;
  }

  /** Counts one call; `names` then answers for it. */
  count(call: Call): void {
    this.kind = call.kind;
    const concrete = SLOT.get(call.kind) as number;
    this.concrete.slot = concrete;
    this.tally(this.concrete, call, 'all');
    // The same call may also be an effect call, or a checkpoint: it counts under those names
    // too, for the events whose effect it carries.
    this.isEffect = isEffectCall(call);
    if (this.isEffect) this.tally(this.effect, call, 'effects');
    this.isCheckpoint = isCheckpoint(call);
    if (this.isCheckpoint) this.tally(this.checkpoint, call, 'all');
    // After the counts of this call, so that a `since` address counts from the call after it.
    if (this.isEffect && this.sinces.size > 0) {
      const index = (this.total[EFFECT] as number) - 1;
      if (this.sinces.has(index)) this.afterEffect.set(index, [...this.total]);
    }
  }

  /** The last call's index among the calls of this name (from 0), or -1 when it was not counted under it. */
  nthAs(name: Counted): number {
    if (name === 'effect') return this.isEffect ? this.effect.nth : -1;
    if (name === 'checkpoint') return this.isCheckpoint ? this.checkpoint.nth : -1;
    return name === this.kind ? this.concrete.nth : -1;
  }

  /** Whether the address names the call counted last. */
  names(a: Addressed): boolean {
    if (a.call === 'effect') return this.isEffect && this.holds(this.effect, a);
    if (a.call === 'checkpoint') return this.isCheckpoint && this.holds(this.checkpoint, a);
    return a.call === this.kind && this.holds(this.concrete, a);
  }

  private holds(t: Tally, a: Addressed): boolean {
    if (a.since !== undefined) {
      const base = this.afterEffect.get(a.since);
      return base !== undefined && a.nth === t.nth - (base[t.slot] as number);
    }
    if (a.after === undefined) return a.nth === t.nth;
    const event = this.tracked.get(a.after);
    if (event === undefined) return false;
    // A call about events counts per event; any other counts from the event's first delivery.
    if (t.aboutEvents) return event.stamp[t.slot] === t.stamp && event.before[t.slot] === a.nth;
    return event.delivered !== null && a.nth === t.nth - (event.delivered[t.slot] as number);
  }

  /** Counts the call under one name: in all, and for each tracked event it is about (once per event). */
  private tally(t: Tally, call: Call, which: 'all' | 'effects'): void {
    const slot = t.slot;
    t.nth = this.total[slot] as number;
    this.total[slot] = t.nth + 1;
    t.stamp = ++this.stamps;
    t.aboutEvents = call.kind === 'emit' || call.kind === 'completed' || call.kind === 'commit';
    if (this.tracked.size === 0 || !t.aboutEvents) return;
    const stamp = t.stamp;
    switch (call.kind) {
      case 'emit':
        this.about(call.event.id, slot, stamp);
        break;
      case 'completed':
        for (const e of call.events) this.about(e.id, slot, stamp);
        break;
      case 'commit':
        for (const op of call.ops) {
          if (which === 'effects') {
            if (op.op === 'effect' || op.op === 'outbox') this.about(op.event.id, slot, stamp);
          } else if ('event' in op) this.about(op.event.id, slot, stamp);
          else if (op.op === 'watermark' && isPosition(op.value)) this.about(op.value.id, slot, stamp);
        }
        break;
    }
  }

  /**
   * One call under one name is about this event: counted once per call, however many of its
   * operations name it. A method, not a closure in tally: a closure there made every call
   * counted allocate its context, tracked events or not.
   */
  private about(id: string, slot: number, stamp: number): void {
    const event = this.tracked.get(id);
    if (event === undefined || event.stamp[slot] === stamp) return;
    event.stamp[slot] = stamp;
    const n = event.about[slot] as number;
    event.before[slot] = n;
    event.about[slot] = n + 1;
  }

  /** A fetch returned these events: later calls count towards addresses tied to them. */
  delivered(events: readonly { readonly id: string }[]): void {
    if (this.tracked.size === 0) return;
    for (const e of events) {
      const event = this.tracked.get(e.id);
      if (event !== undefined && event.delivered === null) event.delivered = [...this.total];
    }
  }
}

/** Whether a call makes an effect durable (see effectsOf), without listing the events. */
function isEffectCall(call: Call): boolean {
  if (call.kind === 'emit') return true;
  if (call.kind !== 'commit') return false;
  for (const op of call.ops) if (op.op === 'effect' || op.op === 'outbox') return true;
  return false;
}

/** A fault of the plan, with its place in the plan's order: the first of those naming a call wins. */
interface Indexed {
  readonly fault: Fault;
  readonly index: number;
}

const NONE: readonly Indexed[] = [];

/**
 * The fault, if any, the plan put at each call boundary. A fault counted from the start of the
 * run is filed by its call's name and count, so that a call finds it by one lookup; the others
 * (tied to an event, or counted from an effect) are filed by name and tested against the
 * counter. The first in the plan's order wins, as it always has.
 */
export class FaultPlan {
  readonly calls: CallCounter;
  private readonly absolute = new Map<Counted, Map<number, Indexed[]>>();
  private readonly relative = new Map<Counted, Indexed[]>();
  private readonly empty: boolean;

  constructor(faults: readonly Fault[]) {
    this.calls = new CallCounter(faults);
    this.empty = faults.length === 0;
    for (const [index, fault] of faults.entries()) {
      const entry = { fault, index };
      if (fault.after === undefined && fault.since === undefined) {
        let byNth = this.absolute.get(fault.call);
        if (byNth === undefined) this.absolute.set(fault.call, (byNth = new Map()));
        const list = byNth.get(fault.nth);
        if (list === undefined) byNth.set(fault.nth, [entry]);
        else list.push(entry);
      } else {
        const list = this.relative.get(fault.call);
        if (list === undefined) this.relative.set(fault.call, [entry]);
        else list.push(entry);
      }
    }
  }

  next(call: Call): Fault | undefined {
    this.calls.count(call);
    if (this.empty) return undefined;
    let found = this.consider(call.kind, undefined);
    found = this.consider('effect', found);
    found = this.consider('checkpoint', found);
    return found?.fault;
  }

  /** The first fault in the plan's order that names the call under this name, if it comes before `found`. */
  private consider(name: Counted, found: Indexed | undefined): Indexed | undefined {
    const nth = this.calls.nthAs(name);
    if (nth < 0) return found;
    for (const candidate of this.absolute.get(name)?.get(nth) ?? NONE) if (found === undefined || candidate.index < found.index) found = candidate;
    for (const candidate of this.relative.get(name) ?? NONE) {
      if (found !== undefined && found.index < candidate.index) break;
      if (this.calls.names(candidate.fault)) return candidate;
    }
    return found;
  }
}
