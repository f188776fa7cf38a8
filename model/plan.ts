import type { Binding } from './binding.js';
import type { CallKind, FaultLabel, Mutation } from './history.js';
import { kindsOf } from './kinds.js';

/**
 * The plan of a world as its history records it, in the header: which fault or page quirk
 * the plan put at which call, and which changes it made to the source. Ground truth replays
 * the calls against it, so that what the world says fired (a label, an outcome, `applied`)
 * is a claim compared with what the plan and the source make of that call, never a fact
 * taken on trust (model/truth.ts).
 *
 * The addressing rule (which call an address names) is the one scenarios/plan.ts states for
 * plans; model/addresses.ts replays it.
 */

/**
 * What an address may name besides a concrete call kind: `effect`, whichever call makes an
 * event's effect durable (an emit, or a commit carrying an effect or an outbox handoff);
 * `checkpoint`, a commit that writes the watermark.
 */
export const ADDRESS_ALIASES = ['effect', 'checkpoint'] as const;
export type AddressAlias = (typeof ADDRESS_ALIASES)[number];

/** The calls an address can name: every call but a malformed one (which the world never counts). */
export type PlaceableCall = Exclude<CallKind, 'malformed'> | AddressAlias;
export const PLACEABLE_CALLS = kindsOf<PlaceableCall>()(['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'claim', 'effect', 'checkpoint']);

/** The calls a fault can be put at: not a claim (a crash before a claim is a crash after the call before it). */
export type FaultableCall = Exclude<PlaceableCall, 'claim'>;
export const FAULTABLE_CALLS = kindsOf<FaultableCall>()(['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'effect', 'checkpoint']);

/**
 * A call boundary: the `nth` (from 0) call of that kind, counted from the start of the run;
 * with `after`, only the calls about that event (an emit, a completion check or a commit
 * naming it), or for any other kind the calls from the first fetch that returned it; with
 * `since` (faults only), the calls after the `since`-th effect call (from 0) of the run.
 */
export interface Address {
  readonly call: PlaceableCall;
  readonly nth: number;
  readonly after?: string;
  readonly since?: number;
}

/** One fault or page quirk the plan put at one call. */
export interface PlannedFault extends Address {
  readonly call: FaultableCall;
  readonly kind: FaultLabel;
}

/**
 * One change the plan makes to the source in the adversity phase, before the call `before`
 * names. The world makes it concrete (which event, which position) within the contract and
 * records it as a mutation step; `back` is how far behind the head it asks to land.
 */
export interface PlannedMutation {
  readonly before: Address;
  readonly kind: Mutation;
  readonly target: number;
  readonly back: number;
}

/**
 * The plan's rebind: before the adversity call `before` names, the world stops every worker
 * and restarts them under `binding` on the same store. That call dies with its worker, so the
 * rebind step records it (model/history.ts, RebindStep), and it counts where changes and the
 * rebind are placed as any call does.
 */
export interface PlannedRebind {
  readonly before: Address;
  readonly binding: Binding;
}
