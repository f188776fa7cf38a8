import type { Call } from './history.js';
import { isPosition } from './order.js';
import type { Address, PlaceableCall, PlannedFault } from './plan.js';

/**
 * Which planned fault, if any, names each call: the addressing rule of a plan (model/plan.ts,
 * `Address`) replayed over the recorded calls, so that ground truth knows where the plan put
 * every fault and page quirk without reading the world's labels.
 *
 * The rule: an address names the `nth` (from 0) call of its kind. A call may go by several
 * names: its own kind, `effect` when it makes an event's effect durable, `checkpoint` when it
 * is a commit that writes the watermark. With `after`, a call that is about events (an emit,
 * a completion check, a commit, by the events it names, a watermark position's included)
 * counts only among the calls about that event; any other call counts from the first fetch
 * that returned the event. With `since`, calls count from the one after the `since`-th effect
 * call. Among the faults that name a call, the plan's first wins.
 *
 * Claims and malformed calls are never counted for faults: no fault can be put at them. The
 * same rule places the plan's changes and its rebind (`all`), where every adversity call the
 * world picked counts, claims included.
 */
export class FaultAddresses<A extends Address = PlannedFault> {
  /** Calls so far, by name. */
  private readonly total = new Map<PlaceableCall, number>();
  /** For each event, calls so far about it, by name. */
  private readonly about = new Map<string, Map<PlaceableCall, number>>();
  /** The totals as they stood when a fetch first returned each event. */
  private readonly firstDelivered = new Map<string, ReadonlyMap<PlaceableCall, number>>();
  /** The totals just after each effect call a `since` address counts from. */
  private readonly afterEffect = new Map<number, ReadonlyMap<PlaceableCall, number>>();
  private readonly sinces: ReadonlySet<number>;
  /**
   * The addresses by what names them, so that a call costs the lookups of its own names and
   * events, not a walk over the whole plan (a large adverse world has hundreds of faults):
   * `name|n`, the n-th call of that name counted from the start; an address counted from a
   * later moment (the first delivery of its event, or an effect) is filed here once that
   * moment comes, at its absolute count; `name|event|n`, the n-th call of that name about
   * that event.
   */
  private readonly absolute = new Map<string, number[]>();
  private readonly aboutEvent = new Map<string, number[]>();
  /** Addresses waiting for their event's first delivery, by event; for their `since` effect, by its index. */
  private readonly byDelivery = new Map<string, number[]>();
  private readonly bySince = new Map<number, number[]>();

  constructor(private readonly faults: readonly A[]) {
    this.sinces = new Set(faults.flatMap((f) => (f.since === undefined ? [] : [f.since])));
    for (const [i, f] of faults.entries()) {
      if (f.since !== undefined) file(this.bySince, f.since, i);
      else if (f.after === undefined) file(this.absolute, `${f.call}|${f.nth}`, i);
      else if (ABOUT_EVENTS.has(f.call)) file(this.aboutEvent, `${f.call}|${f.after}|${f.nth}`, i);
      else file(this.byDelivery, f.after, i);
    }
  }

  /** Counts one call (not a claim, not a malformed call) and returns the fault the plan put at it. */
  at(call: Call): A | undefined {
    const names = this.count(call);
    if (names === null) return undefined;
    const first = this.candidates(names).find((i) => this.named(this.faults[i] as A, names));
    return first === undefined ? undefined : this.faults[first];
  }

  /** Counts one call and returns the indexes of every address that names it, in the plan's order. */
  all(call: Call): number[] {
    const names = this.count(call);
    if (names === null) return [];
    return this.candidates(names).filter((i) => this.named(this.faults[i] as A, names));
  }

  /** The addresses that may name a call of these names, in the plan's order: `named` decides. */
  private candidates(names: readonly Named[]): number[] {
    const out: number[] = [];
    for (const n of names) {
      out.push(...(this.absolute.get(`${n.name}|${n.nth}`) ?? []));
      if (n.about !== null) for (const [id, nth] of n.about) out.push(...(this.aboutEvent.get(`${n.name}|${id}|${nth}`) ?? []));
    }
    if (out.length > 1) {
      out.sort((x, y) => x - y);
      return out.filter((x, i) => i === 0 || out[i - 1] !== x);
    }
    return out;
  }

