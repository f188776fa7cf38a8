import { canonicalJson, fingerprint, isEligible, type Binding } from './binding.js';
import { formatRef, positionOf, refKey, type EventRef, type SourceEvent } from './event.js';
import { CALL_FAULTS, type Actor, type CallStep, type DurableState, type FaultLabel, type HistoryHeader, type Page, type Resume, type Step, type StoreOp } from './history.js';
import { covers, type Cut } from './cut.js';
import { compareKeys, comparePositions, formatPosition, isPosition, type Position } from './order.js';

/**
 * Ground truth, rebuilt from the history's header and its recorded steps alone. The world
 * writes what happened; this replays what *must* have happened: the source (every event's
 * current version, the eligible stream in the stable order, the head), the store (every
 * commit's guards decided again: fence, compare-and-set, unless-completed, poison), the
 * lease (holder, generation, expiry), and which event versions have a durable outcome.
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
 * world's source, store or lease.
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
  /** The store's completion record. */
  completed: boolean;
  /** The bindings (fingerprints) it was served under: one almost always, a set only when several. */
  servedUnder: string | Set<string> | undefined;
  /** The payloads served for it: one almost always, a set only when they differ. */
  payloads: string | Set<string> | undefined;
  /** The binding under which its outbox entry was handed off: its later delivery acts for that binding. */
  handoff: string | undefined;
}

/**
 * One event id: its current version, when the source holds it, and what is known of each of
 * its versions (an effect may name an id the source never held: a phantom). One lookup by id
 * serves both. The entry is itself what is known of version 1, which is nearly every version
 * a history names: one object per event, not two, where a million-step history holds
 * hundreds of thousands of them.
 */
interface Entry extends Version {
  current: SourceEvent | undefined;
  /** Every later version (a mutable record's changes). */
  later: Map<number, Version> | null;
}

/** What nothing has happened to yet. */
function blank(): Version {
  return { delivered: 0, parked: false, outcome: false, completed: false, servedUnder: undefined, payloads: undefined, handoff: undefined };
}

const CALL_FAULT: ReadonlySet<string> = new Set(CALL_FAULTS);

const NONE: Facts = { applied: false, effects: [], watermarks: [], foreign: null, outcomes: [] };
/** A call that took effect and produced nothing the checkers read: shared, as most steps are. */
const APPLIED: Facts = { ...NONE, applied: true };

export const actorKey = (a: Actor): string => `${a.worker}#${a.incarnation}`;

export class Truth {
  binding: Binding;
  bound: string;
  /** Every event id the history names: the version the source holds now, and what is known of each version. */
  private readonly entries = new Map<string, Entry>();
  /** The eligible stream of the current binding, in the stable order. */
  private eligibleStream: SourceEvent[] = [];
  private frontier = 0;
  /** Every eligible event before this index is handled (see `handled`): outcomes and handling only ever grow. */
  private handledUpTo = 0;
  /** The largest first ordering field ever held, as the source reports it. */
  head: number | null = null;
  /** The largest position ever held: insertion-stable sources never put anything behind it. */
  private newest: Position | null = null;

  /** The harness store, replayed. `writer` is the fingerprint of the binding the writing worker read under. */
  slot: { readonly binding: string; readonly value: unknown; readonly writer: string } | null = null;
  private anchor: DurableState['anchor'] = null;
  private readonly outbox = new Map<string, { readonly event: EventRef; readonly payload: string }>();

  private holder: string | null = null;
  private expiresAt = 0;
  /** The newest lease generation granted. */
  generation = 0;
  private readonly generations = new Map<string, number>();

  /** What each page token means: resume after this position (null: from the start), under this binding. */
  private readonly tokens = new Map<string, { readonly after: Position | null; readonly bound: string }>();
  private readonly lastPage = new Map<string, Page>();
  /** On a newest-first source, what each token means: continue below this position (null: from the newest). */
  private readonly below = new Map<string, { readonly before: Position | null; readonly bound: string }>();
  private readonly newestFirst: boolean;

