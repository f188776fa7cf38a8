import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { Delivery, DurableState, Page, Resume, StoreOp } from '../../model/history.js';
import { comparePositions, isPosition, type Position } from '../../model/order.js';
import type { TokenKind } from '../../model/tokens.js';
import type { SourceProfile } from '../../scenarios/profiles.js';
import type { Consumer, WorkerWorld } from '../adapter/consumer.js';

/**
 * The reference consumer: the seed procedure, steps 1 to 9, as plainly as it can be written.
 * It is what a correct consumer looks like, and every mutant is a small variation of it.
 *
 * Two positions are kept apart. The traversal cursor (`resume`) lives only in memory; the
 * committed watermark lives in the store, is fenced by the lease generation and a
 * compare-and-set, and only ever covers the gap-free prefix of events with durable
 * outcomes that the source's contract says can no longer change. A page token is persisted
 * only as a replay anchor, next to the watermark it replays from.
 */
export interface ReferenceOptions {
  /** `outbox`: effects go to the sink through a durable outbox (at-least-once at the sink). */
  readonly delivery?: Delivery | 'outbox';
  /** Events of one page in flight at once; the watermark still advances only through the prefix. */
  readonly concurrency?: number;
  /**
   * `cursor`: the bookmark is a cursor value, `{ key, id: '' }`, the point just before every
   * event at the key of the last event passed, as many incremental syncs keep it. Every event
   * at that key is read again after a restart and skipped through its completion record.
   */
  readonly bookmark?: 'position' | 'cursor';
  /**
   * `newest-first`: the consumer is written for an API that lists the newest events first,
   * and declares it (its profile's `order`), so its worlds are all newest-first. Every
   * variant reads a newest-first source correctly when it meets one (see `newestFirstPass`).
   */
  readonly order?: 'ascending' | 'newest-first';
  /**
   * Checkpoint every N records instead of after every page, as connectors do: the watermark
   * moves once at least N events were handled since the last checkpoint, and at the end of
   * the stream. A crash in between replays up to N records, which completion records absorb.
   */
  readonly checkpointEvery?: number;
  /**
   * The source API the consumer declares it is written for, e.g. `PROFILES.scrollApi`: its
   * worlds are all of that shape. Every variant reads any source it meets correctly, whatever
   * its tokens are (see `tokenKind`).
   */
  readonly profile?: SourceProfile;
  readonly name?: string;
}

export function referenceConsumer(options: ReferenceOptions = {}): Consumer {
  const mode = options.delivery ?? 'at-least-once';
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const bookmark = options.bookmark ?? 'position';
  const newestFirst = options.order === 'newest-first';
  return {
    name:
      options.name ??
      `reference(${mode}${concurrency > 1 ? `, ${concurrency} in flight` : ''}${bookmark === 'cursor' ? ', cursor bookmark' : ''}${newestFirst ? ', newest first' : ''}${options.checkpointEvery === undefined ? '' : `, a checkpoint every ${options.checkpointEvery} records`})`,
    capabilities: {
      delivery: mode === 'exactly-once' ? 'exactly-once' : 'at-least-once',
      ...(newestFirst || options.profile !== undefined ? { profile: { ...options.profile, ...(newestFirst ? { order: 'newest-first' as const } : {}) } } : {}),
    },
    run: (world) => {
      const o = { delivery: mode, concurrency, ...(options.checkpointEvery === undefined ? {} : { checkpointEvery: options.checkpointEvery }) };
      return (bookmark === 'cursor' ? new CursorIncarnation(world, o) : new Incarnation(world, o)).run();
    },
  };
}

/** Why a pass over the stream ended. */
type PassEnd = 'caught-up' | 'unprovable' | 'retry';

