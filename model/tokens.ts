import type { Page, PageQuirk, Resume } from './history.js';
import type { SourceEvent } from './event.js';
import { comparePositions, type Position } from './order.js';

/**
 * What a page token is, as an API documents it:
 *
 * - `continuation`: a plain continuation. A token names a place in the stream; sending it
 *   again serves the same page again, so a request that was lost can simply be retried.
 * - `scroll`: a stateful scroll (an Elasticsearch scroll, a server-side cursor). A token names
 *   a scroll the server keeps, and the server moves the scroll on every time it serves a
 *   page. Every token of a scroll continues from where the scroll is, so a request that was
 *   served but whose response was lost (a timeout, a crash after it) cannot be retried: the
 *   retry gets the page after the lost one. Any other request opens a new scroll.
 * - `iterator`: an iterator chain (Kinesis or DynamoDB Streams shard iterators). A token
 *   names a place like a continuation, except that a request whose batch came back empty
 *   serves that same empty batch every time it is sent again: only the empty batch's own
 *   `next` moves on.
 *
 * The world serves these; ground truth replays them (`TokenReplay`), each from the rule
 * above and with no code in common.
 */
export const TOKEN_KINDS = ['continuation', 'scroll', 'iterator'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** Where a token resumes, under which binding: the meaning ground truth's page replay reads. */
export interface TokenMeaning {
  /** Resume after this position; null: from the start of the stream. */
  readonly after: Position | null;
  readonly bound: string;
}

/** A scroll the server keeps: where it has got to, and whether it expired. */
interface Scroll {
  at: Position | null;
  open: boolean;
}

interface Issued extends TokenMeaning {
  /** The scroll the token belongs to, on a scroll source. */
  readonly scroll: Scroll | null;
}

/**
 * One page served (it took effect, whether or not its caller heard it), as ground truth
 * decided it. Never a repeat (the previous page served again): that reads nothing new and
 * moves no scroll.
 */
export interface Served {
  readonly resume: Resume;
  /** The fingerprint of the binding it was served under. */
  readonly bound: string;
  /** The page as recorded. */
  readonly page: Page;
  /** Where a token the page carries resumes, by the rules of a continuation; null when it carries none it mints. */
  readonly mint: { readonly at: Position | null } | null;
  /** The page quirk that fired on it. */
  readonly fired: PageQuirk | undefined;
}

/**
 * Ground truth of what the source's page tokens mean, replayed from the rule of the token
 * kind (see TOKEN_KINDS), for the page replay in truth.ts: `get` says where a token
 * resumes, `served` takes in each page served, `delete` expires a token, and `stuck` says
 * whether an iterator token serves its empty batch again.
 */
export class TokenReplay {
  private readonly issued = new Map<string, Issued>();
  /** Tokens a page carried that expired since. */
  private readonly gone = new Set<string>();
  /** On an iterator chain: each token whose batch came back empty, with that batch's next token. */
  private readonly emptyBatches = new Map<string, string>();

  constructor(readonly kind: TokenKind = 'continuation') {}

  /** Where a token resumes now; undefined when no page carried it, or it expired. */
  get(token: string): TokenMeaning | undefined {
    const issued = this.issued.get(token);
    if (issued === undefined || issued.scroll === null) return issued;
    // Every token of a scroll continues where the scroll has got to.
    return issued.scroll.open ? { after: issued.scroll.at, bound: issued.bound } : undefined;
  }

  has(token: string): boolean {
    return this.get(token) !== undefined;
  }

  /** The token expired (a `stale` page): never accepted again; on a scroll source, its whole scroll expired. */
  delete(token: string): void {
    const issued = this.issued.get(token);
    if (issued?.scroll) issued.scroll.open = false;
    if (issued !== undefined) this.gone.add(token);
    this.issued.delete(token);
    this.emptyBatches.delete(token);
  }

  /** Whether a page carried this token and it has expired since (itself, or its scroll): a token never issued has not. */
  expired(token: string): boolean {
    return this.gone.has(token) || this.issued.get(token)?.scroll?.open === false;
  }

  /** Whether this request re-sends an iterator token whose batch came back empty: it is served that empty batch again. */
  stuck(resume: Resume): boolean {
    return this.kind === 'iterator' && resume.kind === 'token' && this.emptyBatches.has(resume.token);
  }

  /**
   * Takes in a page served, and says what is wrong with it for its token kind (null when
   * nothing is): a token re-sent on an iterator chain after an empty batch must be that
   * same empty batch, with the same next token. A continuation's token means what `mint`
   * says. A scroll's token belongs to the scroll its request continued (or opened), and the
   * scroll moves on to the greatest position the page served.
   */
  served(s: Served): string | null {
    const { resume, page } = s;
    const token = resume.kind === 'token' ? resume.token : null;
    if (this.kind === 'iterator' && token !== null) {
      const next = this.emptyBatches.get(token);
      if (next !== undefined) {
        if (page.events.length === 0 && page.next === next) return null;
        return `served ${page.events.length} events and ${page.next === null ? 'no token' : `token ${page.next}`} for a token whose batch came back empty, which serves that empty batch again, with token ${next}`;
      }
      if (s.fired === 'empty' && page.next !== null) this.emptyBatches.set(token, page.next);
    }
    let scroll: Scroll | null = null;
    if (this.kind === 'scroll') {
      const continued = token === null ? undefined : this.issued.get(token)?.scroll;
      if (continued) {
        const last = greatest(page.events);
        if (last !== null && (continued.at === null || comparePositions(last, continued.at) > 0)) continued.at = last;
        scroll = continued;
      } else scroll = { at: s.mint?.at ?? null, open: true };
    }
    if (page.next !== null && s.mint !== null && !this.issued.has(page.next)) this.issued.set(page.next, { after: s.mint.at, bound: s.bound, scroll });
    return null;
  }
}

/** The greatest position among a page's events, in the stable order; null for an empty page. */
function greatest(events: readonly SourceEvent[]): Position | null {
  let max: SourceEvent | null = null;
  for (const e of events) if (max === null || comparePositions(e, max) > 0) max = e;
  return max === null ? null : { key: max.key, id: max.id };
}
