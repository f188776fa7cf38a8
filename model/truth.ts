import { canonicalJson, isEligible, type Binding } from './binding.js';
import { formatRef, positionOf, type EventRef, type SourceEvent } from './event.js';
import { FaultAddresses } from './addresses.js';
import { Lives } from './lives.js';
import type { Address } from './plan.js';
import { PAGE_QUIRKS, type Actor, type CallStep, type DurableState, type FaultLabel, type HistoryHeader, type Mutation, type MutationStep, type Outcome, type Page, type PageQuirk, type Resume, type Step, type StoreOp } from './history.js';
import { covers, type Cut } from './cut.js';
import { LeaseReplica } from './lease-replica.js';
import { sameJson, StoreReplica, type StoredWatermark } from './store-replica.js';
import { SourceReplica, type Holding, type Served } from './source-replica.js';

/**
 * Ground truth, rebuilt from the history's header and its recorded steps alone. The world
 * writes what happened; this replays what *must* have happened: the source (every event's
 * current version, the eligible stream in the stable order, the head, every page; a replica
 * of its own, model/source-replica.ts), the store (every
 * commit's guards decided again: fence, compare-and-set, unless-completed, poison; a replica
 * of its own, model/store-replica.ts), the lease (holder, generation, expiry;
 * model/lease-replica.ts), and which event versions have a durable outcome.
 *
 * The header carries the plan (model/plan.ts): every call is replayed against it, so that
 * which fault or page quirk fired there, how the call ended, whether it took effect and what
 * its page held are decided here; the world's outcome, `applied`, label and result are claims
 * compared with that (`settle`), and a call's label never decides what is checked.
 *
 * The checkers read their facts from here, never from what the world says about itself.
 * Where the record and the replay disagree (a page serving an event the source does not hold,
 * a commit recorded as applied whose guard fails, a lease generation that does not follow),
 * the world contradicted itself: that is a problem of the harness, listed in `problems`, and
 * never blamed on the consumer.
 *
 * Independence: the world decides order and eligibility with code of its own
 * (src/world/order.ts), held to this model's by property tests (test/world/order.test.ts);
 * the reference consumer and adapters use model/order.ts, which the package exports, and it
 * is tested directly (test/model/order.test.ts). The replay here shares no code with the
 * world's source, store or lease: each is a replica written from its rules, held to the
 * world's by differential properties (test/model/source-replica.test.ts,
 * test/model/store-replica.test.ts, test/model/lease-replica.test.ts).
 *
 * Cost: linear in the steps. The eligible stream is kept sorted, and a mutation moves one
 * event by binary search; the gap-free frontiers (first without an outcome, first not
 * handled) only move back as far as that event. What is known of an event version is found
 * by its id, with no `id@version` string built on the way: `npm run bench` checks a history
 * of a million steps in under 2 s of CPU.
 */
export interface WorldProblem {
  readonly seq: number;
  readonly what: string;
}

/** What one step did, as the replay decided it. */
export interface Facts {
  /** Whether the call took effect, decided by the replay (it agrees with the record unless there is a problem). */
  readonly applied: boolean;
  /** Effects that became durable at this step, with what was known of them just before. */
  readonly effects: readonly EffectFact[];
  /** Watermark values written at this step (a commit's watermark op, or an observed change). */
  readonly watermarks: readonly unknown[];
  /** A load that read a watermark written under another binding. */
  readonly foreign: { readonly value: unknown } | null;
  /** Event versions that got a durable outcome at this step: effects, outbox handoffs, poison parked. */
  readonly outcomes: readonly EventRef[];
}

export interface EffectFact {
  readonly ref: EventRef;
  readonly payload: string;
  /** Effects for this event version before this one. */
  readonly seen: number;
  /** Whether the source served this version under the binding it was handled for. */
  readonly served: boolean;
  /** Whether any served copy of this version carried this payload. */
  readonly faithful: boolean;
  /**
   * The key the effect carries (null: none that could be read), when it carries one;
   * undefined for effects that carry only a payload.
   */
  readonly key: readonly number[] | null | undefined;
  /** The key the source served this version at, when it served it. */
  readonly servedAt: readonly number[] | undefined;
}

/**
 * What ground truth knows of one event version. Kept per version, found by id then version
 * number, so that the replay's hot path builds no `id@version` strings: at a million steps
 * those strings and their hashing were a third of the checker's time.
 */
interface Version {
  /** Effects made for it (transactional, sink, or a blackbox store). */
  delivered: number;
  /** A poison version durably dead-lettered. */
  parked: boolean;
  /** A durable outcome: an effect, an outbox handoff, or a poison version parked. */
  outcome: boolean;
  /** The bindings (fingerprints) it was served under: one almost always, a set only when several. */
  servedUnder: string | Set<string> | undefined;
  /** The payloads served for it: one almost always, a set only when they differ. */
  payloads: string | Set<string> | undefined;
  /** The key it was served at: a version has one position, which every page shows (else a world problem). */
  servedAt: readonly number[] | undefined;
  /** The binding under which its outbox entry was handed off: its later delivery acts for that binding. */
  handoff: string | undefined;
  /** The store's completion record for it (kept here for the store replica: one lookup finds all). */
  completed: boolean;
}

