import type { Binding } from '../../model/binding.js';
import type { SourceEvent } from '../../model/event.js';
import type { FetchRequest, Page } from '../../model/history.js';
import type { Position } from '../../model/order.js';
import type { MutationSpec, PageQuirk, SourceSpec } from '../../scenarios/plan.js';
import { WorldError } from './errors.js';
import { freezeOwn, frozenCopy } from './frozen.js';
import { compareEvents, compareKeys, comparePositions, eligible, fingerprint, firstWhere, isPosition } from './order.js';
import { TokenMint } from './tokens.js';

/**
 * What a token means to the source that minted it: continue after this position (null: from
 * the start); on a newest-first source, continue with what lies before it (null: from the newest).
 */
interface TokenMeaning {
  readonly after: Position | null;
  readonly binding: string;
  /** On a scroll source, the scroll the token belongs to: it resumes where the scroll is, not at `after`. */
  readonly scroll?: Scroll;
}

/**
 * A scroll the server keeps (a source whose tokens are `scroll`): every token of it resumes
 * after `after`, which moves on each time the scroll serves a page, whether or not the
 * caller heard the answer. A stale token ends the whole scroll.
 */
interface Scroll {
  after: Position | null;
  open: boolean;
}

/**
 * One bound stream as the source serves it: the events its binding admits, in the stable
 * order. Kept from the first fetch under the binding and updated in place by every
 * mutation, so a fetch neither filters nor sorts the whole source again.
 */
interface Stream {
  /** A frozen copy of the binding, so that nothing can change what this stream admits. */
  readonly binding: Binding;
  readonly fingerprint: string;
  readonly events: SourceEvent[];
}

/**
 * The simulated paginated API. It holds the current version of every event, serves the
 * bound stream in the stable order, applies the binding's filter and upper bound itself
 * (as real APIs do), resumes by opaque token or by the key forms it offers, and, when the
 * plan says so, misbehaves the way real APIs do.
 */
export class Source {
  /** Every event's current version, in the stable order. */
  private readonly events: SourceEvent[];
  /** The same events by id: one version per id is current. */
  private readonly byId = new Map<string, SourceEvent>();
  /** Each bound stream served so far, by its binding's fingerprint. */
  private readonly streams = new Map<string, Stream>();
  /** The stream of each frozen binding object handed in, so that its fingerprint is computed once. */
  private readonly bound = new WeakMap<Binding, Stream>();
  private readonly tokens: TokenMint<TokenMeaning>;
  /** The largest first ordering field ever held: the head a replay window is measured from. */
  private clock: number | null;
  /**
   * The lowest first ordering field a change behind the head lands on: 0, or the lowest one
   * the world started with when that is below 0 (a world whose keys run from below zero),
   * so that such a world sees as many changes behind its head as one whose keys start at 0.
   */
  private readonly floor: number;
  private readonly lastPage = new Map<string, Page>();
  /** How many changes the source had taken when each last page was served. */
  private readonly lastPageChanges = new Map<string, number>();
  private changes = 0;
  private inserted = 0;
  /**
   * On an iterator chain (tokens `iterator`): each token whose batch came back empty, with
   * that batch's token. Sent again, such a token serves the same empty batch, forever.
   */
  private readonly emptyBatches = new Map<string, string>();

  constructor(
    initial: readonly SourceEvent[],
    readonly spec: SourceSpec,
    seed: string,
  ) {
    // Copies, frozen: served events are handed to consumers, and the plan's stay the plan's.
    this.events = initial.map(frozenCopy).sort(compareEvents);
    for (const e of this.events) this.byId.set(e.id, e);
    this.tokens = new TokenMint(seed);
    this.clock = initial.reduce<number | null>((m, e) => Math.max(m ?? Number.NEGATIVE_INFINITY, e.key[0] ?? 0), null);
    this.floor = initial.reduce((m, e) => Math.min(m, e.key[0] ?? 0), 0);
  }

  head(): number | null {
    return this.clock;
  }

  /** Whether the last fetch's quirk changed anything: a quirk that had nothing to act on did not fire. */
  quirked = false;

