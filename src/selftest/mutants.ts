import type { AnomalyKind } from '../../model/anomalies.js';
import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { Delivery, DurableState, Page, Resume } from '../../model/history.js';
import { compareKeys, comparePositions, type Position } from '../../model/order.js';
import type { RuleId } from '../../model/rules.js';
import { PROFILES, type SourceProfile } from '../../scenarios/profiles.js';
import type { Consumer, WorkerWorld } from '../adapter/consumer.js';
import { Incarnation, isWorldError } from './reference.js';

/**
 * The mutant catalog: broken consumers, each the reference consumer with one real-world
 * mistake. They are how the harness proves its checks can fail: each must be caught, with
 * the anomaly it names (the Reactive Streams TCK's `shouldFailBy`).
 */
export interface Mutant {
  readonly name: string;
  /** The rule the mistake breaks. */
  readonly rule: RuleId;
  readonly expect: AnomalyKind;
  /** Other anomalies the same mistake legitimately shows as, declared up front; usually none. */
  readonly also: readonly AnomalyKind[];
  /** The real failure mechanism this models. */
  readonly description: string;
  /**
   * The smallest world that shows the mistake (events, adversity): the yardstick for shrinking.
   * Measured, not reasoned: test/minimal.test.ts runs the mutant's world in MINIMAL_WORLDS
   * (scenarios/minimal.ts) and checks these numbers against that run.
   */
  readonly minimal: { readonly events: number; readonly faults: number };
  readonly consumer: Consumer;
}

type Options = { readonly delivery?: Delivery | 'outbox'; readonly concurrency?: number };
type IncarnationClass = new (world: WorkerWorld, options: Options) => Incarnation;

interface Spec {
  readonly rule: RuleId;
  readonly expect: AnomalyKind | readonly [AnomalyKind, ...AnomalyKind[]];
  readonly description: string;
  readonly minimal: { readonly events: number; readonly faults: number };
  readonly life: IncarnationClass;
  readonly options?: Options;
  /** The source API the mutant declares it is written for, when its mistake needs one. */
  readonly profile?: SourceProfile;
}

function mutant(name: string, spec: Spec): Mutant {
  const [expect, ...also] = typeof spec.expect === 'string' ? [spec.expect] : spec.expect;
  const options = spec.options ?? {};
  const delivery: Delivery = options.delivery === 'exactly-once' ? 'exactly-once' : 'at-least-once';
  return {
    name,
    rule: spec.rule,
    expect: expect as AnomalyKind,
    also,
    description: spec.description,
    minimal: spec.minimal,
    consumer: { name, capabilities: { delivery, ...(spec.profile === undefined ? {} : { profile: spec.profile }) }, run: (world) => new spec.life(world, options).run() },
  };
}

/** Saves the next-page token as its progress and resumes from it after a restart. */
class TokenAsWatermark extends Incarnation {
  protected override resumeFrom(state: DurableState): Resume {
    const saved = state.watermark?.value;
    this.stored = saved ?? null;
    return typeof saved === 'string' ? { kind: 'token', token: saved } : { kind: 'start' };
  }
  protected override async handle(events: readonly SourceEvent[], _resume: Resume, page: Page): Promise<boolean> {
    for (const e of events) await this.apply(e);
    if (page.next !== null) await this.world.commit([{ op: 'watermark', binding: this.label, value: page.next }]);
    return true;
  }
}

/** Sets the watermark to the largest position fetched, whether or not the page's events were handled. */
class MaxPositionFetched extends Incarnation {
  protected override async handle(events: readonly SourceEvent[], _resume: Resume, page: Page): Promise<boolean> {
    let ok = true;
    for (const e of events) {
      try {
        await this.apply(e);
      } catch {
        ok = false;
        break;
      }
    }
    // It still asks the source's contract which events are settled: that is not its mistake.
    const last = events.filter((e) => this.settled(e)).at(-1);
    if (last) await this.advance(positionOf(last), page.next);
    return ok;
  }
}

