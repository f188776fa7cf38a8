/**
 * An error a world call returns to the consumer. Every error is either definite (the call
 * did not happen) or indefinite (it may have happened; in the simulation it did). "When in
 * doubt, indefinite is always safe": a consumer must handle both outcomes of an indefinite
 * error.
 */
export class WorldError extends Error {
  readonly code: WorldErrorCode;
  readonly definite: boolean;

  /**
   * Built without a stack trace. A world error is an answer the world gives a consumer, not
   * a fault in the code that raises it: its stack would only point into the scheduler, and
   * capturing one for every refused call, conflict and injected fault was a measurable part
   * of a world's cost.
   */
  constructor(code: WorldErrorCode, definite: boolean, message?: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message ?? `${code} (${definite ? 'definite: it did not happen' : 'indefinite: it may have happened'})`);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
    this.definite = definite;
    this.name = 'WorldError';
  }
}

export type WorldErrorCode =
  /** Injected failure: the service was unavailable and did nothing. */
  | 'unavailable'
  /** Injected timeout: the service did the work, the caller never heard. */
  | 'timeout'
  /** A compare-and-set, a fence or a guard did not hold. */
  | 'conflict'
  /** The page token is unknown, expired, or was minted for another binding. */
  | 'stale-token'
  /** The request was malformed or used a resume style the source does not offer. */
  | 'bad-request'
  /** A poison event: its effect is refused every time, however often it is tried. */
  | 'rejected';