/**
 * One event id: its current version, when the source holds it (the source replica's
 * holding), and what is known of each of its versions (an effect may name an id the source
 * never held: a phantom). One lookup by id serves both. The entry is itself what is known of
 * version 1, which is nearly every version a history names: one object per event, not two,
 * where a million-step history holds hundreds of thousands of them.
 */
interface Entry extends Version, Holding {
  /** Every later version (a mutable record's changes). */
  later: Map<number, Version> | null;
}

/** What nothing has happened to yet. */
function blank(): Version {
  return { delivered: 0, parked: false, outcome: false, servedUnder: undefined, payloads: undefined, servedAt: undefined, handoff: undefined, completed: false };
}

const PAGE_QUIRK: ReadonlySet<string> = new Set(PAGE_QUIRKS);

/** Whether a recorded change is the planned one: the same kind, or an insert, which the world makes when no event fits. */
function fits(recorded: Mutation, planned: Mutation): boolean {
  return recorded === planned || recorded === 'insert';
}

/** How a failure message names a page a quirk made. */
const QUIRK_PAGE: Readonly<Record<PageQuirk, string>> = { overlap: 'overlapping', repeat: 'repeated', empty: 'empty', stale: 'stale', reorder: 'reordered', short: 'short' };

/** How a call must have ended: its outcome, whether it took effect, and the label of what fired there. */
interface Ending {
  readonly outcome: Outcome;
  readonly applied: boolean;
  readonly label: FaultLabel | undefined;
}

/**
 * The ending of a call that ran: refused with `code` (it did not take effect) or done (null);
 * a crash after it or a timeout changes what the caller heard, not whether it took effect.
 * The label is the call fault when one fired, else the page quirk that fired.
 */
function ended(code: string | null, after: 'crash-after' | 'timeout' | undefined, quirk: PageQuirk | undefined): Ending {
  const label = after ?? quirk;
  if (code === null && label === undefined) return SUCCEEDED;
  if (code !== null) return { outcome: { kind: 'error', code }, applied: false, label };
  const outcome: Outcome = after === 'crash-after' ? { kind: 'crash-after' } : after === 'timeout' ? { kind: 'indefinite', code: 'timeout' } : { kind: 'ok' };
  return { outcome, applied: true, label };
}

/** How nearly every call ends: done, with nothing fired there. Shared, so that replaying it allocates nothing. */
const SUCCEEDED: Ending = { outcome: { kind: 'ok' }, applied: true, label: undefined };

function codeOf(o: Outcome): string | null {
  return o.kind === 'error' || o.kind === 'indefinite' ? o.code : null;
}

function describeOutcome(o: Outcome): string {
  return o.kind === 'error' || o.kind === 'indefinite' ? `${o.kind} ${o.code}` : o.kind;
}

function expectation(e: Ending): string {
  switch (e.outcome.kind) {
    case 'ok':
      return 'succeeded';
    case 'error':
      return `failed with ${e.outcome.code}`;
    case 'crash-before':
      return 'crashed its caller before it ran (crash-before)';
    case 'crash-after':
      return 'taken effect, its caller crashing before it heard (crash-after)';
    case 'indefinite':
      return `${e.applied ? 'taken effect' : 'taken no effect'}, its caller hearing only ${e.outcome.code} (indefinite)`;
  }
}

/** How far back from where a kept token resumes its request is noted to pass over events: a page or many, never the whole stream. */
const PASSED_OVER_KEPT = 1024;

const NONE: Facts = { applied: false, effects: [], watermarks: [], foreign: null, outcomes: [] };
/** A call that took effect and produced nothing the checkers read: shared, as most steps are. */
const APPLIED: Facts = { ...NONE, applied: true };

export const actorKey = (a: Actor): string => `${a.worker}#${a.incarnation}`;

export class Truth {
  /** The source, replayed from its rules (model/source-replica.ts). */
  private readonly source: SourceReplica<Entry>;
  /** Every event id the history names, with what is known of each version. */
  private readonly entries = new Map<string, Entry>();
  /** Every eligible event before this index has a durable outcome: outcomes only ever grow. */
  private frontier = 0;
  /** Every eligible event before this index is handled (see `handled`): outcomes and handling only ever grow. */
  private handledUpTo = 0;
  /** The harness store, replayed from its rule (model/store-replica.ts); its completion records are kept with each version. */
  private readonly store = new StoreReplica({ has: (ref) => this.known(ref)?.completed === true, add: (ref) => void (this.version(ref).completed = true) });
  /** The lease, replayed from its rule (model/lease-replica.ts). */
  private readonly leaseReplica: LeaseReplica;
  /** The generation each incarnation heard granted. */
  private readonly generations = new Map<string, number>();

