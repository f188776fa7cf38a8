import type { EventRef } from './event.js';
import { CALL_KINDS, type Call, type StoreOp } from './history.js';
import { isPosition } from './order.js';
import { ADDRESS_ALIASES, type Address, type PlannedFault } from './plan.js';

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
  /** Calls so far, by the slot of their name (see SLOT). */
  private readonly total: number[] = NAMES.map(() => 0);
  /**
   * The addresses by the count that names them, so that a call costs a lookup per name it
   * goes by, not a walk over the plan (a large adverse world has hundreds of faults), and no
   * key is printed on the way: by slot, then by the call's place among all calls of that
   * name. An address counted from a later moment (the first delivery of its event, or an
   * effect) is filed here once that moment comes, at its absolute count.
   */
  private readonly absolute: (Map<number, number[]> | undefined)[] = NAMES.map(() => undefined);
  /**
   * By slot, the smallest count filed in `absolute` (Infinity: none). Counts only grow and
   * every address is filed at a count not reached yet, so a call whose count is not this
   * one is named by no absolute address: most calls cost a comparison here, not a lookup.
   * An address is taken out once its call has come.
   */
  private readonly next: number[] = NAMES.map(() => Number.POSITIVE_INFINITY);
  /** The events `after` addresses name, with the calls so far about each: only they need counting. */
  private readonly tracked = new Map<string, Tracked>();
  /** Addresses waiting for their `since` effect, by its index. */
  private readonly bySince = new Map<number, number[]>();
  /** Every call is stamped, so that one naming an event twice counts once for it. */
  private stamp = 0;
  /** The addresses that name the call counted last, in the order found: the first `foundCount` of them (the array is reused). */
  private readonly found: number[] = [];
  private foundCount = 0;

  constructor(private readonly faults: readonly A[]) {
    for (const [i, f] of faults.entries()) {
      const slot = SLOT.get(f.call) as number;
      if (f.since !== undefined) file(this.bySince, f.since, i);
      else if (f.after === undefined) this.fileAt(slot, f.nth, i);
      else {
        const event = this.track(f.after);
        // A call about events counts among those about this one; any other from its first delivery.
        if (ABOUT_EVENTS.has(f.call)) file((event.addresses[slot] ??= new Map()), f.nth, i);
        else event.waiting.push(i);
      }
    }
  }

  /** Counts one call (not a claim, not a malformed call) and returns the fault the plan put at it. */
  at(call: Call): A | undefined {
    if (!this.count(call)) return undefined;
    let first = this.found[0] as number;
    for (let j = 1; j < this.foundCount; j++) first = Math.min(first, this.found[j] as number);
    return this.faults[first];
  }

  /** Counts one call and returns the indexes of every address that names it, in the plan's order. */
  all(call: Call): readonly number[] {
    if (!this.count(call)) return NO_ADDRESS;
    return this.found.slice(0, this.foundCount).sort((x, y) => x - y);
  }

  /** A fetch that ran returned these events: calls from here on count towards addresses tied to them. */
  delivered(events: readonly { readonly id: string }[]): void {
    if (this.tracked.size === 0) return;
    for (const { id } of events) {
      const event = this.tracked.get(id);
      if (event === undefined || event.delivered) continue;
      event.delivered = true;
      this.fileFromNow(event.waiting);
    }
  }

  private track(id: string): Tracked {
    let event = this.tracked.get(id);
    if (event === undefined) {
      event = { about: NAMES.map(() => 0), stamp: NAMES.map(() => 0), addresses: NAMES.map(() => undefined), waiting: [], delivered: false };
      this.tracked.set(id, event);
    }
    return event;
  }

  /**
   * Counts one call under each of its names: its own kind, `effect` when it makes an effect
   * durable, `checkpoint` when it is a commit that writes the watermark. Collects in `found`
   * the addresses that name it; returns whether there are any.
   */
  private count(call: Call): boolean {
    // A plan without addresses names no call: nothing to count, which keeps a calm history's replay cheap.
    if (this.faults.length === 0) return false;
    this.foundCount = 0;
    const kind = SLOT.get(call.kind) as number;
    this.name(kind, call, false);
    const effect = isEffectCall(call);
    if (effect) this.name(EFFECT, call, true);
    if (isCheckpoint(call)) this.name(CHECKPOINT, call, false);
    // After this call's counts, so that a `since` address counts from the call after it.
    if (effect) {
      const waiting = this.bySince.get((this.total[EFFECT] as number) - 1);
      if (waiting !== undefined) this.fileFromNow(waiting);
    }
    return this.foundCount > 0;
  }

  /** Counts the call under one name, in all and among the calls about each tracked event it names (once per event). */
  private name(slot: number, call: Call, effectsOnly: boolean): void {
    const nth = this.total[slot] as number;
    this.total[slot] = nth + 1;
    if (nth === this.next[slot]) this.take(slot, nth);
    if (this.tracked.size === 0) return;
    const stamp = ++this.stamp;
    // Indexed loops: this runs for every call under each of its names.
    switch (call.kind) {
      case 'emit':
        this.about(call.event.id, slot, stamp);
        break;
      case 'completed':
        for (let i = 0; i < call.events.length; i++) this.about((call.events[i] as EventRef).id, slot, stamp);
        break;
      case 'commit':
        for (let i = 0; i < call.ops.length; i++) {
          const op = call.ops[i] as StoreOp;
          if (effectsOnly) {
            if (op.op === 'effect' || op.op === 'outbox') this.about(op.event.id, slot, stamp);
          } else if (op.op !== 'watermark' && op.op !== 'anchor') this.about(op.event.id, slot, stamp);
          // Asked with `in` only here: an operation of these kinds names no event, unless it carries one as an extra field.
          else if ('event' in op) this.about((op as { readonly event: EventRef }).event.id, slot, stamp);
          else if (op.op === 'watermark' && isPosition(op.value)) this.about(op.value.id, slot, stamp);
        }
        break;
      default:
        break;
    }
  }

  /** Counts the call (stamped `stamp`) among the calls about event `id` under one name, once, if the event is tracked. */
  private about(id: string, slot: number, stamp: number): void {
    const event = this.tracked.get(id);
    if (event === undefined || event.stamp[slot] === stamp) return;
    event.stamp[slot] = stamp;
    const n = event.about[slot] as number;
    event.about[slot] = n + 1;
    const here = event.addresses[slot]?.get(n);
    if (here !== undefined) this.add(here);
  }

  private add(indexes: readonly number[]): void {
    for (const i of indexes) this.found[this.foundCount++] = i;
  }

  /** Files addresses counted from a moment now come, at their absolute counts. */
  private fileFromNow(waiting: readonly number[]): void {
    for (const i of waiting) {
      const f = this.faults[i] as A;
      const slot = SLOT.get(f.call) as number;
      this.fileAt(slot, (this.total[slot] as number) + f.nth, i);
    }
  }

  /** Files address `i` at the `nth` call of a slot's name, a count not reached yet. */
  private fileAt(slot: number, nth: number, i: number): void {
    file((this.absolute[slot] ??= new Map()), nth, i);
    if (nth < (this.next[slot] as number)) this.next[slot] = nth;
  }

  /** The `nth` call of a slot's name has come: the addresses filed there name it, and are taken out. */
  private take(slot: number, nth: number): void {
    const filed = this.absolute[slot] as Map<number, number[]>;
    this.add(filed.get(nth) as number[]);
    filed.delete(nth);
    let next = Number.POSITIVE_INFINITY;
    for (const count of filed.keys()) if (count < next) next = count;
    this.next[slot] = next;
  }
}

