import { CALL_KINDS, type Call } from './history.js';
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
      else if (f.after === undefined) file((this.absolute[slot] ??= new Map()), f.nth, i);
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
  delivered(ids: readonly string[]): void {
    if (this.tracked.size === 0) return;
    for (const id of ids) {
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
    const named = this.absolute[slot]?.get(nth);
    if (named !== undefined) this.add(named);
    if (this.tracked.size === 0) return;
    const stamp = ++this.stamp;
    const about = (id: string): void => {
      const event = this.tracked.get(id);
      if (event === undefined || event.stamp[slot] === stamp) return;
      event.stamp[slot] = stamp;
      const n = event.about[slot] as number;
      event.about[slot] = n + 1;
      const here = event.addresses[slot]?.get(n);
      if (here !== undefined) this.add(here);
    };
    switch (call.kind) {
      case 'emit':
        about(call.event.id);
        break;
      case 'completed':
        for (const e of call.events) about(e.id);
        break;
      case 'commit':
        for (const op of call.ops) {
          if (effectsOnly) {
            if (op.op === 'effect' || op.op === 'outbox') about(op.event.id);
          } else if ('event' in op) about(op.event.id);
          else if (op.op === 'watermark' && isPosition(op.value)) about(op.value.id);
        }
        break;
      default:
        break;
    }
  }

  private add(indexes: readonly number[]): void {
    for (const i of indexes) this.found[this.foundCount++] = i;
  }

  /** Files addresses counted from a moment now come, at their absolute counts. */
  private fileFromNow(waiting: readonly number[]): void {
    for (const i of waiting) {
      const f = this.faults[i] as A;
      const slot = SLOT.get(f.call) as number;
      file((this.absolute[slot] ??= new Map()), (this.total[slot] as number) + f.nth, i);
    }
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
  for (const op of call.ops) if (op.op === 'watermark') return true;
  return false;
}

/** Whether a call makes an event's effect durable: an emit, a commit with an effect or an outbox handoff. */
function isEffectCall(call: Call): boolean {
  if (call.kind === 'emit') return true;
  if (call.kind !== 'commit') return false;
  for (const op of call.ops) if (op.op === 'effect' || op.op === 'outbox') return true;
  return false;
}
