import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { Delivery, DurableState, Page, Resume, StoreOp } from '../../model/history.js';
import { comparePositions, isPosition, type Position } from '../../model/order.js';
import type { Consumer, WorkerWorld } from '../consumer.js';

/**
 * The reference consumer: the seed procedure, steps 1 to 9, as plainly as it can be written.
 * It is what a correct consumer looks like, and every mutant is a small variation of it.
 *
 * Two positions are kept apart. The traversal cursor (`resume`) lives only in memory; the
 * committed watermark lives in the store, is fenced by compare-and-set, and only ever
 * covers the gap-free prefix of events with durable outcomes. A page token is persisted
 * only as a replay anchor, next to the watermark it replays from.
 */
export interface ReferenceOptions {
  readonly delivery?: Delivery;
  /** Events of one page in flight at once; the watermark still advances only through the prefix. */
  readonly concurrency?: number;
  readonly name?: string;
}

export function referenceConsumer(options: ReferenceOptions = {}): Consumer {
  const delivery = options.delivery ?? 'at-least-once';
  const concurrency = Math.max(1, options.concurrency ?? 1);
  return {
    name: options.name ?? `reference(${delivery}${concurrency > 1 ? `, ${concurrency} in flight` : ''})`,
    capabilities: { delivery },
    run: (world) => new Incarnation(world, delivery, concurrency).run(),
  };
}

/** One life of the reference consumer; everything here is lost on a crash. */
export class Incarnation {
  /** The durable watermark as last read or written by this incarnation (step 3). */
  protected watermark: Position | null = null;
  /** The exact value in the store, for compare-and-set. */
  protected stored: unknown = null;

  constructor(
    protected readonly world: WorkerWorld,
    protected readonly delivery: Delivery,
    protected readonly concurrency: number,
  ) {}

  async run(): Promise<void> {
    // Every failure sends the consumer back to durable state: replay from there is always
    // safe because completion records absorb the duplicates (step 4, step 7).
    for (;;) {
      try {
        if (await this.pass()) return await this.world.caughtUp();
      } catch (error) {
        if (!isWorldError(error)) throw error;
      }
    }
  }

  /** One traversal from the durable replay position; true when the bound stream is exhausted. */
  protected async pass(): Promise<boolean> {
    const state = await this.world.load();
    let resume = this.resumeFrom(state);
    for (;;) {
      const page = await this.world.fetch({ resume, limit: this.world.source.pageSize });
      const events = this.normalize(page);
      const ok = await this.handle(events, resume, page);
      if (!ok) return false;
      if (page.next === null) return true;
      // The token moves the live traversal only; it was persisted above solely as an anchor.
      resume = this.continueAfter(page);
    }
  }

  /** Step 2: progress is bound. Progress stored under another binding is ignored. */
  protected resumeFrom(state: DurableState): Resume {
    const mine = state.watermark?.binding === this.world.fingerprint ? state.watermark.value : null;
    this.stored = mine;
    this.watermark = isPosition(mine) ? mine : null;
    if (this.watermark === null) return { kind: 'start' };
    if (this.world.source.resumes.includes('after')) return { kind: 'after', position: this.watermark };
    if (this.world.source.resumes.includes('key-gte')) return { kind: 'key-gte', key: this.watermark.key };
    // Only opaque tokens: replay from the anchor, if it is tied to this very watermark (step 8).
    const anchor = state.anchor;
    if (anchor?.binding === this.world.fingerprint && anchor.token !== null && samePosition(anchor.watermark, this.watermark)) {
      return { kind: 'token', token: anchor.token };
    }
    return { kind: 'start' };
  }

  protected continueAfter(page: Page): Resume {
    const last = page.events.at(-1);
    if (this.world.source.resumes.includes('after') && last) return { kind: 'after', position: positionOf(last) };
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
   * the watermark through the gap-free prefix that has durable outcomes. Returns false when
   * an event failed: the watermark then stops before it and the caller replays.
   */
  protected async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    const done = await this.world.completed(events.map(refOf));
    let prefix: SourceEvent | null = null;
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
        prefix = group[j] as SourceEvent;
      }
    }
    const complete = !failed;
    if (prefix !== null) {
      // Anchor: the token that fetched this page replays the rest of it; only a fully
      // handled page lets the anchor move on to the next page's token (step 8).
      // At the end of the stream there is no next token, so the last page's own token stays.
      const replay = resume.kind === 'token' ? resume.token : null;
      const token = complete && page.next !== null ? page.next : replay;
      await this.advance(positionOf(prefix), token);
    }
    return complete;
  }

  /** Step 5: the effect and its completion record, coupled as the delivery mode requires. */
  protected async apply(e: SourceEvent): Promise<void> {
    if (this.delivery === 'exactly-once') {
      try {
        await this.world.commit([
          { op: 'unless-completed', event: refOf(e) },
          { op: 'effect', event: refOf(e), payload: e.payload },
          { op: 'complete', event: refOf(e) },
        ]);
      } catch (error) {
        // Already completed by an earlier life: that is a durable outcome, not a failure.
        if (!(isWorldError(error) && error.code === 'conflict')) throw error;
      }
      return;
    }
    await this.world.emit(refOf(e), e.payload);
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
  }

  /** Step 6: a compare-and-set on the value read, so a lost race never lowers the watermark. */
  protected async advance(to: Position, token: string | null): Promise<void> {
    const value = { key: [...to.key], id: to.id };
    const ops: StoreOp[] = [
      { op: 'watermark', binding: this.world.fingerprint, value, expect: this.stored },
      { op: 'anchor', binding: this.world.fingerprint, token, watermark: value },
    ];
    await this.world.commit(ops);
    this.stored = value;
    this.watermark = value;
  }
}

export function isWorldError(error: unknown): error is Error & { code: string; definite: boolean } {
  return error instanceof Error && error.name === 'WorldError';
}

function samePosition(a: unknown, b: Position): boolean {
  return isPosition(a) && comparePositions(a, b) === 0;
}