/** Logs a failed event and moves on, as if it had been handled. */
class SkipsFailedEvent extends Incarnation {
  protected override async apply(e: SourceEvent): Promise<void> {
    try {
      await super.apply(e);
    } catch (error) {
      if (!isWorldError(error) || !error.definite) throw error;
    }
  }
}

/** Saves its checkpoint first, then flushes the buffered effects: a crash between loses them. */
class CheckpointBeforeFlush extends Incarnation {
  protected override async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    const last = events.at(-1);
    if (last) await this.advance(positionOf(last), page.next ?? (resume.kind === 'token' ? resume.token : null));
    for (const e of events) await this.apply(e);
    return true;
  }
}

/** Writes the completion record first, then the effect: a crash between them loses the event. */
class CompletionBeforeEffect extends Incarnation {
  protected override async effect(e: SourceEvent): Promise<void> {
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
    await this.world.emit(refOf(e), e.payload);
  }
}

/** Resumes with `key > last key` on a non-unique ordering field: events tied with the last one are skipped. */
class StrictKeyResume extends Incarnation {
  protected override resumeFrom(state: DurableState): Resume {
    const resume = super.resumeFrom(state);
    return this.watermark !== null && this.world.source.resumes.includes('key-gt') ? { kind: 'key-gt', key: this.watermark.key } : resume;
  }
  protected override continueAfter(page: Page): Resume {
    const last = page.events.at(-1);
    return last && this.world.source.resumes.includes('key-gt') ? { kind: 'key-gt', key: last.key } : super.continueAfter(page);
  }
}

/** On every restart it replays from the start and writes each page's end, lower than what is stored. */
class LowersWatermarkOnRetry extends Incarnation {
  protected override resumeFrom(state: DurableState): Resume {
    super.resumeFrom(state);
    this.watermark = null;
    return { kind: 'start' };
  }
}

/** Writes the watermark blind: no compare-and-set, no lease fence. A paused, stale worker overwrites newer progress. */
class BlindWatermarkWrite extends Incarnation {
  protected override async advance(to: Position, token: string | null): Promise<void> {
    const value = { key: [...to.key], id: to.id };
    await this.world.commit([
      { op: 'watermark', binding: this.label, value },
      { op: 'anchor', binding: this.label, token, watermark: value },
    ]);
    this.stored = value;
    this.watermark = value;
  }
}

/** Fences its commits, but when the fence refuses one after it lost the lease, it writes again unfenced. */
class ZombieAfterLeaseLoss extends Incarnation {
  protected override async advance(to: Position, token: string | null): Promise<void> {
    try {
      await super.advance(to, token);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'conflict')) throw error;
      const value = { key: [...to.key], id: to.id };
      await this.world.commit([{ op: 'watermark', binding: this.label, value }]);
      this.stored = value;
      this.watermark = value;
    }
  }
}

/** Claims exactly-once but neither checks completion records nor guards its effect transaction. */
class NoDedupExactlyOnce extends Incarnation {
  protected override alreadyDone(events: readonly SourceEvent[]): Promise<boolean[]> {
    return Promise.resolve(events.map(() => false));
  }
  protected override async effect(e: SourceEvent): Promise<void> {
    await this.world.commit([{ op: 'effect', event: refOf(e), payload: e.payload }, { op: 'complete', event: refOf(e) }]);
  }
}

/** Claims exactly-once but commits the effect and its completion record in two transactions. */
class SplitEffectCompletion extends Incarnation {
  protected override async effect(e: SourceEvent): Promise<void> {
    await this.world.commit([{ op: 'effect', event: refOf(e), payload: e.payload }]);
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
  }
}

/** Orders a page by a mutable attribute instead of the stable order, so its "prefix" has holes. */
class SortsByMutableField extends Incarnation {
  protected override normalize(page: Page): SourceEvent[] {
    return super.normalize(page).sort((a, b) => String(a.attrs.kind).localeCompare(String(b.attrs.kind)) || comparePositions(positionOf(a), positionOf(b)));
  }
}