  /** Counts one call under each of its names; null when the plan has no address to count for. */
  private count(call: Call): Named[] | null {
    // A plan without faults names no call: nothing to count, which keeps a calm history's replay cheap.
    if (this.faults.length === 0) return null;
    const names: Named[] = [this.name(call.kind as PlaceableCall, about(call))];
    const effects = effectIds(call);
    if (effects.length > 0) names.push(this.name('effect', effects));
    if (call.kind === 'commit' && call.ops.some((op) => op.op === 'watermark')) names.push(this.name('checkpoint', about(call)));
    if (effects.length > 0 && this.sinces.size > 0) {
      const index = (this.total.get('effect') ?? 0) - 1;
      if (this.sinces.has(index)) {
        this.afterEffect.set(index, new Map(this.total));
        this.fileFrom(this.bySince.get(index), this.total);
      }
    }
    return names;
  }

  /** Whether the address names the call just counted under these names. */
  private named(f: Address, names: readonly Named[]): boolean {
    const named = names.find((n) => n.name === f.call);
    if (named === undefined) return false;
    if (f.since !== undefined) return countedFrom(this.afterEffect.get(f.since), named, f.nth);
    if (f.after === undefined) return f.nth === named.nth;
    if (named.about !== null) return named.about.get(f.after) === f.nth;
    return countedFrom(this.firstDelivered.get(f.after), named, f.nth);
  }

  /** A fetch that ran returned these events: calls from here on count towards addresses tied to them. */
  delivered(ids: readonly string[]): void {
    if (this.faults.length === 0) return;
    for (const id of ids) {
      if (this.firstDelivered.has(id)) continue;
      const base = new Map(this.total);
      this.firstDelivered.set(id, base);
      this.fileFrom(this.byDelivery.get(id), base);
    }
  }

  /** Files addresses counted from a moment now come, at their absolute counts. */
  private fileFrom(waiting: readonly number[] | undefined, base: ReadonlyMap<PlaceableCall, number>): void {
    if (waiting === undefined) return;
    for (const i of waiting) {
      const f = this.faults[i] as A;
      file(this.absolute, `${f.call}|${(base.get(f.call) ?? 0) + f.nth}`, i);
    }
  }

  /** Counts the call under one name: its place among all calls so named, and among those about each event it names. */
  private name(name: PlaceableCall, ids: readonly string[] | null): Named {
    const nth = this.total.get(name) ?? 0;
    this.total.set(name, nth + 1);
    if (ids === null) return { name, nth, about: null };
    const nths = new Map<string, number>();
    for (const id of ids) {
      if (nths.has(id)) continue;
      let counts = this.about.get(id);
      if (counts === undefined) this.about.set(id, (counts = new Map()));
      const n = counts.get(name) ?? 0;
      nths.set(id, n);
      counts.set(name, n + 1);
    }
    return { name, nth, about: nths };
  }
}

/** The names under which a call is counted among the calls about each event it names (see `about`). */
const ABOUT_EVENTS: ReadonlySet<string> = new Set(['emit', 'completed', 'commit', 'effect', 'checkpoint']);

function file<K>(index: Map<K, number[]>, key: K, i: number): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [i]);
  else list.push(i);
}

interface Named {
  readonly name: PlaceableCall;
  /** The call's place among all calls of this name. */
  readonly nth: number;
  /** Its place among the calls of this name about each event it names; null for a call about no event. */
  readonly about: ReadonlyMap<string, number> | null;
}

/** Whether the call is the `nth` of its name counted from `base` (the totals at some earlier moment). */
function countedFrom(base: ReadonlyMap<PlaceableCall, number> | undefined, named: Named, nth: number): boolean {
  return base !== undefined && nth === named.nth - (base.get(named.name) ?? 0);
}

/** The events a call is about, or null for a call that is about none (a fetch, a load, a lease). */
function about(call: Call): readonly string[] | null {
  switch (call.kind) {
    case 'emit':
      return [call.event.id];
    case 'completed':
      return call.events.map((e) => e.id);
    case 'commit': {
      const ids: string[] = [];
      for (const op of call.ops) {
        if ('event' in op) ids.push(op.event.id);
        else if (op.op === 'watermark' && isPosition(op.value)) ids.push(op.value.id);
      }
      return ids;
    }
    default:
      return null;
  }
}

/** The events whose effect a call makes durable: an emit's, a commit's effects and outbox handoffs. */
function effectIds(call: Call): readonly string[] {
  if (call.kind === 'emit') return [call.event.id];
  if (call.kind !== 'commit') return [];
  const ids: string[] = [];
  for (const op of call.ops) if (op.op === 'effect' || op.op === 'outbox') ids.push(op.event.id);
  return ids;
}
