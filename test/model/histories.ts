/**
 * A small builder for hand-written histories, so that a model test reads like a timeline:
 *
 *   const t = timeline({ initial: [a, b, c] });
 *   t.start();                       // w1#1 is born (adversity phase)
 *   t.fetch([a, b, c]);
 *   t.handle(a);                     // effect + completion + watermark(a), one transaction
 *   const bad = t.handle(c);         // every step method returns its seq
 *   t.budget();                      // the adversity budget runs out
 *   t.drain();
 *   t.start();                       // w1#2
 *   t.caughtUp();
 *   check(t.build());
 *
 * Steps get `seq` equal to their index, the current phase and the current actor; `as(w)`
 * turns to another live worker. The builder refuses a call without a live incarnation (after
 * a crash or a claim you must `start()` again), so a test cannot accidentally record a step a
 * real world never would.
 */
import { fingerprint, type Binding } from '../../model/binding.js';
import type { AttrValue, EventRef, SourceEvent } from '../../model/event.js';
import {
  HISTORY_VERSION,
  type Actor,
  type Call,
  type CallResult,
  type CallStep,
  type Contract,
  type Delivery,
  type DurableState,
  type FaultLabel,
  type History,
  type HistoryHeader,
  type LifeStep,
  type MutationStep,
  type Outcome,
  type Phase,
  type Resume,
  type Step,
  type StoreOp,
} from '../../model/history.js';
import type { Position } from '../../model/order.js';
import type { PlannedFault, PlannedMutation } from '../../model/plan.js';

// ---------------------------------------------------------------------------------------------
// Events and positions

export interface EventSpec {
  readonly version?: number;
  readonly attrs?: Readonly<Record<string, AttrValue>>;
  /** Defaults to `${id}@${version}`. */
  readonly payload?: string;
}

/** One event version: `ev('b', 2)` is event b, version 1, ordering key [2]. */
export function ev(id: string, key: number | readonly number[], spec: EventSpec = {}): SourceEvent {
  const version = spec.version ?? 1;
  return {
    id,
    version,
    key: typeof key === 'number' ? [key] : [...key],
    attrs: spec.attrs ?? {},
    payload: spec.payload ?? `${id}@${version}`,
  };
}

/** The event's position in the stable order: its key tuple, then its id. */
export function at(e: SourceEvent): Position {
  return { key: e.key, id: e.id };
}

export function ref(e: SourceEvent): EventRef {
  return { id: e.id, version: e.version };
}

/** The default binding: every event of scope `orders`, ordered by `seq`, live (no snapshot bound). */
export const ALL: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['seq'], upTo: null };

// ---------------------------------------------------------------------------------------------
// Store operations. Watermark and anchor ops are written with an empty binding and recorded
// under the timeline's binding fingerprint by `commit`.

export function effect(e: SourceEvent, payload: string = e.payload): StoreOp {
  return { op: 'effect', event: ref(e), payload };
}

export function complete(e: SourceEvent): StoreOp {
  return { op: 'complete', event: ref(e) };
}

export function unlessCompleted(e: SourceEvent): StoreOp {
  return { op: 'unless-completed', event: ref(e) };
}

/** A blind watermark write, or a compare-and-set when `expect` is given. */
export function watermark(value: unknown, ...expect: [] | [unknown]): StoreOp {
  return expect.length === 0
    ? { op: 'watermark', binding: '', value }
    : { op: 'watermark', binding: '', value, expect: expect[0] };
}

export function anchor(token: string | null, tiedTo: unknown): StoreOp {
  return { op: 'anchor', binding: '', token, watermark: tiedTo };
}

/** A durable outbox handoff of an external effect (R5). */
export function outbox(e: SourceEvent, payload: string = e.payload): StoreOp {
  return { op: 'outbox', event: ref(e), payload };
}

/** The outbox entry was delivered to the sink and can be dropped. */
export function outboxDone(e: SourceEvent): StoreOp {
  return { op: 'outbox-done', event: ref(e) };
}

// ---------------------------------------------------------------------------------------------
// Outcomes

/** An outcome kind as shorthand (`'crash-after'`) or in full. */
export type OutcomeSpec = Outcome['kind'] | Outcome;