  readonly problems: WorldProblem[] = [];
  private readonly poison: ReadonlySet<string>;
  private readonly leaseTtl: number;
  private readonly pageSize: number;

  constructor(readonly header: HistoryHeader) {
    this.binding = header.binding;
    this.bound = fingerprint(header.binding);
    this.poison = new Set(header.poison);
    this.leaseTtl = header.leaseTtl;
    this.pageSize = header.pageSize;
    this.newestFirst = header.order === 'newest-first';
    for (const e of header.initial) {
      // One version per id: a second initial event with the id would silently replace the first.
      if (this.entries.get(e.id)?.current !== undefined) this.problem(0, `the source's initial events hold ${e.id} twice`);
      this.hold(e);
    }
    this.resort();
  }

  /** The eligible stream of the current binding, in the stable order. */
  eligible(): readonly SourceEvent[] {
    return this.eligibleStream;
  }

  /** The current version of an event, if the source holds it. */
  event(id: string): SourceEvent | undefined {
    return this.entries.get(id)?.current;
  }

  /** The first eligible event, in the stable order, that has no durable outcome yet. */
  firstWithoutOutcome(): SourceEvent | undefined {
    const stream = this.eligibleStream;
    while (this.frontier < stream.length && this.known(stream[this.frontier] as SourceEvent)?.outcome === true) this.frontier++;
    return stream[this.frontier];
  }