/** Ends the pass at whatever page looks like the end: the subclasses differ only in what they take for it. */
abstract class EndsEarly extends Incarnation {
  protected abstract looksLikeTheEnd(page: Page, fresh: readonly SourceEvent[]): boolean;
  protected override isLastPage(page: Page, fresh: readonly SourceEvent[]): boolean {
    return page.next === null || this.looksLikeTheEnd(page, fresh);
  }
}

/** Takes an empty page as proof the stream is exhausted, though it still carries a token. */
class EmptyPageAsEnd extends EndsEarly {
  protected looksLikeTheEnd(page: Page): boolean {
    return page.events.length === 0;
  }
}

/** Takes a page shorter than the page size as the last one. */
class ShortPageAsEnd extends EndsEarly {
  protected looksLikeTheEnd(page: Page): boolean {
    return page.events.length < this.world.source.pageSize;
  }
}

/** Takes a page with nothing new after deduplication as the end. */
class FilteredPageAsEnd extends EndsEarly {
  protected looksLikeTheEnd(_page: Page, fresh: readonly SourceEvent[]): boolean {
    return fresh.length === 0;
  }
}

/** Stops once it has seen an event at the source's newest timestamp, though more may share it. */
class EarlyCaughtUp extends EndsEarly {
  protected looksLikeTheEnd(page: Page): boolean {
    const last = page.events.at(-1);
    return last !== undefined && page.head !== null && (last.key[0] ?? 0) >= page.head;
  }
}

/** Reads a snapshot's inclusive upper bound as exclusive: events at the bound are never handled. */
class SnapshotBoundExclusive extends Incarnation {
  protected override normalize(page: Page): SourceEvent[] {
    const upTo = this.world.binding.upTo;
    return super.normalize(page).filter((e) => upTo === null || (e.key[0] ?? 0) < upTo);
  }
}

/** Trusts every hole: ignores the source's contract, advances past events that can still change, claims caught-up anyway. */
class TrustsNumericHole extends Incarnation {
  protected override settled(): boolean {
    return true;
  }
  protected override async pass(): Promise<'caught-up' | 'unprovable' | 'retry'> {
    const end = await super.pass();
    return end === 'unprovable' ? 'caught-up' : end;
  }
}

/** Re-reads a replay window half the size the source declares. */
class NarrowReplayWindow extends Incarnation {
  protected override settled(e: SourceEvent): boolean {
    const { contract } = this.world.source;
    if (contract.kind !== 'replay-window') return super.settled(e);
    return this.head !== null && (e.key[0] ?? 0) < this.head - Math.floor(contract.window / 2);
  }
}

/** Stores progress under one fixed name, not the binding: whatever binding wrote it is reused. */
class WatermarkAcrossBindings extends Incarnation {
  protected override get label(): string {
    return 'progress';
  }
}

/** Treats a refused (poison) event as a passing failure and retries it forever; nothing behind it moves. */
class PoisonRetryForever extends Incarnation {
  protected override async park(): Promise<void> {
    throw new Error('transient, surely: try again');
  }
  override async run(): Promise<void> {
    for (;;) {
      try {
        await super.run();
        return;
      } catch {
        // Retry from the top, forever.
      }
    }
  }
}

/** Handles events concurrently and advances to the largest one completed, not the gap-free prefix. */
class MaxCompletedConcurrent extends Incarnation {
  protected override async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    const done = await this.alreadyDone(events);
    const results = await Promise.allSettled(events.map((e, i) => (done[i] ? Promise.resolve() : this.apply(e))));
    // Settled events only, as the reference: its one mistake is ignoring the gaps.
    const completed = events.filter((e, i) => results[i]?.status === 'fulfilled' && this.settled(e));
    const max = completed.at(-1);
    if (max) await this.advance(positionOf(max), resume.kind === 'token' ? resume.token : null);
    return results.every((r) => r.status === 'fulfilled');
  }
}

