import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

/**
 * Processes that escape their process group. tidemark starts every consumer process and
 * connector in a group of its own and SIGKILLs the group, which reaches everything it
 * started, except what left the group: `setsid`, a double fork into a new session, any
 * daemon. Such a process outlives the attempt, and the run, holding a port, a lock, a file,
 * and can change what the next attempt does.
 *
 * So every process tidemark starts carries a mark in its environment, `TIDEMARK_RUN=<mark>`,
 * unique to it, and the environment is inherited by everything it starts, in its group or
 * not. When the process ends, and when the run ends, the processes carrying its mark (or any
 * mark of this run) are found in /proc/<pid>/environ and SIGKILLed.
 *
 * The limits: this is Linux only (elsewhere, no /proc: an escaped process survives, as it
 * always did); /proc/<pid>/environ is the environment a process was started with, so a
 * process that was started with a clean one (`env -i`, an `exec` with its own environment)
 * carries no mark; and only the processes of the same user can be read, which are the only
 * ones tidemark could kill anyway.
 */
export const MARK_VARIABLE = 'TIDEMARK_RUN';

/**
 * This process's marks all begin with it: one run's processes, told apart from another run's.
 * A process that carries a mark itself (a job of `check --jobs`, which the checking process
 * starts with one) nests its run under it, so that every process it starts carries a mark
 * that begins with its starter's run too: what kills the starter's run by its prefix (its
 * supervisor, when it dies outright) reaches them as well.
 */
const RUN = nested(process.env[MARK_VARIABLE], randomBytes(8).toString('hex'));

function nested(inherited: string | undefined, own: string): string {
  return inherited === undefined || inherited === '' ? own : `${inherited}/${own}`;
}
let marks = 0;

/** A new mark, for one process about to start. */
export function newMark(): string {
  return `${RUN}.${++marks}`;
}

/** The prefix every mark of this process's run begins with. */
export function runMark(): string {
  return `${RUN}.`;
}

/** How many times a kill is followed by another look: a process forking as it dies leaves its child for the next one. */
const ROUNDS = 5;

/**
 * SIGKILLs every process carrying this mark (an exact mark, or a prefix ending in `.` or
 * `/`, which matches every mark that begins with it: a run's, or every run nested under a
 * mark), and looks again, until a look finds none or
 * the rounds are spent. Never this process. Returns how many were signalled.
 */
export function killMarked(mark: string): number {
  if (process.platform !== 'linux') return 0;
  const needle = Buffer.from(`${MARK_VARIABLE}=${mark}`);
  const whole = !mark.endsWith('.') && !mark.endsWith('/');
  let killed = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const found = marked(needle, whole);
    if (found.length === 0) break;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return killed;
}

/**
 * Where environments are read, grown when one is larger. A look reads every process's
 * environment; readFileSync would allocate a buffer for each, and grow it chunk by chunk,
 * since /proc reports a size of 0: reading into one buffer made a look about 2.4 times cheaper.
 */
let scratch = Buffer.allocUnsafe(64 * 1024);

/** The pids whose environment holds the needle as a whole entry (or, when not whole, the start of one). */
function marked(needle: Buffer, whole: boolean): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const environ = environOf(pid);
    if (environ !== null && holds(environ, needle, whole)) found.push(pid);
  }
  return found;
}

/** A process's environment as it was started, a view of the scratch buffer valid until the next read; null if it cannot be read (another user's, or gone). */
function environOf(pid: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, 'r');
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        const larger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(larger, 0, 0, length);
        scratch = larger;
      }
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) return scratch.subarray(0, length);
      length += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Whether a NUL-separated environment holds the needle at the start of an entry (and, if whole, as the entire entry). */
function holds(environ: Buffer, needle: Buffer, whole: boolean): boolean {
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    if (at > 0 && environ[at - 1] !== 0) continue;
    const end = at + needle.length;
    if (!whole || end === environ.length || environ[end] === 0) return true;
  }
  return false;
}
