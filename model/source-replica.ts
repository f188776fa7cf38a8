import { fingerprint, isEligible, type Binding } from './binding.js';
import { formatRef, positionOf, type SourceEvent } from './event.js';
import type { Contract, HistoryHeader, Mutation, Page, PageQuirk, Resume } from './history.js';
import { compareKeys, comparePositions, formatPosition, isPosition, type Position } from './order.js';
import { TokenReplay } from './tokens.js';

/**
 * The paginated source, as ground truth replays it: written from the rules the documents
 * state, not from the world's code (src/world/source.ts), so that a misreading of a rule on
 * either side shows as a disagreement (test/model/source-replica.test.ts holds the two
 * together over generated streams, requests, quirks and changes).
 *
 * The rules, docs/design.md ("The world"):
 *
 * - "Every source resumes from an opaque next-page token; a source may also offer `after`
 *   (strictly after a full position), `key-gt` and `key-gte` (the key-only forms real APIs
 *   offer, where ties bite) and `offset` (which shifts under mutation)." A form not offered,
 *   a limit that is not a positive integer, or a token never minted under the binding is
 *   refused (`bad-request`, `stale-token`): a token is bound to its binding (R2).
 * - A page is the bound stream, in the stable order (R1), from where the request resumes, as
 *   many events as the page size and the limit allow; its token resumes after its last
 *   event, and it carries none when nothing eligible is left after it. "A page shows the
 *   source's `head`": the largest first ordering field ever held.
 * - "A source delivers in the stable order, or, as many list APIs do, newest first: `start`
 *   gives the newest page and each token the next older one, with start and token as its
 *   only resume forms and `empty`, `short` and `stale` as its only quirks."
 * - The page quirks, "each firing only where it has something to act on", as
 *   PAGE_QUIRK_MEANINGS (model/history.ts) states each one.
 * - The contracts: "`snapshot` (an upper bound, nothing within it changes),
 *   `insertion-stable` (every insert or update lands after the head), `replay-window`
 *   (`window: n`, changes land at most `n` behind the head) and `none`". Mutations "always
 *   respect the contract": a change that does not is the world's contradiction.
 */

/** How many eligible events before where a request resumes an overlapping page repeats ("the two eligible events before where it resumes"). */
const OVERLAP = 2;

/**
 * What the source does with one page request: refused with a code (and the quirk that made
 * it refuse, a stale token), or a page: the events it holds, whether it ends the stream, the
 * quirk that fired, the previous page itself for a repeat, and where its token resumes.
 */
export type Serving = Refused | Served;

/** A request the source refuses, with the code, and the quirk that made it refuse (an expired token). */
export interface Refused {
  readonly refused: 'bad-request' | 'stale-token';
  readonly fired?: 'stale';
}

/** A page the source serves. */
export interface Served {
  readonly events: readonly SourceEvent[];
  readonly ends: boolean;
  readonly fired: PageQuirk | undefined;
  /** The previous page itself, served again (a repeat). */
  readonly repeat?: Page;
  /** Where the page's token resumes: after `at` (newest first: below it; null: from the top); null when it carries none. */
  readonly mint: { readonly at: Position | null } | null;
  /** How far the stream had got, for a message about an end claimed or missed: spelt out only then. */
  readonly left: () => string;
}

/** Where the eligible stream changed under a mutation: the index an old version left (-1: none) and the index the new one took (-1: none). */
export interface Moved {
  readonly removed: number;
  readonly inserted: number;
}

/**
 * Where the source keeps an event id's current version. Ground truth keeps everything it
 * knows of an id in one record, found by one lookup: the source's part of it is `current`.
 */
export interface Holding {
  current: SourceEvent | undefined;
}

/** The records of every event id the history names, with a way to make one: the table the source's holdings live in. */
export interface Holdings<H extends Holding> {
  readonly records: ReadonlyMap<string, H>;
  record(id: string): H;
}

/** A table of holdings of its own, for a source replayed alone. */
export function ownHoldings(): Holdings<Holding> {
  const records = new Map<string, Holding>();
  return {
    records,
    record(id) {
      let r = records.get(id);
      if (r === undefined) records.set(id, (r = { current: undefined }));
      return r;
    },
  };
}

/** What a token of a newest-first source means: continue below this position (null: from the newest), under this binding. */
interface Below {
  readonly before: Position | null;
  readonly bound: string;
}

export class SourceReplica<H extends Holding = Holding> {
  binding: Binding;
  /** The fingerprint of the binding: what a token is bound to. */
  bound: string;
  /** The eligible stream of the current binding, in the stable order. */
  private stream: SourceEvent[] = [];
  /** The largest first ordering field ever held: the head a page shows and a replay window is measured from. */
  head: number | null = null;
  /** The largest position ever held: an insertion-stable source never puts anything at or before it. */
  private newest: Position | null = null;
  /** How many changes the source has taken: a repeat never crosses one. */
  changes = 0;