  readonly problems: WorldProblem[] = [];
  /** The step being replayed: where a contradiction the source replica finds is told. */
  private at = 0;
  private readonly poison: ReadonlySet<string>;
  /** Where the plan put its faults and page quirks. */
  private readonly addresses: FaultAddresses;
  /**
   * Where the plan put its changes, then its rebind (the last address, when there is one):
   * the world applies them before the adversity call each names, counting every call it
   * picks there, claims included.
   */
  private readonly placements: FaultAddresses<Address>;
  /** Changes recorded since the last adversity call: the plan must have put each before the next one. */
  private changes: MutationStep[] = [];
  /** The plan's changes some recorded call was named by, so made already. */
  private readonly made = new Set<number>();
  private rebinds = 0;
  /** Which incarnations are alive (model/lives.ts): only they make calls. */
  private readonly lives: Lives;

  constructor(readonly header: HistoryHeader) {
    this.addresses = new FaultAddresses(header.faults);
    this.placements = new FaultAddresses<Address>([...header.mutations.map((m) => m.before), ...(header.rebind === null ? [] : [header.rebind.before])]);
    this.lives = new Lives(header.workers);
    this.poison = new Set(header.poison);
    this.leaseReplica = new LeaseReplica(header.leaseTtlSteps);
    this.source = new SourceReplica(header, (what) => this.problem(this.at, what), { records: this.entries, record: (id) => this.entry(id) });
  }

  /** The binding the consumer reads under now. */
  get binding(): Binding {
    return this.source.binding;
  }

  /** Its fingerprint. */
  get bound(): string {
    return this.source.bound;
  }

  /** The largest first ordering field ever held, as the source reports it. */
  get head(): number | null {
    return this.source.head;
  }

  /** The eligible stream of the current binding, in the stable order. */
  eligible(): readonly SourceEvent[] {
    return this.source.eligible();
  }

  /** The current version of an event, if the source holds it. */
  event(id: string): SourceEvent | undefined {
    return this.source.event(id);
  }

  /** The first eligible event, in the stable order, that has no durable outcome yet. */
  firstWithoutOutcome(): SourceEvent | undefined {
    const stream = this.source.eligible();
    while (this.frontier < stream.length && this.known(stream[this.frontier] as SourceEvent)?.outcome === true) this.frontier++;
    return stream[this.frontier];
  }

  /**
   * The eligible events not yet handled, in the stable order. Everything before the first of
   * them is handled, so a claim that judges the whole stream costs only what is left.
   */
  *unhandled(): Generator<SourceEvent> {
    const stream = this.source.eligible();
    while (this.handledUpTo < stream.length && this.handled(stream[this.handledUpTo] as SourceEvent)) this.handledUpTo++;
    for (let i = this.handledUpTo; i < stream.length; i++) {
      const e = stream[i] as SourceEvent;
      if (!this.handled(e)) yield e;
    }
  }

  /**
   * The first eligible event that `wider` covers and `narrower` does not: the witness that a
   * watermark moved back. Cuts that differ only where no eligible event lies cover the same.
   */
  coveredOnlyBy(wider: Cut, narrower: Cut): SourceEvent | undefined {
    const i = this.source.firstIndex((p) => !covers(narrower, p));
    const e = this.source.eligible()[i];
    return e !== undefined && covers(wider, positionOf(e)) ? e : undefined;
  }

  /**
   * What the store says of an event version that is not handled: that it is done (a
   * completion record), or that its outbox entry was taken out (marked delivered) although
   * no delivery happened. Either way a consumer reading the store is told to skip it for
   * good: it is lost. Null when the store says neither (an entry still in the outbox waits).
   */
  lostInStore(ref: EventRef): 'a completion record' | 'its outbox entry taken out undelivered' | null {
    if (this.handled(ref) || this.store.inOutbox(ref)) return null;
    const v = this.known(ref);
    if (v === undefined) return null;
    if (v.completed) return 'a completion record';
    return v.handoff !== undefined ? 'its outbox entry taken out undelivered' : null;
  }

  /** Whether the store marks the event version done: a completion record, or an outbox entry written. */
  markedInStore(ref: EventRef): boolean {
    const v = this.known(ref);
    return v !== undefined && (v.completed || v.handoff !== undefined);
  }

  /** Handled for good: its effect happened, or it is poison and was parked. An outbox entry waiting for the sink is not. */
  handled(ref: EventRef): boolean {
    const v = this.known(ref);
    return v !== undefined && (v.delivered > 0 || v.parked);
  }

  /** What is known of a version, if anything is. */
  private known(ref: EventRef): Version | undefined {
    const entry = this.entries.get(ref.id);
    if (entry === undefined) return undefined;
    return ref.version === 1 ? entry : entry.later?.get(ref.version);
  }