  /**
   * The eligible events not yet handled, in the stable order. Everything before the first of
   * them is handled, so a claim that judges the whole stream costs only what is left.
   */
  *unhandled(): Generator<SourceEvent> {
    const stream = this.eligibleStream;
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
    const i = this.firstIndex((p) => !covers(narrower, p));
    const e = this.eligibleStream[i];
    return e !== undefined && covers(wider, positionOf(e)) ? e : undefined;
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
      entry = { delivered: 0, parked: false, outcome: false, completed: false, servedUnder: undefined, payloads: undefined, handoff: undefined, current: undefined, later: null };
      this.entries.set(id, entry);
    }
    return entry;
  }

  generationOf(actor: Actor): number {
    return this.generations.get(actorKey(actor)) ?? 0;
  }

  /** Replays one step and says what it did. */
  advance(step: Step): Facts {
    switch (step.kind) {
      case 'mutation':
        this.mutate(step.seq, step.event, step.mutation);
        return NONE;
      case 'rebind':
        this.binding = step.binding;
        this.bound = fingerprint(step.binding);
        this.resort();
        return NONE;
      case 'life':
        return NONE;
      case 'observed': {
        const effects = step.effects.map((e) => this.effect(e.event, e.payload, this.bound));
        return { applied: true, effects, watermarks: step.watermark ? [step.watermark.value] : [], foreign: null, outcomes: effects.map((e) => e.ref) };
      }
      case 'call':
        return this.call(step);
    }
  }

  private problem(seq: number, what: string): void {
    this.problems.push({ seq, what });
  }

  // -------------------------------------------------------------------------------------------
  // The source

  private hold(e: SourceEvent): void {
    this.entry(e.id).current = e;
    const first = e.key[0] ?? 0;
    this.head = this.head === null ? first : Math.max(this.head, first);
    // A SourceEvent is a Position (its key and id) as it stands: compared without a copy.
    if (this.newest === null || comparePositions(e, this.newest) > 0) this.newest = positionOf(e);
  }

  private resort(): void {
    const stream: SourceEvent[] = [];
    for (const { current } of this.entries.values()) if (current !== undefined && isEligible(this.binding, current)) stream.push(current);
    this.eligibleStream = stream.sort(comparePositions);
    this.frontier = 0;
    this.handledUpTo = 0;
  }

  /** The index of the first eligible event whose position satisfies `after` (binary search: the stream is sorted). */
  private firstIndex(past: (p: Position) => boolean): number {
    const stream = this.eligibleStream;
    let lo = 0;
    let hi = stream.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (past(stream[mid] as SourceEvent)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private mutate(seq: number, e: SourceEvent, kind: 'insert' | 'move' | 'flip'): void {
    const before = this.entries.get(e.id)?.current;
    const contract = this.header.contract;
    if (kind === 'insert' ? before !== undefined || e.version !== 1 : before === undefined || e.version !== before.version + 1) {
      this.problem(seq, `the source's ${kind} of ${formatRef(e)} does not follow from what it held (${before ? `version ${before.version}` : 'no such event'})`);
    }
    const broken =
      contract.kind === 'snapshot'
        ? kind !== 'insert' || (this.newest !== null && comparePositions(e, this.newest) <= 0) || (this.binding.upTo !== null && (e.key[0] ?? 0) <= this.binding.upTo)
        : contract.kind === 'insertion-stable'
          ? this.newest !== null && comparePositions(e, this.newest) <= 0
          : contract.kind === 'replay-window'
            ? (e.key[0] ?? 0) < (this.head ?? 0) - contract.window
            : false;
    if (broken) {
      this.problem(seq, `the source's ${kind} of ${formatRef(e)} at ${formatPosition(positionOf(e))} breaks its ${contract.kind} contract (head ${String(this.head)}${this.newest ? `, newest position ${formatPosition(this.newest)}` : ''})`);
    }
    // Out with the old version, in with the new, each by binary search in the sorted stream.
    if (before !== undefined && isEligible(this.binding, before)) {
      const i = this.firstIndex((p) => comparePositions(p, before) >= 0);
      if (this.eligibleStream[i]?.id === before.id) {
        this.eligibleStream.splice(i, 1);
        if (i < this.frontier) this.frontier--;
        if (i < this.handledUpTo) this.handledUpTo--;
      }
    }
    this.hold(e);
    if (isEligible(this.binding, e)) {
      const i = this.firstIndex((p) => comparePositions(p, e) > 0);
      this.eligibleStream.splice(i, 0, e);
      if (i <= this.frontier) this.frontier = i;
      if (i <= this.handledUpTo) this.handledUpTo = i;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  private call(step: CallStep): Facts {
    const { call, outcome } = step;
    // Asked with `in` first: most calls carry no label, and reading an absent field costs more.
    if ('fault' in step && step.fault !== undefined) this.label(step, step.fault);
    // A crash before the call, or an injected unavailability, means the service never ran it;
    // an indefinite outcome may go either way, and the record says which.
    const ran = outcome.kind !== 'crash-before' && !(outcome.kind === 'error' && outcome.code === 'unavailable') && !(outcome.kind === 'indefinite' && !step.applied);
    if (!ran) {
      if (step.applied) this.problem(step.seq, `call ${step.seq} (${call.kind}) is recorded as applied, though it never ran (${outcome.kind})`);
      return NONE;
    }
    switch (call.kind) {
      case 'fetch':
        return this.fetch(step, call.request.resume, call.request.limit);
      case 'load': {
        const state: DurableState = { watermark: this.slot && { binding: this.slot.binding, value: this.slot.value }, anchor: this.anchor, outbox: [...this.outbox.values()] };
        this.expect(step, null);
        if (step.result?.kind === 'state' && !sameJson(step.result.state, state)) {
          this.problem(step.seq, `load at step ${step.seq} returned ${canonicalJson(step.result.state).slice(0, 160)}, but the store holds ${canonicalJson(state).slice(0, 160)}`);
        }
        const slot = this.slot;
        return { ...NONE, applied: true, foreign: slot !== null && slot.writer !== this.bound && slot.value !== null ? { value: slot.value } : null };
      }
      case 'completed': {
        this.expect(step, null);
        const said = step.result?.kind === 'flags' ? step.result.flags : null;
        if (said !== null && (said.length !== call.events.length || call.events.some((e, i) => said[i] !== (this.known(e)?.completed === true)))) {
          const flags = call.events.map((e) => this.known(e)?.completed === true);
          this.problem(step.seq, `completed at step ${step.seq} answered ${JSON.stringify(said)}, but the store's completion records say ${JSON.stringify(flags)}`);
        }
        return APPLIED;
      }
      case 'commit':
        return this.commit(step, call.ops, call.fence);
      case 'emit': {
        if (this.poison.has(call.event.id)) {
          this.expect(step, 'rejected');
          return NONE;
        }
        this.expect(step, null);
        const fact = this.effect(call.event, call.payload, this.bound);
        return { ...NONE, applied: true, effects: [fact], outcomes: [fact.ref] };
      }
      case 'lease':
        return this.lease(step);
      case 'claim':
        this.expect(step, null);
        return APPLIED;
      case 'malformed':
        this.expect(step, 'bad-request');
        return NONE;
    }
  }

  /**
   * A fault label must fit what happened at the call: a call fault fires in the adversity
   * phase only and ends the call its own way (a crash-after or a timeout may meet an error the
   * call ran into first); a page quirk is a fetch's, answered (a stale token, refused).
   */
  private label(step: CallStep, fault: FaultLabel): void {
    const { outcome } = step;
    let fits: boolean;
    switch (fault) {
      case 'crash-before':
        fits = outcome.kind === 'crash-before';
        break;
      case 'crash-after':
        fits = outcome.kind === 'crash-after' || outcome.kind === 'error';
        break;
      case 'timeout':
        fits = outcome.kind === 'indefinite' || outcome.kind === 'error';
        break;
      case 'error':
        fits = outcome.kind === 'error' && outcome.code === 'unavailable';
        break;
      case 'stale':
        fits = step.call.kind === 'fetch' && outcome.kind === 'error' && outcome.code === 'stale-token';
        break;
      default:
        fits = step.call.kind === 'fetch' && outcome.kind === 'ok';
    }
    if (!fits) {
      const ended = outcome.kind === 'error' || outcome.kind === 'indefinite' ? `${outcome.kind} ${outcome.code}` : outcome.kind;
      this.problem(step.seq, `call ${step.seq} (${step.call.kind}) is labelled ${fault}, but it ended ${ended}`);
    } else if (step.phase !== 'adversity' && CALL_FAULT.has(fault)) {
      this.problem(step.seq, `call ${step.seq} (${step.call.kind}) is labelled ${fault}, but a call fault never fires in the ${step.phase} phase`);
    }
  }

  /** Checks the record against the replay: `code` is the error the call must have ended with, null for success. */
  private expect(step: CallStep, code: string | null): void {
    const { outcome } = step;
    if (code === null) {
      if (!step.applied || outcome.kind === 'error') this.problem(step.seq, `call ${step.seq} (${step.call.kind}) must have succeeded, but the world recorded ${outcome.kind === 'error' ? `error ${outcome.code}` : 'it as not applied'}`);
      return;
    }
    if (step.applied || outcome.kind !== 'error' || outcome.code !== code) {
      this.problem(step.seq, `call ${step.seq} (${step.call.kind}) must have failed with ${code}, but the world recorded ${outcome.kind === 'error' ? `error ${outcome.code}` : `${outcome.kind}${step.applied ? ', applied' : ''}`}`);
    }
  }

  private fetch(step: CallStep, resume: Resume, limit: number): Facts {
    if (step.outcome.kind === 'error') {
      // The request was refused (a stale or foreign token, a resume form not offered, a bad
      // limit); nothing was served, so there is nothing to hold against the stream.
      if (step.applied) this.problem(step.seq, `fetch ${step.seq} failed with ${step.outcome.code}, yet is recorded as applied`);
      return NONE;
    }
    const page = step.result?.kind === 'page' ? step.result.page : null;
    if (page === null) {
      this.problem(step.seq, `fetch ${step.seq} took effect but recorded no page`);
      return NONE;
    }
    // Served means the caller saw it: a page lost to a crash or a timeout taught it nothing.
    const seen = step.outcome.kind === 'ok';
    for (const e of page.events) {
      const entry = this.entry(e.id);
      const now = entry.current;
      if (now === undefined || !sameEvent(now, e)) {
        this.problem(step.seq, `fetch ${step.seq} served ${formatRef(e)} as ${canonicalJson(e).slice(0, 120)}, but the source holds ${now ? canonicalJson(now).slice(0, 120) : 'no such event'}`);
      } else if (!isEligible(this.binding, e)) {
        this.problem(step.seq, `fetch ${step.seq} served ${formatRef(e)}, which is not eligible under the binding`);
      }
      if (!seen) continue;
      const v = this.version(e, entry);
      v.servedUnder = withOne(v.servedUnder, this.bound);
      v.payloads = withOne(v.payloads, e.payload);
    }
    if (page.head !== this.head) this.problem(step.seq, `fetch ${step.seq} reported head ${String(page.head)}, but the source's head is ${String(this.head)}`);
    if (this.newestFirst) return this.newestFirstFetch(step, resume, page, limit);
    const start = this.startOf(resume);
    if (start === null) {
      // Every form but a token is placed by the request itself (the parser held it to its
      // shape); a token ground truth never saw a page of this binding carry cannot be served.
      this.problem(step.seq, `fetch ${step.seq} served a page for a token no page under this binding carried`);
      return APPLIED;
    }
    const wrong = this.pageProblem(step.fault, page, start, limit);
    if (wrong !== null) this.problem(step.seq, `fetch ${step.seq}${step.fault === undefined ? '' : ` (${step.fault})`} ${wrong}`);
    if (page.next !== null && !this.tokens.has(page.next)) {
      // A token resumes after the page's last event; an empty page's, where its request began.
      const last = page.events.reduce<SourceEvent | null>((m, e) => (m === null || comparePositions(e, m) > 0 ? e : m), null);
      const before = start === 0 ? null : positionOf(this.eligibleStream[start - 1] as SourceEvent);
      this.tokens.set(page.next, { after: last === null ? before : positionOf(last), bound: this.bound });
    }
    // A repeat serves the previous page that carried events (an empty page is not repeated).
    if (step.fault !== 'empty') this.lastPage.set(this.bound, page);
    return APPLIED;
  }

  /**
   * A page of a newest-first source, replayed from the rule: resumed at a point (the start:
   * above every event; a token: below the oldest event of the page that carried it, or, for
   * an empty page, where that page's request resumed), it holds the eligible events just
   * below that point, the newest first, as many as the page size and the limit allow; it ends
   * the stream exactly when no eligible event is left below its oldest one.
   */
  private newestFirstFetch(step: CallStep, resume: Resume, page: Page, limit: number): Facts {
    let before: Position | null = null;
    if (resume.kind === 'token') {
      const meaning = this.below.get(resume.token);
      if (meaning === undefined || meaning.bound !== this.bound) {
        this.problem(step.seq, `fetch ${step.seq} served a page for a token no page under this binding carried`);
        return APPLIED;
      }
      before = meaning.before;
    } else if (resume.kind !== 'start') {
      this.problem(step.seq, `fetch ${step.seq} served a page resumed by ${resume.kind}, but a newest-first source resumes only from the start or by token`);
      return APPLIED;
    }
    const at = before;
    // How many eligible events lie below the resume point: the page serves the newest of them.
    const below = at === null ? this.eligibleStream.length : this.firstIndex((p) => comparePositions(p, at) >= 0);
    const wrong = this.newestFirstProblem(step.fault, page, below, limit);
    if (wrong !== null) this.problem(step.seq, `fetch ${step.seq}${step.fault === undefined ? '' : ` (${step.fault})`} ${wrong}`);
    if (page.next !== null && !this.below.has(page.next)) {
      const oldest = page.events.reduce<SourceEvent | null>((m, e) => (m === null || comparePositions(e, m) < 0 ? e : m), null);
      this.below.set(page.next, { before: oldest === null ? at : positionOf(oldest), bound: this.bound });
    }
    return APPLIED;
  }

  /** What is wrong with a newest-first page resumed above the `below` oldest eligible events; null when nothing is. */
  private newestFirstProblem(label: FaultLabel | undefined, page: Page, below: number, limit: number): string | null {
    const { events } = page;
    const full = Math.min(limit, this.pageSize, below);
    const holds = (k: number): boolean => events.length === k && events.every((e, i) => sameVersion(e, this.eligibleStream[below - 1 - i]));
    const ends = (k: number): string | null =>
      (page.next === null) === (k === below) ? null : `${page.next === null ? 'ended the stream' : 'continued the stream'} with ${below - k} older eligible events left`;
    switch (label) {
      case 'stale':
        return 'served a page, yet the label says its token was rejected as stale';
      case 'empty':
        if (events.length > 0) return `${served(page)}, yet the label says the page was empty`;
        if (below === 0) return 'is recorded as an empty page, but the stream had nothing left to serve';
        return ends(0);
      case 'short':
        if (events.length === 0 || events.length >= full || !holds(events.length)) return `${served(page)}, but a short page from there holds the first of ${this.downward(below, full)} and not all of them`;
        return ends(events.length);
      case 'overlap':
      case 'repeat':
      case 'reorder':
        return `is labelled ${label}, a page a newest-first source never serves`;
      default:
        if (!holds(full)) return `${served(page)}, but from there, newest first, the eligible stream holds ${this.downward(below, full)}`;
        return ends(full);
    }
  }

  /** The `count` eligible events just below index `below`, newest first: `[c b a]`. */
  private downward(below: number, count: number): string {
    return `[${this.eligibleStream.slice(below - count, below).reverse().map(formatRef).join(' ')}]`;
  }

  /**
   * What is wrong with a page served from `start`, judged from the eligible stream and the
   * label the step carries; null when nothing is. With no quirk (a crash or a timeout at the
   * call changes what the caller learns, not what the source served) the page is exactly
   * the next slice of the stream. A quirk says what the source did instead, and the page
   * must be exactly that. Whatever the label, a page that ends the stream while eligible
   * events remain past it, or skips one, is the world's contradiction, never the consumer's.
   */
  private pageProblem(label: FaultLabel | undefined, page: Page, start: number, limit: number): string | null {
    const stream = this.eligibleStream;
    const events = page.events;
    // Past the end (an offset beyond it), there is nothing to serve.
    const end = Math.max(start, Math.min(start + Math.min(limit, this.pageSize), stream.length));
    switch (label) {
      case 'stale':
        return 'served a page, yet the label says its token was rejected as stale';
      case 'repeat': {
        const previous = this.lastPage.get(this.bound);
        if (previous === undefined || canonicalJson(previous) !== canonicalJson(page)) return 'is recorded as a repeated page, but it is not the previous page';
        // Served again, it must still be true: from where this request starts up to the
        // page's own last event the stream holds nothing the page lacks, and an end it
        // claims is still the end.
        let last = -1;
        let within = 0;
        for (const e of events) {
          const i = this.indexOf(e);
          if (i >= start) within++;
          if (i > last) last = i;
        }
        if (last >= start && within !== last - start + 1) return `${served(page)} again, but from there the eligible stream now holds ${this.slice(start, last + 1)}`;
        return page.next === null ? this.endProblem(page, Math.max(start, last + 1)) : null;
      }
      case 'empty':
        if (events.length > 0) return `${served(page)}, yet the label says the page was empty`;
        if (start >= stream.length) return 'is recorded as an empty page, but the stream had nothing left to serve';
        return page.next === null ? this.endProblem(page, start) : null;
      case 'short': {
        const k = events.length;
        if (k === 0 || k >= end - start || !this.holdsSlice(events, start, start + k)) return `${served(page)}, but a short page from there holds the first of ${this.slice(start, end)} and not all of them`;
        return this.endProblem(page, start + k);
      }
      case 'overlap': {
        const m = events.length - (end - start);
        if (m < 1 || m > start || !this.holdsSlice(events, start - m, end)) return `${served(page)}, but an overlapping page from there repeats the end of ${this.slice(0, start)} before ${this.slice(start, end)}`;
        return this.endProblem(page, end);
      }
      case 'reorder': {
        const sorted = [...events].sort(comparePositions);
        if (events.length < 2 || sorted.length !== end - start || !this.holdsSlice(sorted, start, end) || this.holdsSlice(events, start, end)) {
          return `${served(page)}, but a reordered page from there holds ${this.slice(start, end)} out of order`;
        }
        return this.endProblem(page, end);
      }
      default:
        if (events.length !== end - start || !this.holdsSlice(events, start, end)) return `${served(page)}, but from there the eligible stream holds ${this.slice(start, end)}`;
        return this.endProblem(page, end);
    }
  }

  /** Whether a page ends the stream exactly when nothing eligible remains from `upTo` on. */
  private endProblem(page: Page, upTo: number): string | null {
    const total = this.eligibleStream.length;
    if ((page.next === null) === upTo >= total) return null;
    return `${page.next === null ? 'ended the stream' : 'continued the stream'} at ${upTo} of ${total} eligible events`;
  }

  /** A slice of the eligible stream as a reader sees it: `[a b c]`. */
  private slice(from: number, to: number): string {
    return `[${this.eligibleStream.slice(from, to).map(formatRef).join(' ')}]`;
  }

  /** Whether `events` begin with the eligible stream's versions `from` to `to`, in order. */
  private holdsSlice(events: readonly SourceEvent[], from: number, to: number): boolean {
    if (events.length < to - from) return false;
    const stream = this.eligibleStream;
    for (let i = from; i < to; i++) {
      const want = stream[i] as SourceEvent;
      const got = events[i - from] as SourceEvent;
      if (want.id !== got.id || want.version !== got.version) return false;
    }
    return true;
  }

  /** Where an event version stands in the eligible stream; -1 when it is not there. */
  private indexOf(e: SourceEvent): number {
    const i = this.firstIndex((p) => comparePositions(p, e) >= 0);
    const found = this.eligibleStream[i];
    return found !== undefined && found.id === e.id && found.version === e.version ? i : -1;
  }

  /** Where a request resumes in the eligible stream, or null when the replay cannot tell (a token it never saw minted). */
  private startOf(resume: Resume): number | null {
    switch (resume.kind) {
      case 'start':
        return 0;
      case 'token': {
        const meaning = this.tokens.get(resume.token);
        if (meaning === undefined || meaning.bound !== this.bound) return null;
        const after = meaning.after;
        return after === null ? 0 : this.firstIndex((p) => comparePositions(p, after) > 0);
      }
      case 'after':
        return isPosition(resume.position) ? this.firstIndex((p) => comparePositions(p, resume.position as Position) > 0) : null;
      case 'key-gt':
        return Array.isArray(resume.key) ? this.firstIndex((p) => compareKeys(p.key, resume.key) > 0) : null;
      case 'key-gte':
        return Array.isArray(resume.key) ? this.firstIndex((p) => compareKeys(p.key, resume.key) >= 0) : null;
      case 'offset':
        return Number.isInteger(resume.offset) && resume.offset >= 0 ? resume.offset : null;
    }
  }

  private commit(step: CallStep, ops: readonly StoreOp[], fence: number | null): Facts {
    const refused = ops.some((op) => (op.op === 'effect' || op.op === 'outbox') && this.poison.has(op.event.id));
    const conflict =
      (fence !== null && fence !== this.generation) ||
      ops.some((op) => op.op === 'unless-completed' && this.known(op.event)?.completed === true) ||
      ops.some((op) => {
        if (op.op !== 'watermark' || !('expect' in op)) return false;
        const current = this.slot?.binding === op.binding ? this.slot.value : null;
        return !sameJson(current ?? null, op.expect ?? null);
      });
    if (refused || conflict) {
      this.expect(step, refused ? 'rejected' : 'conflict');
      return NONE;
    }
    this.expect(step, null);
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
        case 'complete':
          this.version(op.event).completed = true;
          break;
        case 'outbox': {
          this.outbox.set(refKey(op.event), { event: op.event, payload: op.payload });
          const v = this.version(op.event);
          v.outcome = true;
          v.handoff = this.bound;
          (outcomes ??= []).push(op.event);
          break;
        }
        case 'outbox-done':
          this.outbox.delete(refKey(op.event));
          break;
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
          this.slot = { binding: op.binding, value: op.value, writer: this.bound };
          (watermarks ??= []).push(op.value);
          break;
        case 'anchor':
          this.anchor = { binding: op.binding, token: op.token, watermark: op.watermark };
          break;
        case 'unless-completed':
          break;
      }
    }
    if (effects === null && watermarks === null && outcomes === null) return APPLIED;
    return { applied: true, effects: effects ?? [], watermarks: watermarks ?? [], foreign: null, outcomes: outcomes ?? [] };
  }

  private lease(step: CallStep): Facts {
    const who = actorKey(step.actor);
    // Time is the world's step count: the call's own sequence number.
    if (this.holder !== null && this.holder !== who && this.expiresAt > step.seq) {
      this.expect(step, 'conflict');
      return NONE;
    }
    if (this.holder !== who) this.generation++;
    this.holder = who;
    this.expiresAt = step.seq + this.leaseTtl;
    this.expect(step, null);
    if (step.result?.kind !== 'generation' || step.result.generation !== this.generation) {
      this.problem(step.seq, `lease at step ${step.seq} granted generation ${step.result?.kind === 'generation' ? step.result.generation : 'none'}, but the replay grants ${this.generation}`);
    }
    this.grant(step, this.generation);
    return APPLIED;
  }

  private grant(step: CallStep, generation: number): void {
    this.generation = Math.max(this.generation, generation);
    // Only a caller that heard the answer knows its generation.
    if (step.outcome.kind === 'ok') this.generations.set(actorKey(step.actor), generation);
  }

  private effect(ref: EventRef, payload: string, bound: string): EffectFact {
    const v = this.version(ref);
    const on = v.handoff ?? bound;
    const fact: EffectFact = { ref, payload, seen: v.delivered, served: holds(v.servedUnder, on), faithful: holds(v.payloads, payload) };
    v.delivered++;
    v.outcome = true;
    return fact;
  }
}

/** What a page served, as a reader sees it: `served [a b c]`. */
function served(page: Page): string {
  return `served [${page.events.map(formatRef).join(' ')}]`;
}

/** Whether a served event is that version of the stream's event. */
function sameVersion(got: SourceEvent, want: SourceEvent | undefined): boolean {
  return want !== undefined && got.id === want.id && got.version === want.version;
}

/** Whether two event versions are the same in every field: cheaper than comparing canonical JSON. */
function sameEvent(a: SourceEvent, b: SourceEvent): boolean {
  if (a === b) return true;
  if (a.id !== b.id || a.version !== b.version || a.payload !== b.payload || a.key.length !== b.key.length) return false;
  for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return false;
  const ka = Object.keys(a.attrs);
  if (ka.length !== Object.keys(b.attrs).length) return false;
  return ka.every((k) => a.attrs[k] === b.attrs[k]);
}

/** Equal as JSON values, whatever the order of their keys; the common case, same order, costs one native stringify each. */
function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b) || canonicalJson(a) === canonicalJson(b);
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
