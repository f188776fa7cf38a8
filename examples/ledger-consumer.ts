// ledger-consumer.ts: a whitebox tidemark adapter (the example of docs/adapters.md).
// In your own project, import from 'tidemark' instead of '../src/index.js'.
import { comparePositions, isPosition } from '../src/index.js';
import type { Consumer, DurableState, EventRef, Page, Position, Resume, SourceEvent, WorkerWorld, WorldError } from '../src/index.js';

/**
 * Posts each event of a paginated stream to a ledger, at least once. Two positions are
 * kept apart: the traversal cursor (`resume`, memory only) and the committed watermark (in
 * the store, fenced by the lease generation and a compare-and-set on the value read).
 */
class LedgerWorker {
  /** This incarnation's lease generation; every watermark commit is fenced by it. */
  private generation = 0;
  /** The watermark exactly as stored under our binding: what the compare-and-set expects. */
  private stored: unknown = null;
  /** The committed watermark: every eligible event at or before it has a durable outcome. */
  private watermark: Position | null = null;
  /** The largest head the source has shown: where a replay window starts. */
  private head = Number.NEGATIVE_INFINITY;

  constructor(private readonly world: WorkerWorld) {}

  async run(): Promise<void> {
    for (;;) {
      try {
        this.generation = await this.world.lease();
        if (!(await this.pass())) continue;
        if (this.world.source.contract.kind === 'none') {
          // Without a stability contract no hole behind a watermark can be proven empty, so
          // there is no honest "caught up": say so visibly instead.
          return await this.world.fail('the source promises no stability (contract none), so the ledger cannot prove it missed nothing');
        }
        return await this.world.caughtUp();
      } catch (error) {
        // Any world error (lease held elsewhere, timeout, conflict, unavailable) sends us
        // back to durable state. Replaying from there is safe: completion records dedupe.
        if (!isWorldError(error)) throw error;
      }
    }
  }

  /** One traversal from the durable position to the end. False: start over from the store. */
  private async pass(): Promise<boolean> {
    const state = await this.world.load();
    // Progress stored under another binding (filter, bound...) says nothing about ours.
    this.stored = state.watermark?.binding === this.world.fingerprint ? state.watermark.value : null;
    this.watermark = isPosition(this.stored) ? this.stored : null;
    let resume = this.resumeFrom(state.anchor);
    for (;;) {
      let page: Page;
      try {
        page = await this.fetch(resume);
      } catch (error) {
        // An expired token proves nothing: go back to the watermark (or the start).
        if (!(isWorldError(error) && error.code === 'stale-token')) throw error;
        resume = this.resumeFrom(null);
        page = await this.fetch(resume);
      }
      this.head = Math.max(this.head, page.head ?? this.head);
      if (!(await this.handle(page, resume))) return false;
      if (page.next === null) return true;
      // Still the lease holder? If another worker took over meanwhile, start over.
      if ((await this.world.lease()) !== this.generation) return false;
      // The token only continues this traversal; it is never the watermark.
      resume = { kind: 'token', token: page.next };
    }
  }

  /** Where durable state says to resume: just after the watermark, by position or by anchor. */
  private resumeFrom(anchor: DurableState['anchor']): Resume {
    const at = this.watermark;
    if (at === null) return { kind: 'start' };
    if (this.world.source.resumes.includes('after')) return { kind: 'after', position: at };
    // Only opaque tokens: use the anchor if it is tied to this very watermark.
    if (anchor?.binding === this.world.fingerprint && anchor.token !== null && isPosition(anchor.watermark) && comparePositions(anchor.watermark, at) === 0) {
      return { kind: 'token', token: anchor.token };
    }
    return { kind: 'start' };
  }

  private fetch(resume: Resume): Promise<Page> {
    return this.world.fetch({ resume, limit: this.world.source.pageSize });
  }

  /**
   * Handles a page's new events in order, then advances the watermark through the handled
   * prefix. Returns false when an event failed: it is retried on the next pass.
   */
  private async handle(page: Page, resume: Resume): Promise<boolean> {
    // Pages may overlap, repeat or arrive out of order: sort, and drop what is committed.
    const events = [...page.events]
      .sort(comparePositions)
      .filter((e) => this.watermark === null || comparePositions(e, this.watermark) > 0);
    if (events.length === 0) return true;
    const done = await this.world.completed(events.map(refOf));
    let ok = true;
    let passable = true;
    let last: SourceEvent | undefined;
    for (const [i, event] of events.entries()) {
      if (!done[i]) {
        try {
          await this.post(event);
        } catch (error) {
          if (!isWorldError(error)) throw error;
          ok = false;
          break;
        }
      }
      // The watermark may pass only events the source can no longer change behind us.
      passable &&= this.settled(event);
      if (passable) last = event;
    }
    if (last !== undefined) await this.advance(last, resume);
    return ok;
  }

  /** The effect, then its completion record. A crash between the two repeats the effect. */
  private async post(event: SourceEvent): Promise<void> {
    const ref = refOf(event);
    try {
      await this.world.emit(ref, event.payload);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'rejected')) throw error;
      // A poison event is refused every time: park it for a person, as its durable outcome.
      try {
        await this.world.commit([{ op: 'unless-completed', event: ref }, { op: 'dead-letter', event: ref, reason: error.message }, { op: 'complete', event: ref }]);
      } catch (parked) {
        // `conflict` here: another worker already completed it, which is an outcome too.
        if (!(isWorldError(parked) && parked.code === 'conflict')) throw parked;
      }
      return;
    }
    await this.world.commit([{ op: 'complete', event: ref }]);
  }

  /** Whether the source's contract says nothing can still appear at or before this event. */
  private settled(event: SourceEvent): boolean {
    const contract = this.world.source.contract;
    switch (contract.kind) {
      case 'snapshot':
      case 'insertion-stable':
        return true;
      case 'replay-window':
        return (event.key[0] ?? 0) < this.head - contract.window;
      case 'none':
        return false;
    }
  }

  /** Compare-and-set on the value read, fenced by our lease generation. */
  private async advance(to: SourceEvent, resume: Resume): Promise<void> {
    const value: Position = { key: [...to.key], id: to.id };
    const binding = this.world.fingerprint;
    // The anchor is the token that fetched this page: it replays from before the new
    // watermark, so it is kept next to that watermark and never stands in for it.
    const token = resume.kind === 'token' ? resume.token : null;
    await this.world.commit(
      [
        { op: 'watermark', binding, value, expect: this.stored },
        { op: 'anchor', binding, token, watermark: value },
      ],
      { fence: this.generation },
    );
    this.stored = value;
    this.watermark = value;
  }
}

function refOf(event: SourceEvent): EventRef {
  return { id: event.id, version: event.version };
}

/** By name, not instanceof: the harness and this module may load different copies of tidemark. */
function isWorldError(error: unknown): error is WorldError {
  return error instanceof Error && error.name === 'WorldError';
}

const consumer: Consumer = {
  name: 'ledger',
  capabilities: { delivery: 'at-least-once' },
  run: (world) => new LedgerWorker(world).run(),
};

export default consumer;
