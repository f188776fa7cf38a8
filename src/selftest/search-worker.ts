import { parentPort } from 'node:worker_threads';
import { findMutant } from './mutants.js';
import { killOne } from './kill-one.js';
import type { KillRow } from './kill-matrix.js';
import type { SearchTask } from './search-pool.js';

/** One thread of the search pool: runs the searches it is sent, one at a time, and sends back their rows. */
parentPort?.on('message', (task: SearchTask & { readonly index: number }) => {
  const search = async (): Promise<KillRow> => {
    const mutant = findMutant(task.mutant);
    if (mutant === undefined) throw new Error(`no mutant named '${task.mutant}'`);
    return killOne(mutant, task.runs, task.seed);
  };
  search().then(
    (row) => parentPort?.postMessage({ index: task.index, row }),
    (error: unknown) => parentPort?.postMessage({ index: task.index, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