export interface CallOptions {
  readonly outcome?: OutcomeSpec;
  /**
   * Ground truth: whether the call took effect. Defaults from the outcome (ok, crash-after and
   * indefinite took effect; error and crash-before did not).
   */
  readonly applied?: boolean;
  /**
   * The fault or page quirk the plan put at this call, which the world records as fired. By
   * default, the call fault the outcome implies (crash-before, crash-after, `error`
   * unavailable, a timeout for an indefinite outcome). The header's plan is built from these.
   */
  readonly fault?: FaultLabel;
  /** The label the world records, when it is not the planned fault (null: none): a world's lie. */
  readonly label?: FaultLabel | null;
}

function outcomeOf(spec: OutcomeSpec): Outcome {
  if (typeof spec !== 'string') return spec;
  switch (spec) {
    case 'ok':
      return { kind: 'ok' };
    case 'error':
      return { kind: 'error', code: 'unavailable' };
    case 'indefinite':
      return { kind: 'indefinite', code: 'timeout' };
    case 'crash-before':
      return { kind: 'crash-before' };
    case 'crash-after':
      return { kind: 'crash-after' };
  }
}

function appliedOf(outcome: Outcome, applied: boolean | undefined): boolean {
  if (applied !== undefined) return applied;
  switch (outcome.kind) {
    case 'ok':
    case 'crash-after':
    case 'indefinite':
      return true;
    case 'error':
    case 'crash-before':
      return false;
  }
}