/** Every name a call is counted under, each with its slot in the count arrays: the call kinds, then the aliases. */
const NAMES: readonly string[] = [...CALL_KINDS, ...ADDRESS_ALIASES];
const SLOT: ReadonlyMap<string, number> = new Map(NAMES.map((name, i) => [name, i]));
const EFFECT = SLOT.get('effect') as number;
const CHECKPOINT = SLOT.get('checkpoint') as number;

/** The names under which a call is counted among the calls about each event it names. */
const ABOUT_EVENTS: ReadonlySet<string> = new Set(['emit', 'completed', 'commit', 'effect', 'checkpoint']);

const NO_ADDRESS: readonly number[] = Object.freeze([]);

/** What is counted for one event an `after` address names. */
interface Tracked {
  /** Calls about it so far, by slot. */
  readonly about: number[];
  /** The stamp of the last call counted about it, by slot. */
  readonly stamp: number[];
  /** Addresses counted among the calls about it, by slot, then by that count. */
  readonly addresses: (Map<number, number[]> | undefined)[];
  /** Addresses of calls about no event, counted from its first delivery: filed when it comes. */
  readonly waiting: number[];
  delivered: boolean;
}

function file<K>(index: Map<K, number[]>, key: K, i: number): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [i]);
  else list.push(i);
}

/** Whether a call is a checkpoint: a commit that writes the watermark. */
function isCheckpoint(call: Call): boolean {
  if (call.kind !== 'commit') return false;
  for (let i = 0; i < call.ops.length; i++) if ((call.ops[i] as StoreOp).op === 'watermark') return true;
  return false;
}

/** Whether a call makes an event's effect durable: an emit, a commit with an effect or an outbox handoff. */
function isEffectCall(call: Call): boolean {
  if (call.kind === 'emit') return true;
  if (call.kind !== 'commit') return false;
  for (let i = 0; i < call.ops.length; i++) {
    const op = (call.ops[i] as StoreOp).op;
    if (op === 'effect' || op === 'outbox') return true;
  }
  return false;
}