  fetch(binding: Binding, request: FetchRequest, quirk?: PageQuirk): Page {
    this.quirked = false;
    if (!Number.isInteger(request.limit) || request.limit < 1) {
      throw new WorldError('bad-request', true, `page limit must be a positive integer, got ${String(request.limit)}`);
    }
    const { fingerprint: bound, events: stream } = this.streamOf(binding);
    if (quirk === 'stale' && request.resume.kind === 'token') {
      // The token expired: it will never be accepted again, so a consumer must fall back. A
      // scroll expires whole, with every token of it.
      const scroll = this.tokens.read(request.resume.token)?.scroll;
      if (scroll) scroll.open = false;
      this.tokens.forget(request.resume.token);
      this.quirked = true;
      throw new WorldError('stale-token', true, 'the page token expired');
    }
    if (this.spec.order === 'newest-first') return this.newestFirst(stream, bound, request, quirk);
    const start = this.startIndex(stream, bound, request);
    const again = request.resume.kind === 'token' ? this.emptyBatches.get(request.resume.token) : undefined;
    if (again !== undefined) {
      // An iterator whose batch came back empty serves that empty batch again: only its token moves on.
      const page: Page = freezeOwn({ events: [], next: again, head: this.clock });
      this.lastPage.set(bound, page);
      this.lastPageChanges.set(bound, this.changes);
      return page;
    }
    // On a scroll source, the scroll this request continues, or the one it opens where it starts.
    const scroll = this.spec.tokens === 'scroll' ? this.scrollOf(request, stream[start - 1] ?? null) : undefined;
    if (quirk === 'repeat') {
      // A repeat serves the previous page again, as a cache would: never one that continues
      // nowhere (it would claim an end of the stream that no longer holds), one from before a
      // change (it would hide the change from a consumer re-reading its replay window), or
      // one that starts past where this request starts (it would skip what lies between).
      // Those are lies no consumer could see through; a page it has seen before is not.
      const previous = this.lastPage.get(bound);
      const first = previous?.events[0];
      const from = stream[start];
      const behind = first === undefined || from === undefined || compareEvents(first, from) <= 0;
      if (previous && previous.next !== null && this.lastPageChanges.get(bound) === this.changes && behind) {
        this.quirked = true;
        return previous;
      }
    }
    if (quirk === 'empty' && start < stream.length) {
      // No events, yet a token that resumes exactly where this request did.
      const before = stream[start - 1];
      this.quirked = true;
      const next = this.tokens.mint({ after: before ?? null, binding: bound, ...(scroll ? { scroll } : {}) });
      if (this.spec.tokens === 'iterator' && request.resume.kind === 'token') this.emptyBatches.set(request.resume.token, next);
      return freezeOwn({ events: [], next, head: this.clock });
    }
    let size = Math.min(request.limit, this.spec.pageSize);
    if (quirk === 'short' && start + 1 < stream.length && size > 1) {
      size = 1;
      this.quirked = true;
    }
    const served = stream.slice(start, start + size);
    const last = served.at(-1);
    // Served is read: the scroll moves on now, even if the answer never reaches its caller.
    if (scroll && last) scroll.after = last;
    const next = start + served.length < stream.length && last ? this.tokens.mint({ after: last, binding: bound, ...(scroll ? { scroll } : {}) }) : null;
    let events = served;
    if (quirk === 'overlap' && start > 0) {
      events = [...stream.slice(Math.max(0, start - 2), start), ...served];
      this.quirked = true;
    }
    if (quirk === 'reorder' && served.length > 1) {
      // Reversed (a page served newest first) when it holds an even number of events; rotated
      // (a page sorted by something else) when odd: a consumer that only puts a backwards page
      // the right way round reads a rotated one out of order.
      events = served.length % 2 === 0 ? [...served].reverse() : [...served.slice(1), served[0] as SourceEvent];
      this.quirked = true;
    }
    // Frozen: the consumer reads it and the history keeps it; its events are frozen already.
    const page: Page = freezeOwn({ events, next, head: this.clock });
    this.lastPage.set(bound, page);
    this.lastPageChanges.set(bound, this.changes);
    return page;
  }