  /** What each page token means: resume after this position (null: from the start), under this binding, by the rule of its kind. */
  private readonly tokens: TokenReplay;
  /** On a newest-first source, what each token means instead. */
  private readonly below = new Map<string, Below>();
  /** Each binding's previous page with events, and how many changes the source had taken when it was served. */
  private readonly previous = new Map<string, Page>();
  private readonly previousChanges = new Map<string, number>();

  private readonly newestFirst: boolean;
  private readonly offered: ReadonlySet<string>;
  private readonly pageSize: number;
  private readonly contract: Contract;

  /**
   * `report` is told every contradiction found in what the world says the source did, with a
   * message; `held` is where every event the source holds is kept, at its current version.
   */
  constructor(
    header: HistoryHeader,
    private readonly report: (what: string) => void,
    private readonly held: Holdings<H>,
  ) {
    this.binding = header.binding;
    const bound = fingerprint(header.binding);
    this.bound = bound;
    this.newestFirst = header.order === 'newest-first';
    this.offered = new Set(header.resumes);
    this.pageSize = header.pageSize;
    this.contract = header.contract;
    this.tokens = new TokenReplay(header.tokens);
    for (const e of header.initial) {
      // One version per id: a second initial event with the id would silently replace the first.
      // Its record is found once, and holds the event from then on.
      const record = this.held.record(e.id);
      if (record.current !== undefined) report(`the source's initial events hold ${e.id} twice`);
      this.hold(e, record);
    }
    this.rebind(header.binding, bound);
  }

  /** The eligible stream of the current binding, in the stable order. */
  eligible(): readonly SourceEvent[] {
    return this.stream;
  }

  /** The current version of an event, if the source holds it. */
  event(id: string): SourceEvent | undefined {
    return this.held.records.get(id)?.current;
  }

  /**
   * Where a resume by this token would start in the eligible stream now: the index of the
   * first event it serves (every eligible event before it is passed over). Undefined when the
   * token means nothing here (unknown, expired, another binding's) or the source is
   * newest-first, whose tokens continue downwards.
   */
  tokenStart(token: string): number | undefined {
    if (this.newestFirst) return undefined;
    const start = this.resumesAt({ kind: 'token', token });
    return typeof start === 'number' ? start : undefined;
  }

