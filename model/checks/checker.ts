import type { Anomaly, AnomalyKind } from '../anomalies.js';
import type { History, Step } from '../history.js';
import type { Facts, Truth } from '../truth.js';

/**
 * One concern of the oracle. A checker walks the history beside ground truth, step by step,
 * and says for each anomaly kind it owns whether the kind was found, whether the history
 * exercised it at all, and if not, why not. Checkers share no state; they are composed in
 * `check()` (model/checker.ts), as Maelstrom composes its checkers.
 */
export interface Checker {
  readonly kinds: readonly AnomalyKind[];
  /** Sees one step after ground truth has replayed it; `found` holds what other checkers reported at this step. */
  visit(step: Step, facts: Facts, truth: Truth, found: readonly Anomaly[]): void;
  /** After the last step. */
  finish(truth: Truth, history: History): void;
  /** Why a kind was not exercised by this history, or null when it was. */
  untested(kind: AnomalyKind): string | null;
  readonly anomalies: readonly Anomaly[];
}

/** What one checker says of one anomaly kind in one history. */
export type CheckOutcome =
  | { readonly status: 'pass' }
  | { readonly status: 'fail'; readonly anomalies: readonly Anomaly[] }
  | { readonly status: 'untested'; readonly reason: string };
