import type { Binding } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { TokenKind } from '../model/tokens.js';
import { CALL_FAULTS, FAULT_LABELS, PAGE_QUIRKS, type CallFault, type Contract, type DeliveryOrder, type FaultLabel, type PageQuirk, type ResumeStyle } from '../model/history.js';
import { ADDRESS_ALIASES, FAULTABLE_CALLS as ADDRESSABLE_FAULT_CALLS, PLACEABLE_CALLS, type AddressAlias, type FaultableCall, type PlaceableCall } from '../model/plan.js';

export { CALL_FAULTS, PAGE_QUIRKS, PLACEABLE_CALLS, type CallFault, type FaultableCall, type PageQuirk, type PlaceableCall };

/**
 * A plan is one world as data: the stream, the binding, how the source paginates, which
 * calls fail or crash, how concurrent calls interleave, and the seed for the world's
 * fine-grained choices. The world executes it; nothing about it is decided at run time.
 */
export interface Plan {
  readonly events: readonly SourceEvent[];
  readonly binding: Binding;
  readonly source: SourceSpec;
  readonly faults: readonly Fault[];
  /** Choices among concurrently pending calls, consumed in order; 0 (oldest first) once used up. */
  readonly schedule: readonly number[];
  /** Seeds the world's fine-grained choices, such as the bytes of opaque tokens. */
  readonly seed: string;
  readonly budget: Budget;
  /** Competing workers in the adversity phase (the drain phase has one). */
  readonly workers: number;
  /** Lease time to live, in steps (model/api.ts, units): a worker that stops renewing loses it after this long. */
  readonly leaseTtlSteps: number;
  /** Changes to the source during the adversity phase, kept within its contract. */
  readonly mutations: readonly MutationSpec[];
  /** Restart every worker under another binding, on the same store, at this adversity call. */
  readonly rebind: { readonly before: Placement; readonly binding: Binding } | null;
  /** Ids of poison events: every effect for them is refused, in both phases. */
  readonly poison: readonly string[];
}

/**
 * Where in a run something happens: just before the `nth` (from 0) call of that kind in the
 * adversity phase. Counting per kind, as faults do, keeps a change at the same point of the
 * consumer's work when shrinking removes events before it: "before the third commit" stays
 * that, where "before call 57" would drift.
 */
export interface Placement {
  readonly call: PlaceableCall;
  readonly nth: number;
  /**
   * Tie the address to this event (by id) instead of the start of the run. For an emit, a
   * completion check or a commit, only calls about the event count: "before the second
   * commit about e07". For any other call, counting starts at the first fetch that returned
   * it: "before the first fetch after e07 arrived". Such an address stays with its event
   * when shrinking removes other events; an event never delivered never arms it.
   */
  readonly after?: string;
}

/**
 * `effect` names whichever call makes an event's effect durable: an emit, or a commit that
 * carries an effect or an outbox handoff. A named scenario about "the first effect" uses it,
 * so that its adversity lands on a transactional consumer's commit as surely as on an
 * emitting consumer's emit. The generators address concrete calls only.
 */
export type EffectCall = 'effect';
/**
 * `checkpoint` names a commit that writes the watermark: a consumer's checkpoint, whatever
 * else the commit carries. "Crash at the third checkpoint" stays at the consumer's third
 * checkpoint however many records it commits between them, where "the 40th commit" would
 * land anywhere between two checkpoints of a consumer that commits each record.
 */
export type CheckpointCall = 'checkpoint';
// PlaceableCall and PLACEABLE_CALLS are the model's (model/plan.ts): a history's header carries these addresses.

/**
 * A change to the source, at its placement in the adversity phase. The world turns it
 * into a concrete event at that moment and keeps it within the contract: `back` says how far
 * behind the head it would like to land, and the contract says how far it may.
 * `insert` adds an event, `move` gives an existing event (the `target`-th, modulo their
 * number) a new version at a new position, `flip` a new version whose filter attribute flips.
 */
export interface MutationSpec {
  readonly before: Placement;
  readonly kind: 'insert' | 'move' | 'flip';
  readonly target: number;
  readonly back: number;
}

export interface SourceSpec {
  /** The most events one page carries; a request may ask for fewer. */
  readonly pageSize: number;
  /** Resume forms offered besides the opaque token, which every source offers. */
  readonly resumes: readonly ResumeStyle[];
  readonly contract: Contract;
  /**
   * The order pages come in. Absent: `ascending`, the stable order. `newest-first`: from the
   * newest event down (see NEWEST_FIRST_QUIRKS for what such a source can do besides).
   */
  readonly order?: DeliveryOrder;
  /**
   * What a page token is (model/tokens.ts). Absent: `continuation`, a token sent again serves
   * the same page again. `scroll`: the server moves a scroll on whenever it serves a page.
   * `iterator`: a token whose batch came back empty serves it again; only its `next` moves on.
   */
  readonly tokens?: TokenKind;
}

/**
 * What a newest-first source offers: it resumes from the start (the newest page) or by a
 * token (the next older page) only, since a consumer of such an API reads from the top down
 * to its bookmark on every sync; and of the page quirks, only those that mean the same
 * read downwards: an empty page with a token, a short page, an expired token.
 */
export const NEWEST_FIRST_QUIRKS: readonly PageQuirk[] = ['empty', 'short', 'stale'];

/**
 * The concrete calls the generators fault (FaultableCall, model/plan.ts, without its
 * aliases); a plan may also name `effect` and `checkpoint`. Claims are not faulted: a crash
 * before a claim is a crash after the call before it.
 */
export const FAULTABLE_CALLS = ADDRESSABLE_FAULT_CALLS.filter((c): c is Exclude<FaultableCall, AddressAlias> => !(ADDRESS_ALIASES as readonly string[]).includes(c));

/**
 * One fault at one call boundary: the `nth` (from 0) call of that kind in the run, or after
 * an event's first delivery. Faults
 * fire in the adversity phase only; page quirks are the source's behaviour and fire in the
 * drain phase too. `crash-before` kills the worker before the call takes effect, `crash-after` after
 * it took effect but before the worker learns, `error` fails it definitely, `timeout` applies
 * it and fails it indefinitely, `lost` fails it indefinitely without applying it (the caller
 * hears the same timeout). The page quirks apply to fetches only.
 */
export interface Fault {
  readonly call: FaultableCall;
  readonly nth: number;
  readonly kind: FaultKind;
  /** As for a placement: count only calls about this event, or from its first delivery. */
  readonly after?: string;
  /**
   * Count only the calls made after the consumer's `since`-th effect (from 0) of the run:
   * `{ call: 'commit', nth: 0, since: 1499 }` is the first commit after the 1,500th effect,
   * so a crash there lands between a consumer's checkpoints wherever its records fall. Not
   * with `after`.
   */
  readonly since?: number;
}

/**
 * A call fault or a page quirk (model/history.ts declares both, since a history records the
 * one that fired): a `repeat` serves only a page that had a next token, a `stale` token is
 * forgotten for good.
 */
export type FaultKind = FaultLabel;
export const FAULT_KINDS: readonly FaultKind[] = FAULT_LABELS;

export function isPageQuirk(kind: FaultKind): kind is PageQuirk {
  return (PAGE_QUIRKS as readonly string[]).includes(kind);
}

/** Step budgets for each phase; a phase that runs out ends there. */
export interface Budget {
  readonly adversity: number;
  readonly drain: number;
}
