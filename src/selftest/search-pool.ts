import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { findMutant, type Mutant } from './mutants.js';
import { killOne } from './kill-one.js';
import type { KillRow } from './kill-matrix.js';

/** One mutant search: the mutant, its budget in worlds, and the seed that decides everything. */
export interface SearchTask {
  readonly mutant: string;
  readonly runs: number;
  readonly seed: number;
}

/** As many threads as the machine has cores: a search is pure computation. */
export const DEFAULT_JOBS = availableParallelism();

type Reply = { readonly index: number; readonly row: KillRow } | { readonly index: number; readonly error: string };

/**
 * Runs searches on `jobs` worker threads, each search whole on one thread, and returns their
 * rows in task order. A search is decided by its mutant, budget and seed alone, so where and
 * when it runs changes only how long it takes (`ms`), never its row. One job runs in process.
 */
export async function runSearches(tasks: readonly SearchTask[], jobs = DEFAULT_JOBS, done: (row: KillRow, index: number) => void = () => {}): Promise<KillRow[]> {
  const unknown = tasks.find((t) => findMutant(t.mutant) === undefined);
  if (unknown !== undefined) throw new Error(`no mutant named '${unknown.mutant}'`);
  if (jobs <= 1 || tasks.length <= 1) {
    const rows: KillRow[] = [];
    for (const [i, t] of tasks.entries()) {
      rows.push(await killOne(findMutant(t.mutant) as Mutant, t.runs, t.seed));
      done(rows[i] as KillRow, i);
    }
    return rows;
  }
  const rows: (KillRow | undefined)[] = tasks.map(() => undefined);
  let next = 0;
  const threads = Array.from({ length: Math.min(jobs, tasks.length) }, () => startWorker());
  try {
    await Promise.all(
      threads.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const send = (): void => {
              if (next >= tasks.length) return resolve();
              const index = next++;
              worker.postMessage({ ...tasks[index], index });
            };
            worker.on('message', (reply: Reply) => {
              if ('error' in reply) return reject(new Error(`search ${describe(tasks[reply.index])} failed: ${reply.error}`));
              rows[reply.index] = reply.row;
              done(reply.row, reply.index);
              send();
            });
            worker.on('error', reject);
            worker.on('exit', (code) => (next < tasks.length || rows.includes(undefined) ? reject(new Error(`a search thread exited with code ${code}`)) : resolve()));
            send();
          }),
      ),
    );
  } finally {
    await Promise.all(threads.map((w) => w.terminate()));
  }
  return rows as KillRow[];
}

function describe(task: SearchTask | undefined): string {
  return task === undefined ? '(unknown)' : `${task.mutant} at seed ${task.seed}`;
}

/**
 * A thread running search-worker. Built, it is a .js module next to this one; from source
 * (the tests) it is .ts, loaded through tsx as adapters are.
 */
function startWorker(): Worker {
  const source = import.meta.url.endsWith('.ts');
  const url = new URL(`./search-worker.${source ? 'ts' : 'js'}`, import.meta.url);
  if (!source) return new Worker(url);
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => tsx.tsImport(${JSON.stringify(url.href)}, ${JSON.stringify(url.href)}));`;
  return new Worker(boot, { eval: true });
}
