import type { Binding } from './binding.js';
import type { Contract, Delivery, DeliveryOrder, DurableState, FetchRequest, Page, ResumeStyle, StoreOp } from './api.js';
import type { EventRef, SourceEvent } from './event.js';
import { kindsOf } from './kinds.js';
import type { TokenKind } from './tokens.js';
import type { PlannedFault, PlannedMutation, PlannedRebind } from './plan.js';

export type { Contract, Delivery, DeliveryOrder, DurableState, FetchRequest, Page, Resume, ResumeStyle, StoreOp } from './api.js';

/**
 * The history: a typed log of everything that happened in one simulated world, written by
 * the world as it executes and read by the checker afterwards. It records ground truth
 * (what the source held, whether each call took effect), not what the consumer believes.
 */
export interface History {
  readonly header: HistoryHeader;
  readonly steps: readonly Step[];
}

/**
 * The history format this tidemark writes and judges. 2: the header carries the plan (its
 * faults and page quirks, its changes to the source, the resume forms offered), so that
 * ground truth recomputes every call's ending instead of believing the world's labels.
 * 3: the lease's time to live is named with its unit, `leaseTtlSteps` (it was `leaseTtl`).
 * 4: a `lost` call fault (a timeout that took no effect); a `reorder` rotates a page of an
 * odd number of events, where it reversed every page.
 * 5: a key resume may `skip` events past its key (page N of an `updated_since` query).
 * A history of another format (or none) is refused naming `header.version`: its world can
 * be recorded again from its seed and path.
 */
export const HISTORY_VERSION = 5;

/** Where a consumer keeps its durable state (see HistoryHeader.consumer). */
export type ConsumerKind = 'whitebox' | 'blackbox';
export const CONSUMER_KINDS = kindsOf<ConsumerKind>()(['whitebox', 'blackbox']);

export interface HistoryHeader {
  readonly version: typeof HISTORY_VERSION;
  /** The events the source held before the first step. */
  readonly initial: readonly SourceEvent[];
  readonly binding: Binding;
  readonly contract: Contract;
  /** What the consumer claims; exactly-once turns any second effect into an anomaly. */
  readonly delivery: Delivery;
  /** Ids of poison events: their effects are always refused, so a dead letter is their only outcome. */
  readonly poison: readonly string[];
  /** The most events one page carries: ground truth computes from it what each page must hold. */
  readonly pageSize: number;
  /** The lease's time to live, in steps (model/api.ts, units): ground truth replays every grant with it. */
  readonly leaseTtlSteps: number;
  /** The resume forms the source offers besides start and token: any other is refused (bad-request). */
  readonly resumes: readonly ResumeStyle[];
  /** The plan's faults and page quirks, by the call each is put at: ground truth replays where each fires. */
  readonly faults: readonly PlannedFault[];
  /** The plan's changes to the source: the world records each as a mutation step, and makes no more. */
  readonly mutations: readonly PlannedMutation[];
  /** The plan's rebind, or null: a rebind step anywhere else, or under another binding, is the world contradicting itself. */
  readonly rebind: PlannedRebind | null;
  /** How many workers the adversity phase runs, named w1 to wN; the drain runs w1 alone. */
  readonly workers: number;
  /**
   * Where the consumer keeps its durable state: `whitebox`, in the world's store, through
   * calls; `blackbox`, in a store of its own, which the world looks into and records as
   * observed steps. A whitebox history has no observed step.
   */
  readonly consumer: ConsumerKind;
  /**
   * What the consumer declared it does with a refused effect (its source profile). Absent:
   * it dead-letters, and a visible failure is judged as always. `fail-visibly`: it stops
   * for an operator instead, so a visible failure while a refused event is unhandled is its
   * honest end, not a liveness failure.
   */
  readonly refusals?: Refusals;
  /**
   * The order the source delivered pages in. Absent: ascending, the stable order, as every
   * history before the field was written. `newest-first`: ground truth replays every page
   * from the newest event down.
   */
  readonly order?: DeliveryOrder;
  /**
   * What the source's page tokens are (model/tokens.ts). Absent: plain continuations, as
   * every history before the field was written. `scroll` or `iterator`: ground truth
   * replays every token by the rule of its kind.
   */
  readonly tokens?: TokenKind;
}

export const REFUSALS = ['dead-letter', 'fail-visibly'] as const;
export type Refusals = (typeof REFUSALS)[number];

export const PHASES = ['adversity', 'drain'] as const;
export type Phase = (typeof PHASES)[number];

/** A worker incarnation: worker `w1`, its 3rd life. Memory never crosses incarnations. */
export interface Actor {
  readonly worker: string;
  readonly incarnation: number;
}

export type Step = CallStep | LifeStep | MutationStep | RebindStep | ObservedStep;

export const STEP_KINDS = kindsOf<Step['kind']>()(['call', 'life', 'mutation', 'rebind', 'observed']);

