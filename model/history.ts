import type { Binding } from './binding.js';
import type { EventRef, SourceEvent } from './event.js';

/**
 * The history: a typed log of everything that happened in one simulated world, written by
 * the world as it executes and read by the checker afterwards. It records ground truth
 * (what the source held, whether each call took effect), not what the consumer believes.
 */
export interface History {
  readonly header: HistoryHeader;
  readonly steps: readonly Step[];
}

export type Delivery = 'at-least-once' | 'exactly-once';

/**
 * A source's declared stability. `snapshot` and `insertion-stable` sources never put an
 * eligible event behind a served position; `replay-window` may, but only within `window`
 * positions of the head; `none` promises nothing.
 */
export type Contract =
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'insertion-stable' }
  | { readonly kind: 'replay-window'; readonly window: number }
  | { readonly kind: 'none' };

export interface HistoryHeader {
  /** The events the source held before the first step. */
  readonly initial: readonly SourceEvent[];
  readonly binding: Binding;
  readonly contract: Contract;
  /** What the consumer claims; exactly-once turns any second effect into an anomaly. */
  readonly delivery: Delivery;
  /** Ids of poison events: their effects are always refused, so a dead letter is their only outcome. */
  readonly poison: readonly string[];
  /** The most events one page carries: with it, ground truth knows what each page must hold. */
  readonly pageSize?: number;
  /** The lease's time to live in world steps: with it, ground truth replays every grant. */
  readonly leaseTtl?: number;
  /**
   * What the consumer declared it does with a refused effect (its source profile). Absent:
   * it dead-letters, and a visible failure is judged as always. `fail-visibly`: it stops
   * for an operator instead, so a visible failure while a refused event is unhandled is its
   * honest end, not a liveness failure.
   */
  readonly refusals?: 'dead-letter' | 'fail-visibly';
}

export type Phase = 'adversity' | 'drain';

/** A worker incarnation: worker `w1`, its 3rd life. Memory never crosses incarnations. */
export interface Actor {
  readonly worker: string;
  readonly incarnation: number;
}

export type Step = CallStep | LifeStep | MutationStep | RebindStep | ObservedStep;

/** One call into the world and what became of it. */
export interface CallStep {
  readonly kind: 'call';
  readonly seq: number;
  readonly phase: Phase;
  readonly actor: Actor;
  readonly call: Call;
  readonly outcome: Outcome;
  /** Ground truth: whether the call took effect, whatever the caller learned. */
  readonly applied: boolean;
  /** The fault or page quirk the plan put here, when it fired. */
  readonly fault?: string;
  /**
   * What the call returned. With an `ok` outcome the caller received it; after a
   * `crash-after` or an `indefinite` outcome it is what the call did, which the caller
   * never saw.
   */
  readonly result?: CallResult;
}

/**
 * How a call ended. `error` is definite (it did not happen); `indefinite` and `crash-after`
 * mean it happened and the caller never learned; `crash-before` means it did not happen
 * and the caller died. A checker must accept both outcomes of an indefinite call, which is
 * why `applied` is recorded separately.
 */
export type Outcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'indefinite'; readonly code: string }
  | { readonly kind: 'crash-before' }
  | { readonly kind: 'crash-after' };

export type Call =
  | { readonly kind: 'fetch'; readonly request: FetchRequest }
  | { readonly kind: 'load' }
  | { readonly kind: 'completed'; readonly events: readonly EventRef[] }
  | { readonly kind: 'commit'; readonly ops: readonly StoreOp[]; readonly fence: number | null }
  | { readonly kind: 'emit'; readonly event: EventRef; readonly payload: string }
  | { readonly kind: 'lease' }
  | { readonly kind: 'claim'; readonly claim: Claim }
  /** A call whose arguments the world could not read; it fails with bad-request. */
  | { readonly kind: 'malformed'; readonly method: string; readonly problem: string };

export type CallKind = Call['kind'];

/** Where a page request resumes: the ways real paginated APIs offer. */
export type Resume =
  | { readonly kind: 'start' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'after'; readonly position: unknown }
  | { readonly kind: 'key-gt'; readonly key: readonly number[] }
  | { readonly kind: 'key-gte'; readonly key: readonly number[] }
  | { readonly kind: 'offset'; readonly offset: number };

/** The resume forms a source can offer besides starting over. */
export type ResumeStyle = Exclude<Resume['kind'], 'start'>;

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

export type Claim = { readonly kind: 'caught-up' } | { readonly kind: 'failed'; readonly reason: string };

export type CallResult =
  | { readonly kind: 'page'; readonly page: Page }
  | { readonly kind: 'state'; readonly state: DurableState }
  | { readonly kind: 'flags'; readonly flags: readonly boolean[] }
  | { readonly kind: 'generation'; readonly generation: number }
  | { readonly kind: 'done' };

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

/** Life-cycle steps the world records around the calls. */
export interface LifeStep {
  readonly kind: 'life';
  readonly seq: number;
  readonly phase: Phase;
  readonly actor: Actor;
  readonly event:
    | { readonly kind: 'start' }
    /** run() rejected with an ordinary error: recorded, and the incarnation ends (R7). */
    | { readonly kind: 'threw'; readonly message: string }
    /** run() returned without a claim. */
    | { readonly kind: 'returned' }
    /** The phase's step budget ran out while this incarnation was alive. */
    | { readonly kind: 'budget' }
    /** The consumer stopped calling the world and never returned. */
    | { readonly kind: 'hung'; readonly detail?: string };
}

/**
 * A change to the source, made by the world within the source's contract: a new event, or
 * a new version of one (moved in the order, or with different attributes).
 */
export interface MutationStep {
  readonly kind: 'mutation';
  readonly seq: number;
  readonly phase: Phase;
  readonly event: SourceEvent;
  readonly mutation: 'insert' | 'move' | 'flip';
}

/**
 * What a blackbox consumer's own store newly holds, seen by its inspection hook before the
 * next call: durable writes made since the previous call boundary, attributed to the
 * incarnation that made that call.
 */
export interface ObservedStep {
  readonly kind: 'observed';
  readonly seq: number;
  readonly phase: Phase;
  readonly actor: Actor;
  /** Present when the durable watermark changed. */
  readonly watermark?: { readonly value: unknown };
  readonly effects: readonly { readonly event: EventRef; readonly payload: string }[];
}

/**
 * Every worker is stopped and the consumer restarts under another binding on the same
 * store: from here on, eligibility is judged against `binding`.
 */
export interface RebindStep {
  readonly kind: 'rebind';
  readonly seq: number;
  readonly phase: Phase;
  readonly binding: Binding;
}
