import { fingerprint, isEligible, type Binding } from '../../model/binding.js';
import { positionOf, type SourceEvent } from '../../model/event.js';
import type { FetchRequest, Page } from '../../model/history.js';
import { compareKeys, comparePositions, isPosition, type Position } from '../../model/order.js';
import type { SourceSpec } from '../../scenarios/plan.js';
import { WorldError } from './errors.js';
import { TokenMint } from './tokens.js';

/** What a token means to the source that minted it: continue after this position. */
interface TokenMeaning {
  readonly after: Position;
  readonly binding: string;
}

/**
 * The simulated paginated API. It holds the current version of every event, serves the
 * bound stream in the stable order, applies the binding's filter and upper bound itself
 * (as real APIs do), and resumes by opaque token or by the key forms it offers.
 */
export class Source {
  private events: SourceEvent[];
  private readonly tokens: TokenMint<TokenMeaning>;

  constructor(
    initial: readonly SourceEvent[],
    readonly spec: SourceSpec,
    seed: string,
  ) {
    this.events = [...initial].sort(byPosition);
    this.tokens = new TokenMint(seed);
  }

  /** The newest position in the source, eligible or not: where a replay window is measured from. */
  head(): Position | null {
    const last = this.events.at(-1);
    return last ? positionOf(last) : null;
  }

  /** Adds a new event or replaces the current version of one, keeping the stable order. */
  upsert(event: SourceEvent): void {
    this.events = this.events.filter((e) => e.id !== event.id);
    this.events.push(event);
    this.events.sort(byPosition);
  }

  fetch(binding: Binding, request: FetchRequest): Page {
    if (!Number.isInteger(request.limit) || request.limit < 1) {
      throw new WorldError('bad-request', true, `page limit must be a positive integer, got ${String(request.limit)}`);
    }
    const bound = fingerprint(binding);
    const stream = this.events.filter((e) => isEligible(binding, e));
    const start = this.startIndex(stream, bound, request);
    const events = stream.slice(start, start + Math.min(request.limit, this.spec.pageSize));
    const last = events.at(-1);
    const more = start + events.length < stream.length;
    const next = more && last ? this.tokens.mint({ after: positionOf(last), binding: bound }) : null;
    return { events, next };
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
        if (!meaning || meaning.binding !== bound) throw new WorldError('stale-token', true);
        return firstIndex(stream, (e) => comparePositions(positionOf(e), meaning.after) > 0);
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
        return Math.max(0, Math.floor(resume.offset));
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
