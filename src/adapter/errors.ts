/**
 * Errors about the consumer under test that are not verdicts on its ingestion logic: the
 * adapter module cannot be loaded, its harness-facing code breaks the adapter contract, or
 * the consumer cannot be run at all. The CLI reports each as a usage error (exit 3).
 */

/** The adapter module could not be used; the message names the module and what is wrong. */
export class AdapterLoadError extends Error {
  override name = 'AdapterLoadError';
}

/** An adapter error: the consumer's harness-facing code is broken, not its ingestion logic. */
export class AdapterError extends Error {
  override name = 'AdapterError';
}

/**
 * What a consumer's run() rejects with to stop the whole run instead of ending one
 * incarnation: the consumer cannot be run at all (a process that dies on start every time,
 * say), so no world can be judged. The world stops every incarnation and rethrows it.
 */
export class ConsumerUnrunnableError extends Error {
  override name = 'ConsumerUnrunnableError';
}