  /**
   * A page of a newest-first source: the events just older than where the request resumes,
   * newest first. The stream is kept in the stable order like any other, so a page is a
   * slice ending at the resume point, served backwards, and its token continues before the
   * page's oldest event. Changes need nothing of their own: a new event lands where the stable
   * order puts it, at the top when it is the newest, and a sync that starts again from the
   * top sees it. Only the quirks that mean the same read downwards fire (NEWEST_FIRST_QUIRKS).
   */
  private newestFirst(stream: readonly SourceEvent[], bound: string, request: FetchRequest, quirk: PageQuirk | undefined): Page {
    const { resume } = request;
    let from: Position | null;
    if (resume.kind === 'start') from = null;
    else if (resume.kind === 'token') {
      const meaning = this.tokens.read(resume.token);
      // A token minted for another binding is as good as unknown (R2).
      if (!meaning || meaning.binding !== bound) throw new WorldError('stale-token', true);
      from = meaning.after;
    } else {
      throw new WorldError('bad-request', true, `this source lists newest first and resumes only from the start or by token, not by ${resume.kind}`);
    }
    // Everything before `end` in the stable order is older than where the request resumes.
    const end = from === null ? stream.length : firstWhere(stream, (e) => comparePositions(e, from) >= 0);
    if (quirk === 'empty' && end > 0) {
      // No events, yet a token that resumes exactly where this request did.
      this.quirked = true;
      return freezeOwn({ events: [], next: this.tokens.mint({ after: from, binding: bound }), head: this.clock });
    }
    let size = Math.min(request.limit, this.spec.pageSize);
    if (quirk === 'short' && end > 1 && size > 1) {
      size = 1;
      this.quirked = true;
    }
    const begin = Math.max(0, end - size);
    const oldest = stream[begin];
    const next = begin > 0 && oldest ? this.tokens.mint({ after: oldest, binding: bound }) : null;
    return freezeOwn({ events: stream.slice(begin, end).reverse(), next, head: this.clock });
  }

  /** The scroll a request continues (its token's), or a new one opened just after `from`, where the request starts. */
  private scrollOf(request: FetchRequest, from: Position | null): Scroll {
    const continued = request.resume.kind === 'token' ? this.tokens.read(request.resume.token)?.scroll : undefined;
    return continued ?? { after: from, open: true };
  }

  /**
   * Applies a planned mutation, kept within the contract, and returns the new event or
   * version. `binding` is the one being read, whose snapshot bound a snapshot source keeps.
   */
  mutate(spec: MutationSpec, binding: Binding): { event: SourceEvent; mutation: MutationSpec['kind'] } {
    const { contract } = this.spec;
    const head = this.clock ?? 0;
    const width = this.events[0]?.key.length ?? binding.ordering.length;
    const keyAt = (first: number): number[] => [first, ...Array.from({ length: width - 1 }, () => 0)];
    const behind = (limit: number): number => Math.max(this.floor, head - Math.min(spec.back, limit));
    const target = this.events.length > 0 ? this.events[spec.target % this.events.length] : undefined;
    let kind = spec.kind;
    let first: number;
    /** Whether the change may tie with the newest position's key (insertion-stable only). */
    let tie = false;
    switch (contract.kind) {
      case 'snapshot':
        // Nothing inside the snapshot ever changes: new events land beyond the bound.
        kind = 'insert';
        first = Math.max(head + 1, (binding.upTo ?? head) + 1);
        break;
      case 'insertion-stable':
        // Nothing lands behind the newest position, an update included (an `updated_at`
        // clock). A change that asks for nothing (`back` 0) ticks the clock: head + 1. One
        // that asks to land further back gets as far back as the contract allows: the newest
        // key itself, when its id sorts after the newest event's (a new row with the newest
        // row's timestamp, the boundary case of incremental syncs); else head + 1 too.
        first = head + 1;
        tie = spec.back > 0;
        break;
      // Late changes land behind the head, as far back as the contract lets them; one that
      // asks for nothing (`back` 0) is a new record arriving, past the head, which moves on:
      // a consumer meets late records while new ones keep coming, as a live source has them.
      case 'replay-window':
        first = spec.back === 0 ? head + 1 : behind(contract.window);
        if (kind === 'flip' && target && (target.key[0] ?? 0) >= head - contract.window) first = target.key[0] ?? first;
        break;
      case 'none':
        first = spec.back === 0 ? head + 1 : behind(Number.POSITIVE_INFINITY);
        if (kind === 'flip' && target) first = target.key[0] ?? first;
        break;
    }
    // The events are kept in the stable order, so the newest position is the last one's; an
    // id after its id (in the stable order's own comparison) lands after it at its key.
    const newest = this.events.at(-1);
    const tied = (id: string): readonly number[] | null => (tie && newest !== undefined && id > newest.id ? newest.key : null);
    let event: SourceEvent;
    if (kind === 'insert' || !target) {
      let id = `m${this.inserted++}`;
      while (this.byId.has(id)) id = `m${this.inserted++}`;
      const attr = spec.target % 2 === 0 ? 'order' : 'refund';
      event = { id, version: 1, key: tied(id) ?? keyAt(first), attrs: { kind: attr }, payload: `${id}:${attr}` };
      kind = 'insert';
    } else {
      const current = String(target.attrs.kind ?? 'order');
      const attr = kind === 'flip' ? (current === 'order' ? 'refund' : 'order') : current;
      const version = target.version + 1;
      const key = tied(target.id) ?? (kind === 'flip' && first === target.key[0] ? target.key : keyAt(first));
      event = { ...target, version, key, attrs: { ...target.attrs, kind: attr }, payload: `${target.id}:v${version}:${attr}` };
    }
    freezeOwn(event);
    this.changes++;
    this.replace(event);
    this.clock = Math.max(this.clock ?? Number.NEGATIVE_INFINITY, event.key[0] ?? 0);
    return { event, mutation: kind };
  }

