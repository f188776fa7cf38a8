import type { EventRef } from '../../model/event.js';

/**
 * An error a world call returns to the consumer. Every error is either definite (the call
 * did not happen) or indefinite (it may have happened; in the simulation it did). "When in
 * doubt, indefinite is always safe": a consumer must handle both outcomes of an indefinite
 * error.
 *
 * Two codes carry more than their name, because a consumer must act differently on each
 * case: a `conflict` says which guard refused (`cause`), and a `rejected` names the refused
 * event version (`ref`), so that neither has to be parsed out of the message.
 */
export class WorldError extends Error {
  readonly code: WorldErrorCode;
  readonly definite: boolean;
  /** For a `conflict`: which guard did not hold. Absent for every other code. */
  declare readonly cause?: ConflictCause;
  /** For a `rejected`: the event version whose effect was refused. Absent for every other code. */
  declare readonly ref?: EventRef;

  /**
   * Built without a stack trace. A world error is an answer the world gives a consumer, not
   * a fault in the code that raises it: its stack would only point into the scheduler, and
   * capturing one for every refused call, conflict and injected fault was a measurable part
   * of a world's cost.
   */
  constructor(code: WorldErrorCode, definite: boolean, message?: string, detail: WorldErrorDetail = {}) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message ?? `${code} (${definite ? 'definite: it did not happen' : 'indefinite: it may have happened'})`, detail.cause === undefined ? undefined : { cause: detail.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    this.definite = definite;
    this.name = 'WorldError';
    // Only when present, so that an error without a ref has no `ref` key at all.
    if (detail.ref !== undefined) Object.defineProperty(this, 'ref', { value: { id: detail.ref.id, version: detail.ref.version }, enumerable: true });
  }
}

export interface WorldErrorDetail {
  readonly cause?: ConflictCause;
  readonly ref?: EventRef;
}

/**
 * Which guard refused a `conflict`, and what a correct consumer does about it:
 * - `fence`: the commit's `fence` is not the newest lease generation; another worker took
 *   over. Stop, take the lease again, and reload durable state before doing anything.
 * - `expect`: the watermark's compare-and-set saw another value; someone else moved it.
 *   Reload it; never write over it.
 * - `unless-completed`: the event already has a completion record; an earlier life or
 *   another worker handled it. That is a durable outcome, not a failure.
 * - `lease-held`: another worker holds an unexpired lease. Back off and ask again later.
 */
export type ConflictCause = 'fence' | 'expect' | 'unless-completed' | 'lease-held';
export const CONFLICT_CAUSES: readonly ConflictCause[] = ['fence', 'expect', 'unless-completed', 'lease-held'];

export type WorldErrorCode =
  /** Injected failure: the service was unavailable and did nothing. */
  | 'unavailable'
  /** Injected timeout: the service did the work, the caller never heard. */
  | 'timeout'
  /** A compare-and-set, a fence or a guard did not hold; `cause` says which. */
  | 'conflict'
  /** The page token is unknown, expired, or was minted for another binding. */
  | 'stale-token'
  /** The request was malformed or used a resume style the source does not offer. */
  | 'bad-request'
  /** A poison event: its effect is refused every time, however often it is tried; `ref` names it. */
  | 'rejected';
