import type { Binding } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { CallKind, Contract, ResumeStyle } from '../model/history.js';

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
}

export interface SourceSpec {
  /** The most events one page carries; a request may ask for fewer. */
  readonly pageSize: number;
  /** Resume forms offered besides the opaque token, which every source offers. */
  readonly resumes: readonly ResumeStyle[];
  readonly contract: Contract;
}

/** Calls that can be faulted. Claims are not: a crash before a claim is a crash after the call before it. */
export type FaultableCall = Exclude<CallKind, 'claim'>;
export const FAULTABLE_CALLS: readonly FaultableCall[] = ['fetch', 'load', 'completed', 'commit', 'emit', 'lease'];

/**
 * One fault at one call boundary of the adversity phase: the `nth` (from 0) call of that
 * kind. `crash-before` kills the worker before the call takes effect, `crash-after` after
 * it took effect but before the worker learns, `error` fails it definitely.
 */
export interface Fault {
  readonly call: FaultableCall;
  readonly nth: number;
  readonly kind: FaultKind;
}

export type FaultKind = 'crash-before' | 'crash-after' | 'error';
export const FAULT_KINDS: readonly FaultKind[] = ['crash-before', 'crash-after', 'error'];

/** Step budgets for each phase; a phase that runs out ends there. */
export interface Budget {
  readonly adversity: number;
  readonly drain: number;
}
