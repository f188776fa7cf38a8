import type { Binding } from './binding.js';
import type { Contract, Delivery, DurableState, FetchRequest, Page, StoreOp } from './api.js';
import type { EventRef, SourceEvent } from './event.js';

export type { Contract, Delivery, DurableState, FetchRequest, Page, Resume, ResumeStyle, StoreOp } from './api.js';

/**
 * The history: a typed log of everything that happened in one simulated world, written by
 * the world as it executes and read by the checker afterwards. It records ground truth
 * (what the source held, whether each call took effect), not what the consumer believes.
 */
export interface History {
  readonly header: HistoryHeader;
  readonly steps: readonly Step[];
}

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

export type Claim = { readonly kind: 'caught-up' } | { readonly kind: 'failed'; readonly reason: string };

export type CallResult =
  | { readonly kind: 'page'; readonly page: Page }
  | { readonly kind: 'state'; readonly state: DurableState }
  | { readonly kind: 'flags'; readonly flags: readonly boolean[] }
  | { readonly kind: 'generation'; readonly generation: number }
  | { readonly kind: 'done' };

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
