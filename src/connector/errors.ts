import { ConsumerUnrunnableError } from '../adapter/errors.js';

/**
 * The connector cannot be judged at all: it speaks another protocol, or it never prints a
 * RECORD or STATE line. The run stops (it is a ConsumerUnrunnableError, so the world stops
 * every incarnation and rethrows it) and its verdict is unknown, with this reason.
 */
export class ConnectorUnjudgedError extends ConsumerUnrunnableError {
  override name = 'ConnectorUnjudgedError';
}

/**
 * The connector exited with an error: its sync attempt failed, as a platform sees it, and the
 * world starts the next one from the persisted state. The only error a sync attempt ends with
 * that is the connector's doing; anything else the platform's code throws is tidemark's own
 * failure (a HarnessError), never retried.
 */
export class ConnectorFailedError extends Error {
  override name = 'ConnectorFailedError';
}