  /** What is known of a version, made on first use. */
  private version(ref: EventRef, entry: Entry = this.entry(ref.id)): Version {
    if (ref.version === 1) return entry;
    let v = entry.later?.get(ref.version);
    if (v === undefined) (entry.later ??= new Map()).set(ref.version, (v = blank()));
    return v;
  }

  private entry(id: string): Entry {
    let entry = this.entries.get(id);
    if (entry === undefined) {
      // Written out, not spread from blank(): a spread made entries of another shape than
      // versions, and the checker ran over twice as slow.
      entry = { delivered: 0, parked: false, outcome: false, servedUnder: undefined, payloads: undefined, servedAt: undefined, handoff: undefined, completed: false, current: undefined, later: null };
      this.entries.set(id, entry);
    }
    return entry;
  }

  /**
   * The eligible events a request resuming by this page token passes over that have no
   * durable outcome (of the thousand just before where it resumes), asked before the request
   * is replayed (a scroll's token moves when it serves). None when the token means nothing
   * here, or the source is newest-first (see SourceReplica.tokenStart).
   */
  passedOverByToken(token: string): SourceEvent[] {
    const start = this.source.tokenStart(token);
    if (start === undefined || this.firstWithoutOutcome() === undefined) return [];
    const stream = this.source.eligible();
    const passed: SourceEvent[] = [];
    // The events just behind where the token resumes, and no further back: a world's every
    // restart would otherwise walk the stream from a frontier held back (by a poison event,
    // say), and the replay would grow with the square of the stream.
    for (let i = Math.max(this.frontier, start - PASSED_OVER_KEPT); i < start; i++) {
      const e = stream[i] as SourceEvent;
      if (this.known(e)?.outcome !== true) passed.push(e);
    }
    return passed;
  }

  /** The first eligible poison event, in the stable order, with no durable outcome (never parked). */
  firstPoisonWithoutOutcome(): SourceEvent | undefined {
    if (this.poison.size === 0) return undefined;
    return this.source.eligible().find((e) => this.poison.has(e.id) && this.known(e)?.outcome !== true);
  }

  /** Whether an event version has a durable outcome: an effect, an outbox handoff, or a poison version parked. */
  hasOutcome(ref: EventRef): boolean {
    return this.known(ref)?.outcome === true;
  }

  /** The store's watermark as replayed; `writer` is the fingerprint of the binding the writing worker read under. */
  get slot(): StoredWatermark | null {
    return this.store.watermark;
  }

  /** Whether the source issued this page token and it expired since (model/tokens.ts). */
  tokenExpired(token: string): boolean {
    return this.source.expired(token);
  }

  /** The newest lease generation granted. */
  get generation(): number {
    return this.leaseReplica.generation;
  }

  /**
   * Whether the newest generation was granted to this incarnation, whether or not it heard
   * the grant (a lease request that timed out took effect): then no worker holds a newer one.
   */
  holdsNewest(actor: Actor): boolean {
    return this.leaseReplica.holderOfNewest === actorKey(actor);
  }

  generationOf(actor: Actor): number {
    return this.generations.get(actorKey(actor)) ?? 0;
  }

  /** Replays one step and says what it did. */
  advance(step: Step): Facts {
    if (step.phase === 'drain' && this.changes.length > 0) this.trailing();
    const wrong = this.lives.enter(step.phase);
    if (wrong !== null) this.problem(step.seq, wrong);
    switch (step.kind) {
      case 'mutation': {
        this.late(step.seq, `the source changed (${step.mutation} of ${step.event.id})`);
        this.at = step.seq;
        if (step.phase === 'adversity') this.changes.push(step);
        else this.problem(step.seq, `the source changed in the drain phase, but the world makes the plan's changes in the adversity phase only`);
        const { removed, inserted } = this.source.mutate(step.event, step.mutation);
        if (this.source.changes > this.header.mutations.length) this.problem(step.seq, `the source changed ${this.source.changes} times, but the plan makes ${this.header.mutations.length} changes`);
        // The gap-free frontiers only move back as far as the event that changed.
        if (removed >= 0) {
          if (removed < this.frontier) this.frontier--;
          if (removed < this.handledUpTo) this.handledUpTo--;
        }
        if (inserted >= 0) {
          if (inserted <= this.frontier) this.frontier = inserted;
          if (inserted <= this.handledUpTo) this.handledUpTo = inserted;
        }
        return NONE;
      }
      case 'rebind': {
        this.late(step.seq, 'a rebind');
        const plan = this.header.rebind;
        if (plan === null) this.problem(step.seq, 'a rebind, but the plan makes none');
        else if (canonicalJson(plan.binding) !== canonicalJson(step.binding)) this.problem(step.seq, `a rebind to ${canonicalJson(step.binding).slice(0, 160)}, but the plan rebinds to ${canonicalJson(plan.binding).slice(0, 160)}`);
        if (++this.rebinds > 1) this.problem(step.seq, 'a second rebind, but the plan makes one at most');
        if (step.phase !== 'adversity') this.problem(step.seq, 'a rebind in the drain phase, but the world rebinds in the adversity phase only');
        else this.place(step.seq, step.call, true);
        this.lives.stopAll();
        this.source.rebind(step.binding);
        this.frontier = 0;
        this.handledUpTo = 0;
        return NONE;
      }
      case 'life': {
        const bad = this.lives.life(step);
        if (bad !== null) this.problem(step.seq, bad);
        return NONE;
      }
      case 'observed': {
        if (this.header.consumer !== 'blackbox') this.problem(step.seq, "an observed step, but the consumer is whitebox: the world looks into a blackbox consumer's own store only");
        this.late(step.seq, `a look into ${step.actor.worker}#${step.actor.incarnation}'s store`);
        const effects = step.effects.map((e) => this.effect(e.event, e.payload, this.bound));
        return { applied: true, effects, watermarks: step.watermark ? [step.watermark.value] : [], foreign: null, outcomes: effects.map((e) => e.ref) };
      }
      case 'call': {
        const bad = this.lives.call(step);
        if (bad !== null) this.problem(step.seq, bad);
        if (step.phase === 'adversity') this.place(step.seq, step.call, false);
        return this.call(step);
      }
    }
  }