/** One life of the reference consumer; everything here is lost on a crash. */
export class Incarnation {
  /** The durable watermark as last read or written by this incarnation (step 3). */
  protected watermark: Position | null = null;
  /** The exact value in the store, for compare-and-set. */
  protected stored: unknown = null;
  /** This incarnation's lease generation; every watermark commit is fenced by it (step 6). */
  protected generation = 0;
  /** The largest head the source has shown, for the replay window. */
  protected head: number | null = null;
  /** Tokens the source said were stale: an anchor holding one cannot replay (step 9). */
  private readonly staleTokens = new Set<string>();
  /** The anchor token this pass replays from, if it does. */
  private replaying: string | null = null;
  /**
   * Where each token the source handed out continues: after the largest position of the page
   * that carried it (null: from the very start). An overlapping or repeated page starts
   * before its token's predecessor ended, so the token that fetched a page may continue
   * after events the page still shows; it replays from a watermark only if it starts at or
   * before it (step 8). A token missing here starts somewhere unknown.
   */
  private readonly tokenStarts = new Map<string, Position | null>();
  protected readonly delivery: Delivery | 'outbox';
  protected readonly concurrency: number;
  /** See ReferenceOptions.checkpointEvery; undefined: after every page. */
  private readonly checkpointEvery: number | undefined;
  /** Events handled since this incarnation's last checkpoint. */
  private sinceCheckpoint = 0;

  /**
   * What the source's page tokens are. A plain continuation can be sent again and serves the
   * same page. A scroll cannot: the server moved it on when it served the page, so after
   * a request whose answer was lost (a timeout, a crash after it) the page is gone from the
   * scroll, and the only way back to it is a new read from the watermark; no scroll token is
   * ever kept as an anchor. On an iterator chain the token is the way on, an empty batch's
   * too: sent again, the token of an empty batch serves it again.
   */
  protected get tokenKind(): TokenKind {
    return this.world.source.tokens ?? 'continuation';
  }

  /** What progress is stored under: the binding's fingerprint, so bindings never share it (step 2). */
  protected get label(): string {
    return this.world.fingerprint;
  }

  constructor(
    protected readonly world: WorkerWorld,
    options: { readonly delivery?: Delivery | 'outbox'; readonly concurrency?: number; readonly checkpointEvery?: number } = {},
  ) {
    this.delivery = options.delivery ?? 'at-least-once';
    this.concurrency = options.concurrency ?? 1;
    this.checkpointEvery = options.checkpointEvery;
  }

  async run(): Promise<void> {
    // Every failure sends the consumer back to durable state: replay from there is always
    // safe because completion records absorb the duplicates (step 4, step 7).
    for (;;) {
      try {
        this.generation = await this.world.lease();
        const end = await this.pass();
        if (end === 'caught-up') {
          // Another worker may have handed an event to the outbox and died before relaying
          // it; caught up means delivered, so deliver what is still waiting first.
          if (this.delivery === 'outbox') await this.relay((await this.world.load()).outbox);
          return await this.world.caughtUp();
        }
        if (end === 'unprovable') {
          return await this.world.fail('the source promises no stability, so no hole behind the watermark can be proven empty (R10)');
        }
      } catch (error) {
        if (!isWorldError(error)) throw error;
      }
    }
  }

  /** One traversal from the durable replay position to the end of the bound stream. */
  protected async pass(): Promise<PassEnd> {
    if (this.world.source.order === 'newest-first') return this.newestFirstPass();
    const state = await this.world.load();
    await this.relay(state.outbox);
    let resume = this.resumeFrom(state);
    for (;;) {
      const page = await this.fetch(resume);
      if (page.head !== null) this.head = Math.max(this.head ?? page.head, page.head);
      const fresh = this.normalize(page);
      const ok = await this.handle(fresh, resume, page);
      if (!ok) return 'retry';
      if (this.isLastPage(page, fresh)) break;
      // Renewing the lease each page keeps it; if the generation changed, another worker
      // may have moved the watermark, so start again from durable state.
      if ((await this.world.lease()) !== this.generation) return 'retry';
      // The token moves the live traversal only; it was persisted above solely as an anchor.
      resume = this.continueAfter(page);
    }
    // The seed's limits: without a stable source no hole can be proven, so the only honest
    // end is a visible one.
    return this.world.source.contract.kind === 'none' ? 'unprovable' : 'caught-up';
  }