  /**
   * The bound stream for a binding, built on first use. A binding the world froze is looked
   * up by identity; any other is fingerprinted on every call, since it might have changed.
   */
  private streamOf(binding: Binding): Stream {
    const known = this.bound.get(binding);
    if (known) return known;
    const print = fingerprint(binding);
    let stream = this.streams.get(print);
    if (!stream) {
      const own = frozenCopy(binding);
      stream = { binding: own, fingerprint: print, events: this.events.filter((e) => eligible(own, e)) };
      this.streams.set(print, stream);
    }
    if (isFrozenBinding(binding)) this.bound.set(binding, stream);
    return stream;
  }

  /** Puts a new version in place of the current one (if any), in the source and in every stream kept. */
  private replace(event: SourceEvent): void {
    const old = this.byId.get(event.id);
    if (old) {
      removeSorted(this.events, old);
      for (const stream of this.streams.values()) removeSorted(stream.events, old);
    }
    this.byId.set(event.id, event);
    insertSorted(this.events, event);
    for (const stream of this.streams.values()) if (eligible(stream.binding, event)) insertSorted(stream.events, event);
  }

  private startIndex(stream: readonly SourceEvent[], bound: string, request: FetchRequest): number {
    const { resume } = request;
    if (resume.kind !== 'start' && resume.kind !== 'token' && !this.spec.resumes.includes(resume.kind)) {
      throw new WorldError('bad-request', true, `this source does not offer resume by ${resume.kind}`);
    }
    switch (resume.kind) {
      case 'start':
        return 0;
      case 'token': {
        const meaning = this.tokens.read(resume.token);
        // A token minted for another binding is as good as unknown (R2); so is one of an expired scroll.
        if (!meaning || meaning.binding !== bound || meaning.scroll?.open === false) throw new WorldError('stale-token', true);
        const after = meaning.scroll ? meaning.scroll.after : meaning.after;
        return after === null ? 0 : firstWhere(stream, (e) => comparePositions(e, after) > 0);
      }
      case 'after': {
        const after = resume.position;
        if (!isPosition(after)) throw new WorldError('bad-request', true, 'resume after needs a position { key, id }');
        return firstWhere(stream, (e) => comparePositions(e, after) > 0);
      }
      // Each test below is false, then true, along the stream: the order sorts by key first.
      // page N of a key query: that many events past where the key puts it.
      case 'key-gt':
        return skipFrom(resume.skip, firstWhere(stream, (e) => compareKeys(e.key, resume.key) > 0));
      case 'key-gte':
        return skipFrom(resume.skip, firstWhere(stream, (e) => compareKeys(e.key, resume.key) >= 0));
      case 'offset':
        if (!Number.isInteger(resume.offset) || resume.offset < 0) throw new WorldError('bad-request', true, 'offset must be a non-negative integer');
        return resume.offset;
    }
  }
}

/** A key resume's start moved on by its skip, if it has one; a skip that is no count is refused. */
function skipFrom(skip: number | undefined, at: number): number {
  if (skip === undefined) return at;
  if (!Number.isInteger(skip) || skip < 0) throw new WorldError('bad-request', true, 'skip must be a non-negative integer');
  return at + skip;
}

/**
 * Whether a binding can no longer change, so that its stream may be found by identity. The
 * world's bindings are deep-frozen copies; a filter's values are plain values, never objects.
 */
function isFrozenBinding(binding: Binding): boolean {
  const { filter } = binding;
  return Object.isFrozen(binding) && Object.isFrozen(filter) && Object.isFrozen(binding.ordering) && (filter.kind !== 'in' || Object.isFrozen(filter.values));
}

/** Removes an event from a sorted array by binary search; a no-op when the array does not hold it. */
function removeSorted(events: SourceEvent[], event: SourceEvent): void {
  const i = firstWhere(events, (e) => compareEvents(e, event) >= 0);
  if (events[i] === event) events.splice(i, 1);
}

/** Inserts an event into a sorted array at its place in the stable order. */
function insertSorted(events: SourceEvent[], event: SourceEvent): void {
  events.splice(
    firstWhere(events, (e) => compareEvents(e, event) > 0),
    0,
    event,
  );
}