  /** Once every step is replayed: changes after the last adversity call are judged as the phase's end judges them. */
  finish(): void {
    if (this.changes.length > 0) this.trailing();
  }

  /**
   * Changes recorded after the last adversity call, with no call for them to come before.
   * The world makes a change only as it picks the call the plan put it before, so it never
   * records one here; a hand-built history may, and then each must be one of the plan's
   * changes that no recorded call was named by, in the plan's order. What a liar gains from
   * moving a change here it could gain only by editing the plan too: a change the plan put
   * before a recorded call is missed at that call.
   */
  private trailing(): void {
    const plan = this.header.mutations;
    const left = plan.flatMap((m, i) => (this.made.has(i) ? [] : [m.kind]));
    const got = this.changes.map((m) => m.mutation);
    const seq = (this.changes[0] as MutationStep).seq;
    this.changes = [];
    if (got.length > left.length || got.some((kind, i) => !fits(kind, left[i] as Mutation))) {
      this.problem(seq, `the source changed (${got.join(', ')}) after the last adversity call, but the plan has ${left.length === 0 ? 'no change' : left.join(', ')} left to make`);
    }
  }

  /**
   * The adversity call at `seq` (or the call a rebind came before, which died with its
   * worker): the changes recorded since the last such call must be exactly those the plan
   * put before this one, in the plan's order, each of the planned kind (or an insert, which
   * the world makes instead when no event fits the change); and the rebind comes before the
   * call the plan names, which then never runs.
   */
  private place(seq: number, call: CallStep['call'], rebinding: boolean): void {
    const named = this.placements.all(call);
    // Most calls have nothing placed before them and no change recorded since the last: nothing to compare.
    if (!rebinding && named.length === 0 && this.changes.length === 0) return;
    const plan = this.header.mutations;
    for (const i of named) this.made.add(i);
    const planned = named.filter((i) => i < plan.length).map((i) => (plan[i] as (typeof plan)[number]).kind);
    const got = this.changes.map((m) => m.mutation);
    this.changes = [];
    if (got.length !== planned.length || got.some((kind, i) => !fits(kind, planned[i] as Mutation))) {
      this.problem(seq, `the plan puts ${planned.length === 0 ? 'no change' : `${planned.join(', ')}`} before call ${seq} (${call.kind}), but the world recorded ${got.length === 0 ? 'none' : got.join(', ')} before it`);
    }
    const planRebinds = this.header.rebind !== null && named.includes(plan.length);
    if (planRebinds && !rebinding) this.problem(seq, `the plan rebinds before call ${seq} (${call.kind}), so it never runs, but the world recorded it`);
    if (rebinding && !planRebinds) this.problem(seq, `a rebind before a ${call.kind}, but the plan puts it before another call`);
  }

  private problem(seq: number, what: string): void {
    this.problems.push({ seq, what });
  }