/**
 * Faults the plan puts at a call: `crash-before` (the worker dies before the call takes
 * effect), `crash-after` (it took effect, the worker dies before it learns), `error` (it
 * failed definitely: `unavailable`), `timeout` (it took effect, the caller hears only that
 * it may not have) and `lost` (the request was lost on its way: it took no effect, and the
 * caller hears the same timeout, so that an indefinite answer is truly indefinite). They
 * fire in the adversity phase only.
 */
export const CALL_FAULTS = ['crash-before', 'crash-after', 'error', 'timeout', 'lost'] as const;
export type CallFault = (typeof CALL_FAULTS)[number];

/**
 * Ways a real paginated API misbehaves without failing, in both phases: `overlap` repeats
 * the end of the previous page, `repeat` serves the previous page again, `empty` returns no
 * events but a token, `stale` rejects the token as expired, `reorder` shuffles the page,
 * `short` returns fewer events than asked although more remain. They apply to fetches only.
 */
export const PAGE_QUIRKS = ['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'] as const;
export type PageQuirk = (typeof PAGE_QUIRKS)[number];

/**
 * What each page quirk serves, exactly, and when it fires: ground truth (model/truth.ts)
 * replays a page from these sentences, and a quirk with nothing to act on does not fire (the
 * page is then the plain one, unlabelled). docs/design.md says the same.
 */
export const PAGE_QUIRK_MEANINGS: Readonly<Record<PageQuirk, string>> = {
  overlap: 'the page begins with the two eligible events before where it resumes (fewer at the start of the stream), then the page; fires when the request does not resume at the start',
  repeat: "the binding's previous page again, token and all; fires when that page had a token, the source has not changed since, and it does not start past where the request resumes",
  empty: 'no events, and a token that resumes exactly where the request did; fires when eligible events remain there',
  stale: 'the token is refused as expired (stale-token) and never accepted again; fires on a request that resumes by token',
  reorder: "the page's events in reverse order when they are an even number, and with the first event moved to the end when odd; fires when the page holds two events or more",
  short: 'one event although more were asked for; fires when more than one eligible event remains and the page could hold more than one',
};

/** What a call step's `fault` may say: a closed vocabulary, so that no label can switch a check off. */
export const FAULT_LABELS = [...CALL_FAULTS, ...PAGE_QUIRKS] as const;
export type FaultLabel = (typeof FAULT_LABELS)[number];

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
  readonly fault?: FaultLabel;
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

export const OUTCOME_KINDS = kindsOf<Outcome['kind']>()(['ok', 'error', 'indefinite', 'crash-before', 'crash-after']);

export type Call =
  | { readonly kind: 'fetch'; readonly request: FetchRequest }
  | { readonly kind: 'load' }
  | { readonly kind: 'completed'; readonly events: readonly EventRef[] }
  | { readonly kind: 'commit'; readonly ops: readonly StoreOp[]; readonly fence: number | null }
  /**
   * `key`, when present, is the ordering key the effect carries for its version (a
   * connector's record carries its cursor value), or null when it carries none that could be
   * read: the checker holds it to the key the source served that version at.
   */
  | { readonly kind: 'emit'; readonly event: EventRef; readonly payload: string; readonly key?: readonly number[] | null }
  | { readonly kind: 'lease' }
  | { readonly kind: 'claim'; readonly claim: Claim }
  /** A call whose arguments the world could not read; it fails with bad-request. */
  | { readonly kind: 'malformed'; readonly method: string; readonly problem: string };

export type CallKind = Call['kind'];
export const CALL_KINDS = kindsOf<CallKind>()(['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'claim', 'malformed']);

export type Claim = { readonly kind: 'caught-up' } | { readonly kind: 'failed'; readonly reason: string };
export const CLAIM_KINDS = kindsOf<Claim['kind']>()(['caught-up', 'failed']);

export type CallResult =
  | { readonly kind: 'page'; readonly page: Page }
  | { readonly kind: 'state'; readonly state: DurableState }
  | { readonly kind: 'flags'; readonly flags: readonly boolean[] }
  | { readonly kind: 'generation'; readonly generation: number }
  | { readonly kind: 'done' };

export const RESULT_KINDS = kindsOf<CallResult['kind']>()(['page', 'state', 'flags', 'generation', 'done']);

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

export const LIFE_EVENTS = kindsOf<LifeStep['event']['kind']>()(['start', 'threw', 'returned', 'budget', 'hung']);

/**
 * A change to the source, made by the world within the source's contract: a new event, or
 * a new version of one (moved in the order, or with different attributes).
 */
export interface MutationStep {
  readonly kind: 'mutation';
  readonly seq: number;
  readonly phase: Phase;
  readonly event: SourceEvent;
  readonly mutation: Mutation;
}

export const MUTATIONS = ['insert', 'move', 'flip'] as const;
export type Mutation = (typeof MUTATIONS)[number];

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
  /** The call the rebind came before, which died with its worker: it counts where the plan places changes and the rebind. */
  readonly call: Call;
}