/** Stamps each effect with the attempt that made it, so a replayed effect differs from the first. */
class EffectStampedPerAttempt extends Incarnation {
  protected override async effect(e: SourceEvent): Promise<void> {
    await this.world.emit(refOf(e), `${e.payload} (attempt ${this.world.incarnation})`);
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
  }
}

/**
 * Keeps the cursor value as its bookmark, the way many incremental syncs do, and reads on
 * strictly after it (`key > bookmark`). It is careful about the ties it can see: the
 * bookmark only moves to the end of a key it has read whole (a larger key follows on the
 * page, or the stream ended there). Its mistake is to take "insertion-stable" for "nothing
 * lands at the newest key again": a new row with the newest row's timestamp and a larger id
 * is skipped.
 */
class CursorValueExclusive extends Incarnation {
  private page: Page | null = null;
  private fresh: readonly SourceEvent[] = [];
  protected override normalize(page: Page): SourceEvent[] {
    const mark = this.watermark;
    const fresh = super.normalize(page).filter((e) => mark === null || compareKeys(e.key, mark.key) > 0);
    this.page = page;
    this.fresh = fresh;
    return fresh;
  }
  /** Only to the last event of a key read whole, at or before `to`: never into the middle of a tie. */
  protected override async advance(to: Position, token: string | null): Promise<void> {
    let end: SourceEvent | undefined;
    for (const [i, e] of this.fresh.entries()) {
      if (comparePositions(positionOf(e), to) > 0) break;
      const next = this.fresh[i + 1];
      if (next === undefined ? this.page?.next === null : compareKeys(next.key, e.key) > 0) end = e;
    }
    if (end === undefined) return;
    // A page token anchors the page's end; a bookmark short of it replays from the start.
    await super.advance(positionOf(end), comparePositions(positionOf(end), to) === 0 ? token : null);
  }
}

/**
 * Retries a failed delivery once, in place, and takes a second failure for proof that the
 * event is poison: it dead-letters it. A delivery can fail any number of times in a row.
 */
class OneRetryPerEvent extends Incarnation {
  protected override async apply(e: SourceEvent): Promise<void> {
    try {
      await super.apply(e);
    } catch (error) {
      if (!isWorldError(error)) throw error;
      try {
        await this.effect(e);
      } catch (again) {
        if (!isWorldError(again)) throw again;
        await this.park(e, `failed twice, so it must be poison: ${again.message}`);
      }
    }
  }
}

/**
 * Renews the lease right before each watermark commit and fences the commit with whatever
 * generation the renewal returns, without a compare-and-set: fencing alone is safe only
 * while the work being committed began under that generation. Work begun under a lease it
 * lost (another worker held it since) is committed under the lease it took back.
 */
class WorkSurvivesLeaseRetake extends Incarnation {
  protected override async advance(to: Position, token: string | null): Promise<void> {
    this.generation = await this.world.lease();
    const value = { key: [...to.key], id: to.id };
    await this.world.commit(
      [
        { op: 'watermark', binding: this.label, value },
        { op: 'anchor', binding: this.label, token, watermark: value },
      ],
      { fence: this.generation },
    );
    this.stored = value;
    this.watermark = value;
  }
}

/**
 * Reads a newest-first API from the top down to its bookmark, as it should, but saves the
 * newest position read after every page, before it has reached the bookmark: the saved
 * bookmark covers the older events still unread, and a crash mid-read, or a later page
 * that fails, leaves them behind it for good.
 */
class CheckpointsMidNewestFirstRead extends Incarnation {
  protected override async pageRead(newest: Position | null): Promise<void> {
    if (newest !== null && (this.watermark === null || comparePositions(newest, this.watermark) > 0)) await this.advance(newest, null);
  }
}

/**
 * Wraps each page request in a retry on timeout, as HTTP clients do: right for a plain
 * continuation, whose token serves the same page again, but a scroll's server moved the
 * scroll on when it served the page whose answer was lost, so the retry gets the page after
 * it and the lost page is never read.
 */
