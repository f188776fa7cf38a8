import { fingerprint, isEligible, type Binding } from '../../model/binding.js';
import { positionOf, type SourceEvent } from '../../model/event.js';
import type { FetchRequest, Page } from '../../model/history.js';
import { compareKeys, comparePositions, isPosition, type Position } from '../../model/order.js';
import type { MutationSpec, PageQuirk, SourceSpec } from '../../scenarios/plan.js';
import { WorldError } from './errors.js';
import { TokenMint } from './tokens.js';

/** What a token means to the source that minted it: continue after this position (null: from the start). */
interface TokenMeaning {
  readonly after: Position | null;
  readonly binding: string;
}

/**
 * The simulated paginated API. It holds the current version of every event, serves the
 * bound stream in the stable order, applies the binding's filter and upper bound itself
 * (as real APIs do), resumes by opaque token or by the key forms it offers, and, when the
 * plan says so, misbehaves the way real APIs do.
 */
export class Source {
  private events: SourceEvent[];
  private readonly tokens: TokenMint<TokenMeaning>;
  /** The largest first ordering field ever held: the head a replay window is measured from. */
  private clock: number | null;
  private readonly lastPage = new Map<string, Page>();
  /** How many changes the source had taken when each last page was served. */
  private readonly lastPageChanges = new Map<string, number>();
  private changes = 0;
  private inserted = 0;

  constructor(
    initial: readonly SourceEvent[],
    readonly spec: SourceSpec,
    seed: string,
  ) {
    this.events = [...initial].sort(byPosition);
    this.tokens = new TokenMint(seed);
    this.clock = initial.reduce<number | null>((m, e) => Math.max(m ?? Number.NEGATIVE_INFINITY, e.key[0] ?? 0), null);
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
    const bound = fingerprint(binding);
    if (quirk === 'stale' && request.resume.kind === 'token') {
      // The token expired: it will never be accepted again, so a consumer must fall back.
      this.tokens.forget(request.resume.token);
      this.quirked = true;
      throw new WorldError('stale-token', true, 'the page token expired');
    }
    const stream = this.events.filter((e) => isEligible(binding, e));
    const start = this.startIndex(stream, bound, request);
    if (quirk === 'repeat') {
      // A repeat serves the previous page again, as a cache would: never one that continues
      // nowhere (it would claim an end of the stream that no longer holds), one from before a
      // change (it would hide the change from a consumer re-reading its replay window), or
      // one that starts past where this request starts (it would skip what lies between).
      // Those are lies no consumer could see through; a page it has seen before is not.
      const previous = this.lastPage.get(bound);
      const first = previous?.events[0];
      const from = stream[start];
      const behind = first === undefined || from === undefined || comparePositions(positionOf(first), positionOf(from)) <= 0;
      if (previous && previous.next !== null && this.lastPageChanges.get(bound) === this.changes && behind) {
        this.quirked = true;
        return previous;
      }
    }
    if (quirk === 'empty' && start < stream.length) {
      // No events, yet a token that resumes exactly where this request did.
      const before = stream[start - 1];
      this.quirked = true;
      return { events: [], next: this.tokens.mint({ after: before ? positionOf(before) : null, binding: bound }), head: this.clock };
    }
    let size = Math.min(request.limit, this.spec.pageSize);
    if (quirk === 'short' && start + 1 < stream.length && size > 1) {
      size = 1;
      this.quirked = true;
    }
    const served = stream.slice(start, start + size);
    const last = served.at(-1);
    const next = start + served.length < stream.length && last ? this.tokens.mint({ after: positionOf(last), binding: bound }) : null;
    let events = served;
    if (quirk === 'overlap' && start > 0) {
      events = [...stream.slice(Math.max(0, start - 2), start), ...served];
      this.quirked = true;
    }
    if (quirk === 'reorder' && served.length > 1) {
      events = [...served].reverse();
      this.quirked = true;
    }
    const page: Page = { events, next, head: this.clock };
    this.lastPage.set(bound, page);
    this.lastPageChanges.set(bound, this.changes);
    return page;
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
    const behind = (limit: number): number => Math.max(0, head - Math.min(spec.back, limit));
    const target = this.events.length > 0 ? this.events[spec.target % this.events.length] : undefined;
    let kind = spec.kind;
    let first: number;
    switch (contract.kind) {
      case 'snapshot':
        // Nothing inside the snapshot ever changes: new events land beyond the bound.
        kind = 'insert';
        first = Math.max(head + 1, (binding.upTo ?? head) + 1);
        break;
      case 'insertion-stable':
        // Every change, an update included, lands after the head (an `updated_at` clock).
        first = head + 1;
        break;
      case 'replay-window':
        first = behind(contract.window);
        if (kind === 'flip' && target && (target.key[0] ?? 0) >= head - contract.window) first = target.key[0] ?? first;
        break;
      case 'none':
        first = behind(Number.POSITIVE_INFINITY);
        if (kind === 'flip' && target) first = target.key[0] ?? first;
        break;
    }
    let event: SourceEvent;
    if (kind === 'insert' || !target) {
      let id = `m${this.inserted++}`;
      while (this.events.some((e) => e.id === id)) id = `m${this.inserted++}`;
      const attr = spec.target % 2 === 0 ? 'order' : 'refund';
      event = { id, version: 1, key: keyAt(first), attrs: { kind: attr }, payload: `${id}:${attr}` };
      kind = 'insert';
    } else {
      const current = String(target.attrs.kind ?? 'order');
      const attr = kind === 'flip' ? (current === 'order' ? 'refund' : 'order') : current;
      const version = target.version + 1;
      const key = kind === 'flip' && first === target.key[0] ? target.key : keyAt(first);
      event = { ...target, version, key, attrs: { ...target.attrs, kind: attr }, payload: `${target.id}:v${version}:${attr}` };
    }
    this.changes++;
    this.events = this.events.filter((e) => e.id !== event.id);
    this.events.push(event);
    this.events.sort(byPosition);
    this.clock = Math.max(this.clock ?? Number.NEGATIVE_INFINITY, event.key[0] ?? 0);
    return { event, mutation: kind };
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
        // A token minted for another binding is as good as unknown (R2).
        if (!meaning || meaning.binding !== bound) throw new WorldError('stale-token', true);
        const after = meaning.after;
        return after === null ? 0 : firstIndex(stream, (e) => comparePositions(positionOf(e), after) > 0);
      }
      case 'after': {
        const after = resume.position;
        if (!isPosition(after)) throw new WorldError('bad-request', true, 'resume after needs a position { key, id }');
        return firstIndex(stream, (e) => comparePositions(positionOf(e), after) > 0);
      }
      case 'key-gt':
        return firstIndex(stream, (e) => compareKeys(e.key, resume.key) > 0);
      case 'key-gte':
        return firstIndex(stream, (e) => compareKeys(e.key, resume.key) >= 0);
      case 'offset':
        if (!Number.isInteger(resume.offset) || resume.offset < 0) throw new WorldError('bad-request', true, 'offset must be a non-negative integer');
        return resume.offset;
    }
  }
}

function byPosition(a: SourceEvent, b: SourceEvent): number {
  return comparePositions(positionOf(a), positionOf(b));
}

function firstIndex<T>(items: readonly T[], pred: (item: T) => boolean): number {
  const i = items.findIndex(pred);
  return i === -1 ? items.length : i;
}
