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

/**
 * tidemark's own code failed inside a consumer it provides (the platform a connector runs
 * under): not the consumer's failure, so never an incarnation's end that the world records and
 * retries as if the consumer had thrown. The world stops the run and rethrows it, and the CLI
 * reports a harness error (exit 4) with its stack, which holds the original error's.
 */
export class HarnessError extends Error {
  override name = 'HarnessError';

  constructor(where: string, error: unknown) {
    const original = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    super(`${where} failed, in tidemark's own code: ${original}`, { cause: error });
    if (error instanceof Error && error.stack !== undefined) this.stack = `${this.stack ?? this.message}\nCaused by: ${error.stack}`;
  }
}