  /** A step of a phase its claim had ended: the world runs nothing after a claim, so it recorded a step that never happened. */
  private late(seq: number, what: string): void {
    const wrong = this.lives.other(what);
    if (wrong !== null) this.problem(seq, wrong);
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  /**
   * Replays one call against the plan: which fault or page quirk the plan put there (the
   * addresses of the header's faults), then what the call did (the source, the store, the
   * lease replayed), and from both how it must have ended. What the world recorded (the
   * outcome, `applied`, the label, the result) is compared with that, never believed.
   */
  private call(step: CallStep): Facts {
    const { call } = step;
    const planned = call.kind === 'claim' || call.kind === 'malformed' ? undefined : this.addresses.at(call)?.kind;
    // Page quirks are the source's behaviour and fire in both phases; call faults (crashes,
    // errors, timeouts) fire in the adversity phase only.
    const fault = planned !== undefined && (step.phase === 'adversity' || PAGE_QUIRK.has(planned)) ? planned : undefined;
    // The caller dies at a planned crash, whatever the call did (after a refused call too);
    // a record that says it lived on is already a contradiction (settle), told once.
    const o = step.outcome.kind;
    if ((fault === 'crash-before' || fault === 'crash-after') && (o === 'crash-before' || o === 'crash-after' || o === 'error')) this.lives.kill(step.actor);
    if (fault === 'crash-before') {
      this.settle(step, planned, { outcome: { kind: 'crash-before' }, applied: false, label: fault });
      return NONE;
    }
    if (fault === 'error') {
      this.settle(step, planned, { outcome: { kind: 'error', code: 'unavailable' }, applied: false, label: fault });
      return NONE;
    }
    // A lost request did nothing, and its caller heard what it hears of a timeout.
    if (fault === 'lost') {
      this.settle(step, planned, { outcome: { kind: 'indefinite', code: 'timeout' }, applied: false, label: fault });
      return NONE;
    }
    // A crash after the call or a timeout changes only what the caller learns: the call runs.
    const after = fault === 'crash-after' || fault === 'timeout' ? fault : undefined;
    switch (call.kind) {
      case 'fetch':
        return this.fetch(step, planned, after, fault !== undefined && PAGE_QUIRK.has(fault) ? (fault as PageQuirk) : undefined);
      case 'load': {
        const state: DurableState = this.store.state();
        this.done(step, planned, after, null);
        if (step.result?.kind !== 'state') this.problem(step.seq, `load at step ${step.seq} took effect but recorded no state`);
        else if (!sameJson(step.result.state, state)) {
          this.problem(step.seq, `load at step ${step.seq} returned ${canonicalJson(step.result.state).slice(0, 160)}, but the store holds ${canonicalJson(state).slice(0, 160)}`);
        }
        const slot = this.store.watermark;
        if (slot === null || slot.writer === this.bound || slot.value === null) return APPLIED;
        return { applied: true, effects: [], watermarks: [], foreign: { value: slot.value }, outcomes: [] };
      }
      case 'completed': {
        this.done(step, planned, after, null);
        const said = step.result?.kind === 'flags' ? step.result.flags : null;
        if (said === null) this.problem(step.seq, `completed at step ${step.seq} took effect but recorded no answer`);
        else if (!this.answers(said, call.events)) {
          const flags = call.events.map((e) => this.store.isCompleted(e));
          this.problem(step.seq, `completed at step ${step.seq} answered ${JSON.stringify(said)}, but the store's completion records say ${JSON.stringify(flags)}`);
        }
        return APPLIED;
      }
      case 'commit': {
        // The store decides its guards (model/store-replica.ts); the history records only the code.
        const refusal = this.store.refusal(call.ops, call.fence, this.leaseReplica.generation, this.poison);
        this.done(step, planned, after, refusal === null ? null : refusal === 'rejected' ? 'rejected' : 'conflict');
        return refusal === null ? this.commit(call.ops) : NONE;
      }
      case 'emit': {
        if (this.poison.has(call.event.id)) {
          this.done(step, planned, after, 'rejected');
          return NONE;
        }
        this.done(step, planned, after, null);
        const fact = this.effect(call.event, call.payload, this.bound, call.key);
        return { applied: true, effects: [fact], watermarks: [], foreign: null, outcomes: [fact.ref] };
      }
      case 'lease':
        return this.lease(step, planned, after);
      case 'claim':
        this.done(step, planned, after, null);
        this.lives.claimed(step.seq);
        return APPLIED;
      case 'malformed':
        this.done(step, planned, after, 'bad-request');
        return NONE;
    }
  }

  /** Whether a completion check's answer is what the store's completion records say, event by event. */
  private answers(said: readonly boolean[], events: readonly EventRef[]): boolean {
    if (said.length !== events.length) return false;
    for (let i = 0; i < events.length; i++) if (said[i] !== this.store.isCompleted(events[i] as EventRef)) return false;
    return true;
  }

  /** A call that ran ended refused with `code`, or done (null): compared with the record. */
  private done(step: CallStep, planned: FaultLabel | undefined, after: 'crash-after' | 'timeout' | undefined, code: string | null): void {
    this.settle(step, planned, ended(code, after, undefined));
  }

  /**
   * Compares how the world recorded a call with how the replay says it ended: the outcome (and
   * its code), whether it took effect, and the label of the fault or quirk that fired there.
   */
  private settle(step: CallStep, planned: FaultLabel | undefined, want: Ending): void {
    const { outcome } = step;
    const same = outcome.kind === want.outcome.kind && codeOf(outcome) === codeOf(want.outcome);
    if (!same || step.applied !== want.applied) {
      const recorded = same ? `it as ${step.applied ? 'applied' : 'not applied'}` : `${describeOutcome(outcome)}${step.applied ? ', applied' : ''}`;
      this.problem(step.seq, `call ${step.seq} (${step.call.kind}) must have ${expectation(want)}, but the world recorded ${recorded}`);
    }
    const label = 'fault' in step ? step.fault : undefined;
    if (label === want.label) return;
    const why =
      want.label !== undefined
        ? `the plan's ${want.label} fired there`
        : planned === undefined
          ? 'the plan puts no fault there'
          : PAGE_QUIRK.has(planned)
            ? `the plan's ${planned} had nothing to act on there`
            : `the plan's ${planned} does not fire in the ${step.phase} phase: call faults fire in the adversity phase only`;
    this.problem(step.seq, `call ${step.seq} (${step.call.kind}) is ${label === undefined ? 'unlabelled' : `labelled ${label}`}, but ${why}`);
  }

  /**
   * A page request replayed: the source replica decides from the request, the plan's quirk
   * and the eligible stream whether it refuses and what page it serves; the recorded page
   * must be exactly that, each event as the source holds it.
   */
  private fetch(step: CallStep, planned: FaultLabel | undefined, after: 'crash-after' | 'timeout' | undefined, quirk: PageQuirk | undefined): Facts {
    if (step.call.kind !== 'fetch') return NONE;
    const { resume, limit } = step.call.request;
    const source = this.source;
    const serving = source.serve(resume, limit, quirk);
    if ('refused' in serving) {
      this.settle(step, planned, ended(serving.refused, after, serving.fired));
      if (serving.fired === 'stale' && resume.kind === 'token') {
        // An expired token is never accepted again.
        source.expire(resume.token);
      }
      if (step.result !== undefined) this.problem(step.seq, `fetch ${step.seq} failed with ${serving.refused}, yet recorded a page`);
      return NONE;
    }
    const want = ended(null, after, serving.fired);
    this.settle(step, planned, want);
    const served = serving.repeat?.events ?? serving.events;
    this.addresses.delivered(served);
    this.placements.delivered(served);
    const page = step.result?.kind === 'page' ? step.result.page : null;
    if (page === null) {
      this.problem(step.seq, `fetch ${step.seq} took effect but recorded no page`);
      return NONE;
    }
    // Served means the caller saw it: a page lost to a crash or a timeout taught it nothing.
    const seen = want.outcome.kind === 'ok';
    const { binding, bound } = source;
    for (const e of page.events) {
      const entry = this.entry(e.id);
      const now = entry.current;
      if (now === undefined || !sameEvent(now, e)) {
        this.problem(step.seq, `fetch ${step.seq} served ${formatRef(e)} as ${canonicalJson(e).slice(0, 120)}, but the source holds ${now ? canonicalJson(now).slice(0, 120) : 'no such event'}`);
      } else if (!isEligible(binding, e)) {
        this.problem(step.seq, `fetch ${step.seq} served ${formatRef(e)}, which is not eligible under the binding`);
      }
      if (!seen) continue;
      const v = this.version(e, entry);
      v.servedUnder = withOne(v.servedUnder, bound);
      v.payloads = withOne(v.payloads, e.payload);
      v.servedAt ??= e.key;
    }
    if (page.head !== source.head) this.problem(step.seq, `fetch ${step.seq} reported head ${String(page.head)}, but the source's head is ${String(this.head)}`);
    if (serving.repeat !== undefined) {
      // The world serves a repeat as the very page it served before, which needs no comparing.
      if (serving.repeat !== page && canonicalJson(serving.repeat) !== canonicalJson(page)) this.problem(step.seq, `${fetchName(step, serving)} ${servedText(page)}, but a repeat serves the previous page ${listed(serving.repeat.events)} again`);
      return APPLIED;
    }
    if (!sameVersions(page.events, serving.events)) {
      const rule = serving.fired === undefined ? `from there${this.header.order === 'newest-first' ? ', newest first,' : ''} the eligible stream holds` : `${/^[aeiou]/.test(QUIRK_PAGE[serving.fired]) ? 'an' : 'a'} ${QUIRK_PAGE[serving.fired]} page from there holds`;
      this.problem(step.seq, `${fetchName(step, serving)} ${servedText(page)}, but ${rule} ${listed(serving.events)}`);
    } else if ((page.next === null) !== serving.ends) {
      this.problem(step.seq, `${fetchName(step, serving)} ${page.next === null ? 'ended the stream' : 'continued the stream'} ${serving.left()}`);
    }
    const wrong = source.served(resume, page, serving);
    if (wrong !== null) this.problem(step.seq, `${fetchName(step, serving)} ${wrong}`);
    return APPLIED;
  }

  /** A commit whose guards held: the store applies it whole, and what it means for outcomes is read here. */
  private commit(ops: readonly StoreOp[]): Facts {
    this.store.apply(ops, this.bound);
    // A transaction applies all at once: its outcomes count before its watermark. Most
    // commits (a completion record alone) produce no facts: they share APPLIED, and the
    // lists are made only when something goes in.
    let effects: EffectFact[] | null = null;
    let watermarks: unknown[] | null = null;
    let outcomes: EventRef[] | null = null;
    for (const op of ops) {
      switch (op.op) {
        case 'effect':
          (effects ??= []).push(this.effect(op.event, op.payload, this.bound));
          (outcomes ??= []).push(op.event);
          break;
        case 'outbox': {
          const v = this.version(op.event);
          v.outcome = true;
          v.handoff = this.bound;
          (outcomes ??= []).push(op.event);
          break;
        }
        case 'dead-letter':
          // Parking is an outcome only for what truly cannot be handled.
          if (this.poison.has(op.event.id)) {
            const v = this.version(op.event);
            v.outcome = true;
            v.parked = true;
            (outcomes ??= []).push(op.event);
          }
          break;
        case 'watermark':
          (watermarks ??= []).push(op.value);
          break;
        default:
          // A completion record, an anchor, a delivered outbox entry or a guard: the store's alone.
          break;
      }
    }
    if (effects === null && watermarks === null && outcomes === null) return APPLIED;
    return { applied: true, effects: effects ?? [], watermarks: watermarks ?? [], foreign: null, outcomes: outcomes ?? [] };
  }

  /**
   * A lease request, decided by the lease (model/lease-replica.ts) at the call's own step:
   * time is the world's step count. The generation granted must be the one recorded, and only
   * a caller that heard the answer knows it.
   */
  private lease(step: CallStep, planned: FaultLabel | undefined, after: 'crash-after' | 'timeout' | undefined): Facts {
    const who = actorKey(step.actor);
    const granted = this.leaseReplica.request(who, step.seq);
    if (granted === 'conflict') {
      this.done(step, planned, after, 'conflict');
      return NONE;
    }
    this.done(step, planned, after, null);
    if (step.result?.kind !== 'generation' || step.result.generation !== granted) {
      this.problem(step.seq, `lease at step ${step.seq} granted generation ${step.result?.kind === 'generation' ? step.result.generation : 'none'}, but the replay grants ${granted}`);
    }
    if (step.outcome.kind === 'ok') this.generations.set(who, granted);
    return APPLIED;
  }

  private effect(ref: EventRef, payload: string, bound: string, key?: readonly number[] | null): EffectFact {
    const v = this.version(ref);
    const on = v.handoff ?? bound;
    const fact: EffectFact = { ref, payload, seen: v.delivered, served: holds(v.servedUnder, on), faithful: holds(v.payloads, payload), servedAt: v.servedAt, key };
    v.delivered++;
    v.outcome = true;
    return fact;
  }
}

/** How a message names a fetch: `fetch 12 (short)`. Spelt out only for a problem, never for a page that agrees. */
function fetchName(step: CallStep, serving: Served): string {
  return `fetch ${step.seq}${serving.fired === undefined ? '' : ` (${serving.fired})`}`;
}

/** What a page served, as a reader sees it: `served [a b c]`. */
function servedText(page: Page): string {
  return `served ${listed(page.events)}`;
}

function listed(events: readonly SourceEvent[]): string {
  return `[${events.map(formatRef).join(' ')}]`;
}

/** Whether two lists hold the same event versions in the same order. */
function sameVersions(got: readonly SourceEvent[], want: readonly SourceEvent[]): boolean {
  if (got.length !== want.length) return false;
  for (let i = 0; i < got.length; i++) {
    const a = got[i] as SourceEvent;
    const b = want[i] as SourceEvent;
    if (a.id !== b.id || a.version !== b.version) return false;
  }
  return true;
}

/** Whether two event versions are the same in every field: cheaper than comparing canonical JSON. */
function sameEvent(a: SourceEvent, b: SourceEvent): boolean {
  if (a === b) return true;
  if (a.id !== b.id || a.version !== b.version || a.payload !== b.payload || a.key.length !== b.key.length) return false;
  for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return false;
  if (a.attrs === b.attrs) return true;
  const ka = Object.keys(a.attrs);
  if (ka.length !== Object.keys(b.attrs).length) return false;
  // A loop, not `every` with a callback: every event of every page is compared.
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (a.attrs[k] !== b.attrs[k]) return false;
  }
  return true;
}

/** A set of strings that is almost always one string: kept as that string until a second comes. */
function withOne(set: string | Set<string> | undefined, value: string): string | Set<string> {
  if (set === undefined || set === value) return value;
  if (typeof set === 'string') return new Set([set, value]);
  set.add(value);
  return set;
}

function holds(set: string | Set<string> | undefined, value: string): boolean {
  return set === undefined ? false : typeof set === 'string' ? set === value : set.has(value);
}