  /**
   * One sync of a source that lists the newest events first: from the newest page down,
   * until a page reaches an event the watermark already covers, or the stream ends. Only
   * then is every event between the old watermark and the newest one read handled, and only
   * then does the watermark move, to the newest settled position read: committed after the
   * first page, it would cover the older events not read yet, and a crash would lose them.
   * Nothing of the read is kept: after a crash the next incarnation starts again from the
   * newest page, and completion records skip what was handled (step 4).
   *
   * What is settled is judged by the head the sync began with: anything the source puts in
   * while the read goes down lands within its contract of that head or later, so never at or
   * before a position settled by it, though it may land behind the read (a late event in a
   * replay window), where a watermark judged by a later head could pass it unread.
   */
  protected async newestFirstPass(): Promise<PassEnd> {
    const state = await this.world.load();
    await this.relay(state.outbox);
    const mine = state.watermark?.binding === this.label ? state.watermark.value : null;
    this.stored = mine;
    this.watermark = isPosition(mine) ? mine : null;
    // The bookmark the read goes down to: the watermark as this sync found it.
    const bookmark = this.watermark;
    let horizon: number | null | undefined;
    let newest: Position | null = null;
    let resume: Resume = { kind: 'start' };
    for (;;) {
      const page = await this.fetch(resume);
      if (page.head !== null) this.head = Math.max(this.head ?? page.head, page.head);
      if (horizon === undefined) horizon = page.head;
      const fresh = freshSince(page, bookmark);
      if (!(await this.handleAll(fresh))) return 'retry';
      for (const e of fresh) if (this.settledBy(e, horizon) && (newest === null || comparePositions(positionOf(e), newest) > 0)) newest = positionOf(e);
      const reached = page.next === null || (bookmark !== null && page.events.some((e) => comparePositions(positionOf(e), bookmark) <= 0));
      if (!reached) await this.pageRead(newest);
      if (reached) break;
      if ((await this.world.lease()) !== this.generation) return 'retry';
      resume = { kind: 'token', token: page.next as string };
    }
    if (newest !== null && (this.watermark === null || comparePositions(newest, this.watermark) > 0)) await this.advance(newest, null);
    return this.world.source.contract.kind === 'none' ? 'unprovable' : 'caught-up';
  }

  /** After each page of a newest-first read that has not reached the bookmark yet: nothing is committed mid-read. */
  protected async pageRead(_newest: Position | null): Promise<void> {}

  /** Whether nothing can land at or before this event any more, judged by the head `horizon` (see newestFirstPass). */
  private settledBy(e: SourceEvent, horizon: number | null | undefined): boolean {
    const { contract } = this.world.source;
    if (contract.kind !== 'replay-window') return this.settled(e);
    return horizon !== null && horizon !== undefined && (e.key[0] ?? 0) < horizon - contract.window;
  }

  /** Steps 5 and 7 for a newest-first page: each event handled, unless a completion record says it was; false when one failed. */
  private async handleAll(events: readonly SourceEvent[]): Promise<boolean> {
    const done = await this.alreadyDone(events);
    for (const [i, e] of events.entries()) {
      if (done[i]) continue;
      try {
        await this.apply(e);
      } catch (error) {
        if (!isWorldError(error)) throw error;
        return false;
      }
    }
    return true;
  }

  /**
   * Step 9: only the absence of a next token ends the stream. An empty, short or repeated
   * page proves nothing about what comes after it.
   */
  protected isLastPage(page: Page, _fresh: readonly SourceEvent[]): boolean {
    return page.next === null;
  }

  protected async fetch(resume: Resume): Promise<Page> {
    try {
      const page = await this.world.fetch({ resume, limit: this.world.source.pageSize });
      if (page.next !== null) {
        const last = page.events.reduce<Position | undefined>((m, e) => (m === undefined || comparePositions(positionOf(e), m) > 0 ? positionOf(e) : m), undefined);
        // An empty page's token resumes where the request did.
        const from = resume.kind === 'start' ? null : resume.kind === 'after' && isPosition(resume.position) ? resume.position : resume.kind === 'token' ? this.tokenStarts.get(resume.token) : undefined;
        const start = last ?? from;
        if (start !== undefined) this.tokenStarts.set(page.next, start);
      }
      return page;
    } catch (error) {
      if (isWorldError(error) && error.code === 'stale-token' && resume.kind === 'token') {
        this.staleTokens.add(resume.token);
        // An iterator chain is the same chain every time it is followed from the anchor: an
        // empty batch there serves the same expired token again, so the anchor cannot replay either.
        if (this.tokenKind === 'iterator' && this.replaying !== null) this.staleTokens.add(this.replaying);
      }
      throw error;
    }
  }

