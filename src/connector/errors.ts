import { ConsumerUnrunnableError } from '../adapter/errors.js';

/**
 * The connector cannot be judged at all: it speaks another protocol, or it never prints a
 * RECORD or STATE line. The run stops (it is a ConsumerUnrunnableError, so the world stops
 * every incarnation and rethrows it) and its verdict is unknown, with this reason.
 */
export class ConnectorUnjudgedError extends ConsumerUnrunnableError {
  override name = 'ConnectorUnjudgedError';
}