class RetriesServedScrollRequest extends Incarnation {
  protected override async fetch(resume: Resume): Promise<Page> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await super.fetch(resume);
      } catch (error) {
        if (!(isWorldError(error) && error.code === 'timeout') || attempt === 3) throw error;
      }
    }
  }
}

/**
 * Takes an empty batch for a hiccup and sends the same request again rather than following
 * the batch's own token: harmless where a token serves the same page again, but on an
 * iterator chain the token of an empty batch serves that empty batch forever.
 */
class RetriesEmptyIteratorBatch extends Incarnation {
  private asked: Resume | null = null;
  protected override fetch(resume: Resume): Promise<Page> {
    this.asked = resume;
    return super.fetch(resume);
  }
  protected override continueAfter(page: Page): Resume {
    if (page.events.length === 0 && this.asked !== null) return this.asked;
    return super.continueAfter(page);
  }
}

/**
 * Breaks ties the way a database collation or a UI's sort does, comparing ids with the
 * locale's collation (`localeCompare`), not in code-unit order: `e00` before `E01`, where the
 * stable order puts every capital first. Its gap-free prefix is a prefix of its own order, so
 * its watermark passes a tied event still unhandled when the one it sorted first was handled.
 */
class SortsIdsByLocale extends Incarnation {
  protected override normalize(page: Page): SourceEvent[] {
    const byLocale = (a: SourceEvent, b: SourceEvent): number => compareKeys(a.key, b.key) || a.id.localeCompare(b.id);
    return super.normalize(page).sort(byLocale);
  }
}

/**
 * Stores its bookmark as a whole number, rounding the timestamp it reached, as a connector
 * does that keeps a sub-second timestamp in an integer column or formats it without its
 * fraction: rounded up, the bookmark passes the rest of that second, which a restart then
 * skips; rounded down after a bookmark rounded up, it goes back.
 */
class RoundsBookmark extends Incarnation {
  protected override advance(to: Position, token: string | null): Promise<void> {
    return super.advance({ key: to.key.map((k) => Math.round(k)), id: to.id }, token);
  }
}

/**
 * Takes a delivery that timed out for one that went through, as a client does that reads a
 * timeout as "probably fine" (or retries only definite errors): it records the event's
 * completion and moves on. A timeout is indefinite: the request may have been lost on its
 * way, and then the event was never delivered, yet it is marked done and passed.
 */
class TimeoutTakenAsDone extends Incarnation {
  protected override async effect(e: SourceEvent): Promise<void> {
    try {
      await this.world.emit(refOf(e), e.payload);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'timeout')) throw error;
    }
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
  }
}

const EXACTLY_ONCE: Options = { delivery: 'exactly-once' };