  /** Step 2: progress is bound. Progress stored under another binding is ignored. */
  protected resumeFrom(state: DurableState): Resume {
    const mine = state.watermark?.binding === this.label ? state.watermark.value : null;
    this.stored = mine;
    this.watermark = isPosition(mine) ? mine : null;
    this.replaying = null;
    if (this.watermark === null) return { kind: 'start' };
    if (this.world.source.resumes.includes('after')) return { kind: 'after', position: this.watermark };
    if (this.world.source.resumes.includes('key-gte')) return { kind: 'key-gte', key: this.watermark.key };
    // Only opaque tokens: replay from the anchor if it is tied to this very watermark and
    // still accepted (step 8), and not a scroll's (it continues wherever the scroll got to);
    // otherwise from the start, deduplicating up to the watermark.
    const anchor = state.anchor;
    if (
      this.tokenKind !== 'scroll' &&
      anchor?.binding === this.label &&
      anchor.token !== null &&
      !this.staleTokens.has(anchor.token) &&
      samePosition(anchor.watermark, this.watermark)
    ) {
      this.replaying = anchor.token;
      return { kind: 'token', token: anchor.token };
    }
    return { kind: 'start' };
  }

  protected continueAfter(page: Page): Resume {
    const last = page.events.at(-1);
    // A scroll or an iterator chain is read by its tokens; `after` would open a new read each page.
    if (this.tokenKind === 'continuation' && this.world.source.resumes.includes('after') && last) return { kind: 'after', position: positionOf(last) };
    return { kind: 'token', token: page.next as string };
  }