/** The call fault a world would have put at a call to make it end so: none for an ordinary ending. */
function faultOf(outcome: Outcome): FaultLabel | undefined {
  switch (outcome.kind) {
    case 'crash-before':
    case 'crash-after':
      return outcome.kind;
    case 'indefinite':
      return 'timeout';
    case 'error':
      return outcome.code === 'unavailable' ? 'error' : undefined;
    case 'ok':
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The timeline

export interface TimelineSpec {
  readonly initial?: readonly SourceEvent[];
  readonly binding?: Binding;
  /** Defaults to insertion-stable. */
  readonly contract?: Contract;
  /** Defaults to at-least-once. */
  readonly delivery?: Delivery;
  /** Ids of poison events; defaults to none. */
  readonly poison?: readonly string[];
  /**
   * The most events a page carries; defaults to PAGE_SIZE. Ground truth holds every page to
   * it: a page with no quirk is exactly the next slice of the eligible stream.
   */
  readonly pageSize?: number;
  /** The lease's time to live in steps; defaults to LEASE_TTL. Ground truth replays every grant with it. */
  readonly leaseTtlSteps?: number;
  /** A blackbox consumer keeps its own store: its writes are `observed` steps, not commits. */
  readonly consumer?: 'whitebox' | 'blackbox';
}

/** The default page size: more than any hand-written stream holds, so one page from the start serves it all. */
export const PAGE_SIZE = 100;
/**
 * The default lease time to live: one step, so that a worker takes the lease over whenever a
 * test has it lease (a renewal by the holder keeps its generation). A test of a lease still
 * held gives a longer one.
 */
export const LEASE_TTL = 1;

export interface FetchOptions extends CallOptions {
  readonly resume?: Resume;
  /**
   * The request's limit. By default, the page's own length when the page continues (the
   * consumer asked for that many and got them) and PAGE_SIZE when it ends the stream.
   */
  readonly limit?: number;
  /** The page's continuation token; null (the default) marks the end of the bound stream. */
  readonly next?: string | null;
  /** The source's head; defaults to the largest first ordering field the source has held so far. */
  readonly head?: number | null;
}

export function timeline(spec: TimelineSpec = {}): Timeline {
  return new Timeline(spec);
}

export class Timeline {
  readonly header: HistoryHeader;
  /** The header, as the builder fills in the plan while the steps are written. */
  private readonly plan: { -readonly [K in keyof HistoryHeader]: HistoryHeader[K] };
  /** The binding fingerprint the watermark and anchor ops are recorded under. */
  readonly bound: string;
  private readonly steps: Step[] = [];
  private phase: Phase = 'adversity';
  /** The worker whose calls are being recorded. */
  private worker: string | null = null;
  /** Each worker's newest incarnation, and whether it is alive. */
  private readonly lives = new Map<string, { actor: Actor; alive: boolean }>();
  private head: number | null = null;

  /** The plan the header carries, written as the steps are: each fault at its call, each change before the next call. */
  private readonly faults: PlannedFault[] = [];
  private readonly mutations: PlannedMutation[] = [];
  private readonly calls = new Map<string, number>();
  /** Adversity calls so far by kind, claims included: where the plan's changes and rebind are placed. */
  private readonly placed = new Map<string, number>();
  /** Changes recorded since the last adversity call: the plan puts them before the next one. */
  private unplaced: MutationStep['mutation'][] = [];

  constructor(spec: TimelineSpec) {
    this.header = this.plan = {
      version: HISTORY_VERSION,
      rebind: null,
      workers: 1,
      consumer: spec.consumer ?? 'whitebox',
      resumes: ['after', 'key-gt', 'key-gte', 'offset'],
      faults: this.faults,
      mutations: this.mutations,
      initial: spec.initial ?? [],
      binding: spec.binding ?? ALL,
      contract: spec.contract ?? { kind: 'insertion-stable' },
      delivery: spec.delivery ?? 'at-least-once',
      poison: spec.poison ?? [],
      pageSize: spec.pageSize ?? PAGE_SIZE,
      leaseTtlSteps: spec.leaseTtlSteps ?? LEASE_TTL,
    };
    this.bound = fingerprint(this.header.binding);
    for (const e of this.header.initial) this.grow(e);
  }

  /** The seq of the most recent step. */
  get lastSeq(): number {
    return this.steps.length - 1;
  }

  /** The adversity phase is over: faults and mutations off, one live worker from here on. */
  drain(): void {
    if ([...this.lives.values()].some((l) => l.alive)) throw new Error('end the adversity incarnations first (budget(), a claim or a crash)');
    this.placeTrailing();
    this.phase = 'drain';
  }

  // Life steps ---------------------------------------------------------------------------------

  /** A new incarnation of `worker` (default: the current worker, else w1) is born and acts next. */
  start(worker: string = this.worker ?? 'w1'): number {
    const incarnation = (this.lives.get(worker)?.actor.incarnation ?? 0) + 1;
    const index = /^w(\d+)$/.exec(worker);
    if (this.phase === 'adversity' && index !== null) this.plan.workers = Math.max(this.plan.workers, Number(index[1]));
    this.lives.set(worker, { actor: { worker, incarnation }, alive: true });
    this.worker = worker;
    return this.life({ kind: 'start' });
  }

  /** The scheduler turns to another live worker: the following steps are its calls. */
  as(worker: string): void {
    if (!(this.lives.get(worker)?.alive ?? false)) throw new Error(`${worker} has no live incarnation`);
    this.worker = worker;
  }

  /** The phase's step budget ran out while this incarnation was alive. */
  budget(): number {
    return this.end({ kind: 'budget' });
  }

  /** The consumer stopped calling the world and never returned. */
  hung(): number {
    return this.end({ kind: 'hung' });
  }

  threw(message: string): number {
    return this.end({ kind: 'threw', message });
  }

  returned(): number {
    return this.end({ kind: 'returned' });
  }

  // Calls --------------------------------------------------------------------------------------

  /** A page request; the page is recorded as the caller's reply when the outcome is ok. */
  fetch(events: readonly SourceEvent[], options: FetchOptions = {}): number {
    const page = { events: [...events], next: options.next ?? null, head: options.head === undefined ? this.head : options.head };
    const limit = options.limit ?? (page.next !== null && events.length > 0 ? events.length : this.header.pageSize);
    const request = { resume: options.resume ?? { kind: 'start' }, limit };
    return this.call({ kind: 'fetch', request }, options, { kind: 'page', page });
  }

  /** Loads durable state; `value` is the durable watermark the reply shows (null: none). */
  load(value: unknown = null, options: CallOptions = {}): number {
    const state = { watermark: value === null ? null : { binding: this.bound, value }, anchor: null, outbox: [] };
    return this.call({ kind: 'load' }, options, { kind: 'state', state });
  }

  /** Loads durable state whose reply the test spells out in full: another binding's label, an anchor, outbox entries. */
  loadState(state: DurableState, options: CallOptions = {}): number {
    return this.call({ kind: 'load' }, options, { kind: 'state', state });
  }

  /** Asks the store which events carry completion records. */
  completed(events: readonly SourceEvent[], flags: readonly boolean[], options: CallOptions = {}): number {
    return this.call({ kind: 'completed', events: events.map(ref) }, options, { kind: 'flags', flags: [...flags] });
  }

  /** One transaction of store ops, applied whole or not at all. */
  commit(ops: readonly StoreOp[], options: CallOptions & { readonly fence?: number | null } = {}): number {
    const bound = ops.map((op): StoreOp => (op.op === 'watermark' || op.op === 'anchor') && op.binding === '' ? { ...op, binding: this.bound } : op);
    return this.call({ kind: 'commit', ops: bound, fence: options.fence ?? null }, options);
  }

  /** The reference handling of one event: effect, completion and watermark in one transaction. */
  handle(e: SourceEvent, options: CallOptions = {}): number {
    return this.commit([effect(e), complete(e), watermark(at(e))], options);
  }

  /** An external, non-transactional effect on the sink. */
  /** An effect to the sink; `key`, an effect that carries a key too (a connector's record, its cursor value). */
  emit(e: SourceEvent, options: CallOptions & { readonly payload?: string; readonly key?: readonly number[] | null; readonly as?: EventRef } = {}): number {
    const call: Call = { kind: 'emit', event: options.as ?? ref(e), payload: options.payload ?? e.payload, ...(options.key === undefined ? {} : { key: options.key }) };
    return this.call(call, options);
  }

  lease(generation: number, options: CallOptions = {}): number {
    return this.call({ kind: 'lease' }, options, { kind: 'generation', generation });
  }

  /** What a blackbox consumer's own store shows after the current worker's call: its watermark, when it changed, and its new effects. */
  observed(watermark: unknown, effects: readonly SourceEvent[] = []): number {
    const actor = this.live();
    return this.push({ kind: 'observed', seq: this.steps.length, phase: this.phase, actor, watermark: watermark === undefined ? undefined : { value: watermark }, effects: effects.map((e) => ({ event: ref(e), payload: e.payload })) });
  }

  /** The consumer claims it is caught up; the phase ends. */
  caughtUp(): number {
    const seq = this.call({ kind: 'claim', claim: { kind: 'caught-up' } }, {});
    this.endAll();
    return seq;
  }

  /** The consumer fails visibly; the phase ends. */
  failed(reason: string): number {
    const seq = this.call({ kind: 'claim', claim: { kind: 'failed', reason } }, {});
    this.endAll();
    return seq;
  }

  // Mutations ----------------------------------------------------------------------------------

  /** The world inserts a new event into the source (ground truth). */
  insert(e: SourceEvent): number {
    return this.mutate(e, 'insert');
  }

  /** The world replaces an event with a new version at a new position (mutable records). */
  move(e: SourceEvent): number {
    return this.mutate(e, 'move');
  }

  /** The world replaces an event with a new version whose attributes differ (filter membership). */
  flip(e: SourceEvent): number {
    return this.mutate(e, 'flip');
  }

  // Rebinding ----------------------------------------------------------------------------------

  /**
   * The world stops every worker (recording no life step, as the world does) and the consumer
   * restarts under `binding` on the same store; call `start()` for the new incarnations.
   * Watermark and anchor ops written with an empty binding are still labelled with the
   * header's fingerprint: the checker must judge who wrote them from ground truth, not from
   * the label, and tests may pass an explicit label to say otherwise.
   */
  rebind(binding: Binding, before: Call = { kind: 'load' }): number {
    this.endAll();
    // The plan puts the rebind before the call it preempts, which never runs (`before`).
    this.plan.rebind = { before: this.place(before), binding };
    return this.push({ kind: 'rebind', seq: this.steps.length, phase: this.phase, binding, call: before });
  }

  build(): History {
    if (this.phase === 'adversity') this.placeTrailing();
    return { header: this.header, steps: [...this.steps] };
  }

  /**
   * Changes recorded after the last adversity call: the world would have made each before a
   * call it then ran, but a test may end the phase first. The plan puts them before a claim
   * that never comes, which ground truth accepts for changes after the last call.
   */
  private placeTrailing(): void {
    if (this.unplaced.length === 0) return;
    const before = { call: 'claim' as const, nth: (this.placed.get('claim') ?? 0) + 1000 };
    for (const kind of this.unplaced) this.mutations.push({ before, kind, target: 0, back: 0 });
    this.unplaced = [];
  }

  // Internals ----------------------------------------------------------------------------------

  private call(call: Call, options: CallOptions, reply?: CallResult): number {
    const actor = this.live();
    const outcome = outcomeOf(options.outcome ?? 'ok');
    const applied = appliedOf(outcome, options.applied);
    const fault = options.fault ?? faultOf(outcome);
    if (call.kind !== 'claim' && call.kind !== 'malformed') {
      // Counted as a plan's address counts calls: per kind, claims and malformed calls never.
      const nth = this.calls.get(call.kind) ?? 0;
      this.calls.set(call.kind, nth + 1);
      if (fault !== undefined) this.faults.push({ call: call.kind, nth, kind: fault });
    }
    if (this.phase === 'adversity') this.place(call);
    const label = options.label === undefined ? fault : (options.label ?? undefined);
    const step: CallStep = { kind: 'call', seq: this.steps.length, phase: this.phase, actor, call, outcome, applied, ...(label === undefined ? {} : { fault: label }) };
    // As the world does: a call that took effect records what it returned, even when the
    // caller crashed before hearing it (crash-after).
    const answered = outcome.kind === 'ok' || outcome.kind === 'crash-after' || outcome.kind === 'indefinite';
    const seq = this.push(answered && reply !== undefined ? { ...step, result: reply } : step);
    if (outcome.kind === 'crash-before' || outcome.kind === 'crash-after') this.kill();
    return seq;
  }

  /** Counts an adversity call where the plan places changes, and puts the changes recorded since the last one before it. */
  private place(call: Call): { call: Exclude<Call['kind'], 'malformed'>; nth: number } {
    const nth = this.placed.get(call.kind) ?? 0;
    this.placed.set(call.kind, nth + 1);
    if (call.kind === 'malformed') {
      if (this.unplaced.length > 0) throw new Error('a plan cannot put a change before a malformed call: make another call after the change');
      return { call: 'claim', nth: -1 };
    }
    const before = { call: call.kind, nth };
    for (const kind of this.unplaced) this.mutations.push({ before, kind, target: 0, back: 0 });
    this.unplaced = [];
    return before;
  }

  private mutate(event: SourceEvent, mutation: MutationStep['mutation']): number {
    this.grow(event);
    this.unplaced.push(mutation);
    return this.push({ kind: 'mutation', seq: this.steps.length, phase: this.phase, event, mutation });
  }

  private grow(e: SourceEvent): void {
    const first = e.key[0];
    if (first !== undefined && (this.head === null || first > this.head)) this.head = first;
  }

  private life(event: LifeStep['event']): number {
    const actor = this.live();
    return this.push({ kind: 'life', seq: this.steps.length, phase: this.phase, actor, event });
  }

  private end(event: LifeStep['event']): number {
    const seq = this.life(event);
    this.kill();
    return seq;
  }

  private kill(): void {
    const life = this.worker === null ? undefined : this.lives.get(this.worker);
    if (life) life.alive = false;
  }

  /** A claim ends the phase: every incarnation stops. */
  private endAll(): void {
    for (const life of this.lives.values()) life.alive = false;
  }

  private live(): Actor {
    const life = this.worker === null ? undefined : this.lives.get(this.worker);
    if (!life?.alive) throw new Error(`no live incarnation at step ${this.steps.length}: call start() first`);
    return life.actor;
  }

  private push(step: Step): number {
    this.steps.push(step);
    return step.seq;
  }
}
