import type { EventRef, SourceEvent } from './event.js';
import { kindsOf } from './kinds.js';

/**
 * The types an adapter sees: what it asks the source and the store, what they answer, and
 * what a source promises. The history (history.ts) records calls in these terms, but an
 * adapter needs nothing else of the oracle's schema.
 *
 * The vocabulary is declared here and in history.ts once, as lists the program reads (the
 * world's argument checks, plan validation, the history parser and
 * schema/protocol.schema.json, which test/vocabulary.test.ts holds equal to them).
 *
 * Units, said once (docs/design.md, "The world", says the same): time in the world is
 * counted in **steps**, one per call of any worker, worker start or end, source change or
 * inspection, so a lease's time to live (`leaseTtlSteps`) and a phase's budget are numbers
 * of steps; a replay window (`window`) and the head are measured in **units of the first
 * ordering field** (a key's first number), not in positions or events.
 */
export const DELIVERIES = ['at-least-once', 'exactly-once'] as const;
export type Delivery = (typeof DELIVERIES)[number];

/**
 * A source's declared stability. `snapshot` and `insertion-stable` sources never put an
 * eligible event behind a served position; `replay-window` may, but only at most `window`
 * units of the first ordering field behind the head (a change at key [k, ...] with
 * k >= head - window); `none` promises nothing.
 */
export type Contract =
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'insertion-stable' }
  | { readonly kind: 'replay-window'; readonly window: number }
  | { readonly kind: 'none' };

export const CONTRACT_KINDS = kindsOf<Contract['kind']>()(['snapshot', 'insertion-stable', 'replay-window', 'none']);

/**
 * The order a source delivers its bound stream in. `ascending`: the stable order, oldest
 * first. `newest-first`: from the newest event down, as many list APIs serve by creation
 * time; `start` gives the newest page, each page's token the next older one, and the oldest
 * page ends the stream. The stream's total order is the stable order either way: only the
 * delivery differs.
 */
export const DELIVERY_ORDERS = ['ascending', 'newest-first'] as const;
export type DeliveryOrder = (typeof DELIVERY_ORDERS)[number];

/**
 * Where a page request resumes: the ways real paginated APIs offer. A key resume may `skip`
 * that many eligible events past where its key puts it: page N of an `updated_since` query
 * (`?updated_since=X&page=N`), which shifts under mutation as an offset does.
 */
export type Resume =
  | { readonly kind: 'start' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'after'; readonly position: unknown }
  | { readonly kind: 'key-gt'; readonly key: readonly number[]; readonly skip?: number }
  | { readonly kind: 'key-gte'; readonly key: readonly number[]; readonly skip?: number }
  | { readonly kind: 'offset'; readonly offset: number };

export const RESUME_KINDS = kindsOf<Resume['kind']>()(['start', 'token', 'after', 'key-gt', 'key-gte', 'offset']);

/** The resume forms a source can offer besides starting over. */
export type ResumeStyle = Exclude<Resume['kind'], 'start'>;

/**
 * The resume forms a source may offer besides `start` and `token`, which every source
 * offers: what a plan's `source.resumes`, a history header's `resumes`, a source profile's
 * `resumes` and the protocol's `source.resumes` list.
 */
export const OFFERED_RESUMES = kindsOf<Exclude<ResumeStyle, 'token'>>()(['after', 'key-gt', 'key-gte', 'offset']);

export interface FetchRequest {
  readonly resume: Resume;
  readonly limit: number;
}

/** Durable writes, applied all together or not at all. */
export type StoreOp =
  /** A transactional effect: the consumer's durable handling of one event version. */
  | { readonly op: 'effect'; readonly event: EventRef; readonly payload: string }
  /** A completion (deduplication) record. */
  | { readonly op: 'complete'; readonly event: EventRef }
  /** Guard: abort the transaction if this event already has a completion record. */
  | { readonly op: 'unless-completed'; readonly event: EventRef }
  /**
   * The committed watermark for `binding`. With `expect` present this is a compare-and-set
   * on the previous value; without it, a blind write the store accepts as is.
   */
  | { readonly op: 'watermark'; readonly binding: string; readonly value: unknown; readonly expect?: unknown }
  /** The replay anchor: a page token together with the watermark it is tied to (R8). */
  | { readonly op: 'anchor'; readonly binding: string; readonly token: string | null; readonly watermark: unknown }
  /** A durable handoff of an external effect: the outbox entry is the event's durable outcome (R5). */
  | { readonly op: 'outbox'; readonly event: EventRef; readonly payload: string }
  /** The outbox entry was delivered to the sink and can be dropped. */
  | { readonly op: 'outbox-done'; readonly event: EventRef }
  /**
   * The event is parked for a person: a durable outcome, but only for an event the world
   * really refuses (a poison event). Dead-lettering a good event loses it.
   */
  | { readonly op: 'dead-letter'; readonly event: EventRef; readonly reason: string };

export const STORE_OP_KINDS = kindsOf<StoreOp['op']>()(['effect', 'complete', 'unless-completed', 'watermark', 'anchor', 'outbox', 'outbox-done', 'dead-letter']);

/** The store operations about one event version: each carries `event`. */
export const EVENT_OP_KINDS = kindsOf<Extract<StoreOp, { readonly event: EventRef }>['op']>()(['effect', 'complete', 'unless-completed', 'outbox', 'outbox-done', 'dead-letter']);

export interface Page {
  readonly events: readonly SourceEvent[];
  /** Opaque continuation; null at the end of the bound stream. */
  readonly next: string | null;
  /**
   * The source's head: the largest first ordering field it has ever held, eligible or not.
   * It only grows, so a consumer can tell where a replay window starts.
   */
  readonly head: number | null;
}

export interface DurableState {
  readonly watermark: { readonly binding: string; readonly value: unknown } | null;
  readonly anchor: { readonly binding: string; readonly token: string | null; readonly watermark: unknown } | null;
  /** Outbox entries not yet marked delivered. */
  readonly outbox: readonly { readonly event: EventRef; readonly payload: string }[];
}