  /** Step 4: normalize into the stable order and drop what the watermark already covers. */
  protected normalize(page: Page): SourceEvent[] {
    const seen = new Set<string>();
    return [...page.events]
      .sort((a, b) => comparePositions(positionOf(a), positionOf(b)))
      .filter((e) => {
        const key = `${e.id}@${e.version}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return this.watermark === null || comparePositions(positionOf(e), this.watermark) > 0;
      });
  }

  /**
   * Steps 5 to 7: handle the page's events in order, `concurrency` at a time, then advance
   * the watermark through the gap-free prefix that has durable outcomes and can no longer
   * change. Returns false when an event failed: the watermark then stops before it.
   */
  protected async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    const done = await this.alreadyDone(events);
    const prefix: SourceEvent[] = [];
    let failed = false;
    for (let i = 0; i < events.length && !failed; i += this.concurrency) {
      const group = events.slice(i, i + this.concurrency);
      const results = await Promise.allSettled(group.map((e, j) => (done[i + j] ? Promise.resolve() : this.apply(e))));
      for (const [j, r] of results.entries()) {
        if (r.status === 'rejected') {
          if (!isWorldError(r.reason)) throw r.reason;
          failed = true;
        }
        if (failed) break;
        prefix.push(group[j] as SourceEvent);
      }
    }
    const settled = prefix.filter((e) => this.settled(e));
    const to = settled.at(-1);
    this.sinceCheckpoint += prefix.length;
    // With an interval, only a checkpoint that is due moves the watermark, and the stream's end.
    const due = this.checkpointEvery === undefined || this.sinceCheckpoint >= this.checkpointEvery || (page.next === null && !failed);
    if (to !== undefined && due) {
      this.sinceCheckpoint = 0;
      // Anchor: the token that fetched this page replays the rest of it, if it starts at or
      // before the new watermark; only a page whose every event is covered lets the anchor
      // move on to the next page's token (step 8).
      const covered = !failed && settled.length === events.length && page.next !== null;
      const replays = resume.kind === 'token' && this.startsBy(resume.token, positionOf(to));
      await this.advance(positionOf(to), covered ? page.next : replays ? resume.token : null);
    }
    return !failed;
  }

  /** Whether the token continues at or before `to`, so that nothing after `to` lies behind it. */
  private startsBy(token: string, to: Position): boolean {
    if (!this.tokenStarts.has(token)) return false;
    const start = this.tokenStarts.get(token) ?? null;
    return start === null || comparePositions(start, to) <= 0;
  }

  /**
   * Step 6 and the seed's limits: an event may be passed by the watermark only once the
   * source's contract says nothing can still land at or before it. With a replay window of
   * n, that is an event more than n behind the head; re-reading the window finds the rest.
   */
  protected settled(e: SourceEvent): boolean {
    const { contract } = this.world.source;
    switch (contract.kind) {
      case 'snapshot':
      case 'insertion-stable':
        return true;
      case 'replay-window':
        return this.head !== null && (e.key[0] ?? 0) < this.head - contract.window;
      case 'none':
        // Anything may still change anywhere: no watermark is ever provable, so none is
        // committed. Completion records alone keep the replays duplicate-only.
        return false;
    }
  }

  /** Step 4: completion records say which events a previous life or worker already handled. */
  protected alreadyDone(events: readonly SourceEvent[]): Promise<boolean[]> {
    return this.world.completed(events.map(refOf));
  }

  /**
   * Step 5 for one event. A poison event, whose effect the world refuses every time, is
   * dead-lettered: parked durably for a person, which is its outcome; retrying it forever
   * would stall everything behind it.
   */
  protected async apply(e: SourceEvent): Promise<void> {
    try {
      await this.effect(e);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'rejected')) throw error;
      await this.park(e, error.message);
    }
  }

  protected async park(e: SourceEvent, reason: string): Promise<void> {
    try {
      await this.world.commit([{ op: 'unless-completed', event: refOf(e) }, { op: 'dead-letter', event: refOf(e), reason }, { op: 'complete', event: refOf(e) }]);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'conflict')) throw error;
    }
  }

  /** The effect and its completion record, coupled as the delivery mode requires. */
  protected async effect(e: SourceEvent): Promise<void> {
    if (this.delivery === 'at-least-once') {
      await this.world.emit(refOf(e), e.payload);
      await this.world.commit([{ op: 'complete', event: refOf(e) }]);
      return;
    }
    const handoff: StoreOp[] =
      this.delivery === 'exactly-once'
        ? [{ op: 'effect', event: refOf(e), payload: e.payload }]
        : [{ op: 'outbox', event: refOf(e), payload: e.payload }];
    try {
      await this.world.commit([{ op: 'unless-completed', event: refOf(e) }, ...handoff, { op: 'complete', event: refOf(e) }]);
    } catch (error) {
      // Already completed by an earlier life or another worker: a durable outcome, not a failure.
      if (!(isWorldError(error) && error.code === 'conflict')) throw error;
      return;
    }
    if (this.delivery === 'outbox') await this.relay([{ event: refOf(e), payload: e.payload }]);
  }

  /** Delivers outbox entries to the sink, then marks them; a crash between repeats the delivery. */
  protected async relay(entries: DurableState['outbox']): Promise<void> {
    for (const entry of entries) {
      await this.world.emit(entry.event, entry.payload);
      await this.world.commit([{ op: 'outbox-done', event: entry.event }]);
    }
  }

  /** Step 6: fenced by the lease generation and a compare-and-set on the value read. */
  protected async advance(to: Position, token: string | null): Promise<void> {
    const value = { key: [...to.key], id: to.id };
    const ops: StoreOp[] = [
      { op: 'watermark', binding: this.label, value, expect: this.stored },
      { op: 'anchor', binding: this.label, token: this.tokenKind === 'scroll' ? null : token, watermark: value },
    ];
    await this.world.commit(ops, { fence: this.generation });
    this.stored = value;
    this.watermark = value;
  }
}

export function isWorldError(error: unknown): error is Error & { code: string; definite: boolean } {
  return error instanceof Error && error.name === 'WorldError';
}

/** A newest-first page's events the bookmark does not cover, each version once, in the stable order. */
function freshSince(page: Page, bookmark: Position | null): SourceEvent[] {
  const seen = new Set<string>();
  return [...page.events]
    .sort((a, b) => comparePositions(positionOf(a), positionOf(b)))
    .filter((e) => {
      const key = `${e.id}@${e.version}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return bookmark === null || comparePositions(positionOf(e), bookmark) > 0;
    });
}

function samePosition(a: unknown, b: Position): boolean {
  return isPosition(a) && comparePositions(a, b) === 0;
}

/**
 * The reference with a cursor-value bookmark: it commits `{ key, id: '' }`, which covers every
 * event with a smaller key and none at the key itself, and resumes after it, so the events
 * at that key are read again and their completion records skip the ones already handled.
 */
class CursorIncarnation extends Incarnation {
  protected override async advance(to: Position, token: string | null): Promise<void> {
    await super.advance({ key: to.key, id: '' }, token);
  }
}