export const MUTANTS: readonly Mutant[] = [
  mutant('token-as-watermark', { rule: 'R8', expect: 'token-as-watermark', minimal: { events: 2, faults: 0 }, life: TokenAsWatermark, description: 'stores the next-page token as the committed watermark and resumes from it' }),
  mutant('max-position-fetched', { rule: 'R6', expect: ['premature-watermark', 'omission'], minimal: { events: 1, faults: 1 }, life: MaxPositionFetched, description: 'sets the watermark to the largest position fetched, past events whose handling failed' }),
  mutant('skips-failed-event', { rule: 'R7', expect: ['premature-watermark', 'omission'], minimal: { events: 1, faults: 1 }, life: SkipsFailedEvent, description: 'logs a failed event and moves on, so the watermark passes it' }),
  mutant('checkpoint-before-flush', { rule: 'R6', expect: ['premature-watermark', 'omission'], minimal: { events: 1, faults: 0 }, life: CheckpointBeforeFlush, description: 'saves the checkpoint before the buffered effects are durable; a crash between loses them' }),
  mutant('completion-before-effect', { rule: 'R5', expect: ['omission', 'premature-watermark'], minimal: { events: 1, faults: 0 }, life: CompletionBeforeEffect, description: 'records completion before the effect; a crash between them makes the replay skip the event' }),
  mutant('strict-key-resume', { rule: 'R1', expect: ['omission', 'premature-watermark'], minimal: { events: 2, faults: 0 }, life: StrictKeyResume, description: 'resumes with key > last key on a non-unique ordering field, with no id tie-break' }),
  mutant('lowers-watermark-on-retry', { rule: 'R3', expect: 'watermark-regression', minimal: { events: 2, faults: 0 }, life: LowersWatermarkOnRetry, description: 'replays from the start on every retry and writes each page end, below the stored watermark' }),
  mutant('blind-watermark-write', { rule: 'R6', expect: 'stale-generation-commit', minimal: { events: 1, faults: 0 }, life: BlindWatermarkWrite, description: 'writes the watermark without compare-and-set or lease fence; a paused stale worker overwrites newer progress' }),
  mutant('zombie-after-lease-loss', { rule: 'R6', expect: 'stale-generation-commit', minimal: { events: 1, faults: 0 }, life: ZombieAfterLeaseLoss, description: 'when its fenced commit is refused after losing the lease, writes the watermark again unfenced' }),
  mutant('no-dedup-exactly-once', { rule: 'R5', expect: 'duplicate-effect', minimal: { events: 1, faults: 0 }, life: NoDedupExactlyOnce, options: EXACTLY_ONCE, description: 'claims exactly-once but never checks completion records before applying an effect' }),
  mutant('split-effect-completion', { rule: 'R5', expect: 'duplicate-effect', minimal: { events: 1, faults: 0 }, life: SplitEffectCompletion, options: EXACTLY_ONCE, description: 'claims exactly-once but commits the effect and its completion record in separate transactions' }),
  mutant('sorts-by-mutable-field', { rule: 'R1', expect: ['omission', 'premature-watermark'], minimal: { events: 2, faults: 1 }, life: SortsByMutableField, description: 'orders a page by a mutable attribute instead of the stable order, so its prefix has holes' }),
  mutant('empty-page-as-end', { rule: 'R9', expect: 'omission', minimal: { events: 1, faults: 1 }, life: EmptyPageAsEnd, description: 'takes progress from an empty page: treats it as the end of the stream although it carries a token' }),
  mutant('short-page-as-end', { rule: 'R9', expect: 'omission', minimal: { events: 1, faults: 1 }, life: ShortPageAsEnd, description: 'takes a page shorter than the page size as the last page' }),
  mutant('filtered-page-as-end', { rule: 'R9', expect: 'omission', minimal: { events: 2, faults: 0 }, life: FilteredPageAsEnd, description: 'takes a page with nothing new after deduplication (a repeated or overlapping page) as the end' }),
  mutant('early-caught-up', { rule: 'R9', expect: 'omission', minimal: { events: 2, faults: 0 }, life: EarlyCaughtUp, description: "claims caught-up once it has seen the source's newest timestamp, though more events share it" }),
  mutant('snapshot-bound-exclusive', { rule: 'R10', expect: 'omission', minimal: { events: 1, faults: 0 }, life: SnapshotBoundExclusive, description: "reads the snapshot's inclusive upper bound as exclusive and never handles events at the bound" }),
  mutant('trusts-numeric-hole', { rule: 'R10', expect: ['omission', 'premature-watermark'], minimal: { events: 1, faults: 1 }, life: TrustsNumericHole, description: 'advances past positions a mutable source can still fill, and claims caught-up without a stability contract' }),
  mutant('narrow-replay-window', { rule: 'R10', expect: ['omission', 'premature-watermark'], minimal: { events: 2, faults: 1 }, life: NarrowReplayWindow, description: 're-reads a replay window half the size the source declares' }),
  mutant('watermark-across-bindings', { rule: 'R2', expect: 'binding-confusion', minimal: { events: 2, faults: 1 }, life: WatermarkAcrossBindings, description: 'stores progress under a fixed name and resumes from it whichever binding wrote it' }),
  mutant('poison-retry-forever', { rule: 'R9', expect: 'liveness', minimal: { events: 1, faults: 0 }, life: PoisonRetryForever, description: 'retries an event whose effect is always refused, forever, instead of dead-lettering it' }),
  mutant('max-completed-concurrent', { rule: 'R6', expect: ['premature-watermark', 'omission'], minimal: { events: 2, faults: 1 }, life: MaxCompletedConcurrent, options: { concurrency: 3 }, description: 'handles a page concurrently and advances to the largest completed event instead of the gap-free prefix' }),
  mutant('effect-stamped-per-attempt', { rule: 'R4', expect: 'divergent-duplicate', minimal: { events: 1, faults: 0 }, life: EffectStampedPerAttempt, description: 'stamps each effect with the attempt that made it, so a replay produces different content' }),
  mutant('cursor-value-exclusive', { rule: 'R1', expect: ['omission', 'premature-watermark'], minimal: { events: 1, faults: 1 }, life: CursorValueExclusive, description: 'bookmarks the cursor value and resumes strictly after it (key > bookmark), so a new row at the newest key is skipped' }),
  mutant('one-retry-per-event', { rule: 'R7', expect: ['premature-watermark', 'omission'], minimal: { events: 1, faults: 2 }, life: OneRetryPerEvent, description: 'retries a failed delivery once and dead-letters the event when the retry fails too, as if it were poison' }),
  mutant('work-survives-lease-retake', { rule: 'R3', expect: 'watermark-regression', minimal: { events: 2, faults: 0 }, life: WorkSurvivesLeaseRetake, description: 'renews the lease just before a commit and fences with what comes back, so work begun under a lost lease is committed after taking it back' }),
  mutant('retries-served-scroll-request', { rule: 'R8', expect: ['omission', 'premature-watermark'], minimal: { events: 2, faults: 1 }, life: RetriesServedScrollRequest, profile: PROFILES.scrollApi, description: 'retries a scroll request that timed out after it was served, and reads on from the page after the lost one' }),
  mutant('retries-empty-iterator-batch', { rule: 'R9', expect: 'liveness', minimal: { events: 2, faults: 1 }, life: RetriesEmptyIteratorBatch, profile: { ...PROFILES.shardIterator, resumes: [] }, description: "sends an iterator request again after an empty batch instead of following the batch's own token, and gets the same empty batch forever" }),
  mutant('sorts-ids-by-locale', { rule: 'R1', expect: ['omission', 'premature-watermark'], minimal: { events: 2, faults: 1 }, life: SortsIdsByLocale, description: 'breaks ties by comparing ids with a locale collation instead of code-unit order, so its watermark passes a tied event it sorted later' }),
  mutant('rounds-bookmark', { rule: 'R6', expect: ['premature-watermark', 'omission', 'watermark-regression'], minimal: { events: 2, faults: 0 }, life: RoundsBookmark, description: 'stores its bookmark rounded to a whole number, so a timestamp with a fraction of a second passes the rest of that second' }),
  mutant('timeout-taken-as-done', { rule: 'R7', expect: ['premature-watermark', 'omission'], minimal: { events: 1, faults: 1 }, life: TimeoutTakenAsDone, description: 'takes an effect whose delivery timed out for delivered, records its completion and moves on, though the request may have been lost' }),
  mutant('checkpoints-mid-newest-first-read', { rule: 'R6', expect: ['premature-watermark', 'omission'], minimal: { events: 2, faults: 0 }, life: CheckpointsMidNewestFirstRead, profile: { order: 'newest-first' }, description: 'reads a newest-first API down to its bookmark but saves the newest position read after every page, past the older events not read yet' }),
];

export function findMutant(name: string): Mutant | undefined {
  return MUTANTS.find((m) => m.name === name);
}
