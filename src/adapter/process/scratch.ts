import { tmpdir } from 'node:os';

/**
 * Where a run makes the temporary directories of its stores: a blackbox consumer's store, a
 * connector's sync directory. `check --jobs` gives its jobs the directory of its run here
 * (src/cli/jobs.ts), so that everything a job makes lies in one directory that the checking
 * process removes when it ends, and its supervisor if it dies outright: however the job
 * ended, and whether or not it had reported its stores yet. Otherwise the system's
 * temporary directory.
 */
export const JOB_DIR_VARIABLE = 'TIDEMARK_JOB_DIR';

export function scratchDir(): string {
  const dir = process.env[JOB_DIR_VARIABLE];
  return dir === undefined || dir === '' ? tmpdir() : dir;
}

/**
 * The longest path a Unix socket can be bound at: sun_path holds 108 bytes on Linux, 104 on
 * macOS and the BSDs, the terminating NUL included.
 */
const SOCKET_PATH_MAX = 103;

/**
 * Where a fork server's socket directory is made: the run's directory, when a socket at
 * `<it>/tidemark-fork-XXXXXX/s` fits within the limit of a socket's path; else the system's
 * temporary directory, where a job's socket directory is left to its reports (src/cli/jobs.ts).
 */
export function socketScratchDir(): string {
  const dir = scratchDir();
  return Buffer.byteLength(`${dir}/tidemark-fork-XXXXXX/s`) <= SOCKET_PATH_MAX ? dir : tmpdir();
}