  /** The index of the first eligible event whose position satisfies `past`, which holds for a suffix of the stream (binary search). */
  firstIndex(past: (p: Position) => boolean): number {
    const stream = this.stream;
    let lo = 0;
    let hi = stream.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (past(stream[mid] as SourceEvent)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The consumer restarts under another binding: the eligible stream is that binding's, from scratch. */
  rebind(binding: Binding, bound: string = fingerprint(binding)): void {
    this.binding = binding;
    this.bound = bound;
    const stream: SourceEvent[] = [];
    for (const { current } of this.held.records.values()) if (current !== undefined && isEligible(binding, current)) stream.push(current);
    this.stream = stream.sort(comparePositions);
  }

  private hold(e: SourceEvent, record: H = this.held.record(e.id)): void {
    record.current = e;
    const first = e.key[0] ?? 0;
    this.head = this.head === null ? first : Math.max(this.head, first);
    // A SourceEvent is a Position (its key and id) as it stands: compared, and kept, without a copy.
    if (this.newest === null || comparePositions(e, this.newest) > 0) this.newest = e;
  }

  /**
   * A change the world says it made: `insert` a new event (version 1 of an id not held),
   * `move` or `flip` the next version of a held one. It must follow from what is held and keep
   * the contract; the eligible stream takes the new version at its place.
   */
  mutate(e: SourceEvent, kind: Mutation): Moved {
    this.changes++;
    const before = this.held.records.get(e.id)?.current;
    if (kind === 'insert' ? before !== undefined || e.version !== 1 : before === undefined || e.version !== before.version + 1) {
      this.report(`the source's ${kind} of ${formatRef(e)} does not follow from what it held (${before ? `version ${before.version}` : 'no such event'})`);
    }
    const broken = this.breaks(e, kind);
    if (broken) {
      this.report(`the source's ${kind} of ${formatRef(e)} at ${formatPosition(positionOf(e))} breaks its ${this.contract.kind} contract (head ${String(this.head)}${this.newest ? `, newest position ${formatPosition(this.newest)}` : ''})`);
    }
    let removed = -1;
    if (before !== undefined && isEligible(this.binding, before)) {
      const i = this.firstIndex((p) => comparePositions(p, before) >= 0);
      if (this.stream[i]?.id === before.id) {
        this.stream.splice(i, 1);
        removed = i;
      }
    }
    this.hold(e);
    let inserted = -1;
    if (isEligible(this.binding, e)) {
      inserted = this.firstIndex((p) => comparePositions(p, e) > 0);
      this.stream.splice(inserted, 0, e);
    }
    return { removed, inserted };
  }

  /**
   * Whether a change breaks the contract. A snapshot changes nothing within its bound: only
   * an insert past everything held and past the bound. Insertion-stable: every change lands
   * past the newest position held. A replay window of n: no change lands more than n behind
   * the head, in units of the first ordering field. None promises nothing.
   */
  private breaks(e: SourceEvent, kind: Mutation): boolean {
    const first = e.key[0] ?? 0;
    const pastNewest = this.newest === null || comparePositions(e, this.newest) > 0;
    switch (this.contract.kind) {
      case 'snapshot':
        return kind !== 'insert' || !pastNewest || (this.binding.upTo !== null && first <= this.binding.upTo);
      case 'insertion-stable':
        return !pastNewest;
      case 'replay-window':
        return first < (this.head ?? 0) - this.contract.window;
      case 'none':
        return false;
    }
  }

  /**
   * What the source does with a page request: refused, or the page the rules make of it,
   * unless the plan put a page quirk here that has something to act on, in which case the
   * page is what that quirk makes of it (PAGE_QUIRK_MEANINGS).
   */
  serve(resume: Resume, limit: number, quirk: PageQuirk | undefined): Serving {
    if (!Number.isInteger(limit) || limit < 1) return { refused: 'bad-request' };
    // stale: "the token is refused as expired (stale-token) [...]; fires on a request that resumes by token".
    if (quirk === 'stale' && resume.kind === 'token') return { refused: 'stale-token', fired: 'stale' };
    return this.newestFirst ? this.serveDownwards(resume, limit, quirk) : this.serveUpwards(resume, limit, quirk);
  }

  /** A page in the stable order. */
  private serveUpwards(resume: Resume, limit: number, quirk: PageQuirk | undefined): Serving {
    if (resume.kind !== 'start' && resume.kind !== 'token' && !this.offered.has(resume.kind)) return { refused: 'bad-request' };
    const start = this.resumesAt(resume);
    if (typeof start === 'string') return { refused: start };
    if (this.tokens.stuck(resume)) return { events: [], ends: false, fired: undefined, mint: null, left: () => 'on an iterator token whose batch came back empty' };
    const stream = this.stream;
    const total = stream.length;
    const left = (at: number): string => `at ${at} of ${total} eligible events`;
    if (quirk === 'repeat') {
      // repeat: "the binding's previous page again, token and all; fires when that page had a
      // token, the source has not changed since, and it does not start past where the request resumes".
      const last = this.previous.get(this.bound);
      const first = last?.events[0];
      const from = stream[start];
      if (last !== undefined && last.next !== null && this.previousChanges.get(this.bound) === this.changes && (first === undefined || from === undefined || comparePositions(first, from) <= 0)) {
        return { events: last.events, ends: false, fired: 'repeat', repeat: last, mint: null, left: () => '' };
      }
    }
    // empty: "no events, and a token that resumes exactly where the request did; fires when eligible events remain there".
    if (quirk === 'empty' && start < total) return { events: [], ends: false, fired: 'empty', mint: { at: start === 0 ? null : positionOf(stream[start - 1] as SourceEvent) }, left: () => left(start) };
    // short: "one event although more were asked for; fires when more than one eligible event
    // remains and the page could hold more than one".
    const room = Math.min(limit, this.pageSize);
    const short = quirk === 'short' && total - start > 1 && room > 1;
    const page = stream.slice(start, start + (short ? 1 : room));
    // An offset may point past the end: the page is then empty, and ends the stream.
    const end = start + page.length;
    const ends = end >= total;
    const mint = ends ? null : { at: positionOf(page[page.length - 1] as SourceEvent) };
    let fired: PageQuirk | undefined = short ? 'short' : undefined;
    let events: readonly SourceEvent[] = page;
    // overlap: "the page begins with the two eligible events before where it resumes (fewer at
    // the start of the stream), then the page; fires when the request does not resume at the start".
    if (quirk === 'overlap' && start > 0) {
      events = [...stream.slice(Math.max(0, start - OVERLAP), start), ...page];
      fired = 'overlap';
    }
    // reorder: "the page's events in reverse order when they are an even number, and with the
    // first event moved to the end when odd; fires when the page holds two events or more".
    if (quirk === 'reorder' && page.length > 1) {
      events = page.length % 2 === 0 ? [...page].reverse() : [...page.slice(1), page[0] as SourceEvent];
      fired = 'reorder';
    }
    return { events, ends, fired, mint, left: () => left(end) };
  }

  /**
   * A page of a newest-first source: resumed at a point (the start: above every event; a
   * token: below the oldest event of the page that carried it, or, for an empty page, where
   * that page's request resumed), it holds the eligible events just below that point, the
   * newest first, as many as the page size and the limit allow; it ends the stream exactly
   * when no eligible event is left below its oldest one. Of the quirks only `empty`, `short`
   * and `stale` mean anything read downwards; the others never fire.
   */
  private serveDownwards(resume: Resume, limit: number, quirk: PageQuirk | undefined): Serving {
    let below: Position | null = null;
    if (resume.kind === 'token') {
      const meaning = this.below.get(resume.token);
      if (meaning === undefined || meaning.bound !== this.bound) return { refused: 'stale-token' };
      below = meaning.before;
    } else if (resume.kind !== 'start') return { refused: 'bad-request' };
    const under = below;
    // How many eligible events lie below the resume point: the page serves the newest of them.
    const end = under === null ? this.stream.length : this.firstIndex((p) => comparePositions(p, under) >= 0);
    if (quirk === 'empty' && end > 0) return { events: [], ends: false, fired: 'empty', mint: { at: under }, left: () => `with ${end} older eligible events left` };
    const room = Math.min(limit, this.pageSize);
    const short = quirk === 'short' && end > 1 && room > 1;
    const begin = Math.max(0, end - (short ? 1 : room));
    const ends = begin === 0;
    const oldest = this.stream[begin];
    return {
      events: this.stream.slice(begin, end).reverse(),
      ends,
      fired: short ? 'short' : undefined,
      mint: ends || oldest === undefined ? null : { at: positionOf(oldest) },
      left: () => `with ${begin} older eligible events left`,
    };
  }

  /** Where a request resumes in the eligible stream, or the error the source refuses it with. */
  private resumesAt(resume: Resume): number | 'bad-request' | 'stale-token' {
    switch (resume.kind) {
      case 'start':
        return 0;
      case 'token': {
        const meaning = this.tokens.get(resume.token);
        // A token minted under another binding is as good as unknown (R2).
        if (meaning === undefined || meaning.bound !== this.bound) return 'stale-token';
        const after = meaning.after;
        return after === null ? 0 : this.firstIndex((p) => comparePositions(p, after) > 0);
      }
      case 'after':
        // "strictly after a full position"
        return isPosition(resume.position) ? this.firstIndex((p) => comparePositions(p, resume.position as Position) > 0) : 'bad-request';
      // A skip past the key counts eligible events from there, as an offset counts from the start.
      case 'key-gt':
        return skipped(resume.skip, this.firstIndex((p) => compareKeys(p.key, resume.key) > 0));
      case 'key-gte':
        return skipped(resume.skip, this.firstIndex((p) => compareKeys(p.key, resume.key) >= 0));
      case 'offset':
        // "which shifts under mutation": an index into the stream as it is now.
        return Number.isInteger(resume.offset) && resume.offset >= 0 ? resume.offset : 'bad-request';
    }
  }

  /**
   * A page served as the replay decided it, taken in: its token now means what `mint` says
   * (the first meaning a token was given stays), and, unless it was an empty page, it is the
   * binding's previous page for a later repeat. Says what is wrong with it, if anything.
   */
  served(resume: Resume, page: Page, serving: Served): string | null {
    if (serving.repeat !== undefined) return null;
    if (this.newestFirst) {
      if (page.next !== null && serving.mint !== null && !this.below.has(page.next)) this.below.set(page.next, { before: serving.mint.at, bound: this.bound });
      return null;
    }
    // What the token means, and what a re-sent one must serve, by its kind (model/tokens.ts).
    const wrong = this.tokens.served({ resume, bound: this.bound, page, mint: serving.mint, fired: serving.fired });
    // A repeat serves the previous page that carried events, and only one served since the source last changed.
    if (serving.fired !== 'empty') {
      this.previous.set(this.bound, page);
      this.previousChanges.set(this.bound, this.changes);
    }
    return wrong;
  }

  /** Whether a page carried this token and it expired since: a token the source really issued, then forgot. */
  expired(token: string): boolean {
    return this.tokens.expired(token);
  }

  /** The token expired (a `stale` page): never accepted again. */
  expire(token: string): void {
    this.tokens.delete(token);
    this.below.delete(token);
  }
}

/** Where a key resume starts, `skip` eligible events past where its key puts it (none when absent), or a refusal of a skip that is no count. */
function skipped(skip: number | undefined, at: number): number | 'bad-request' {
  if (skip === undefined) return at;
  return Number.isInteger(skip) && skip >= 0 ? at + skip : 'bad-request';
}
