import { readFileSync } from 'node:fs';
import type { WorkerWorld } from '../consumer.js';
import type { WorldEnd } from '../../world/end.js';
import { atExit } from './at-exit.js';
import { ConsumerProcess, running, SpawnedProcess, type SpawnOptions } from './consumer-process.js';
import type { ForkServer } from './fork-server.js';
import { killMarked, runMark } from './marks.js';

/**
 * How incarnations of a process consumer end. `real`: each is its own process, killed with
 * SIGKILL. `sampled`: when the consumer's hello offers sessions, most worlds end their
 * incarnations with a session crash (the process drops its memory and serves the next
 * incarnation), and one world in REAL_KILL_EVERY still kills every incarnation for real.
 */
export type Kills = 'real' | 'sampled';

/**
 * Under `sampled` kills, one world in this many runs with real kills: the first world of a
 * run, then every 50th. Measured with the Node example on two busy cores, a world of real
 * kills cost about 12 times one of session crashes (0.6 s against 0.05 s): one in 10 made the
 * real kills cost more than all the session worlds together, one in 50 keeps a check within
 * 5 times the in-process time while still killing for real in 20 worlds of a 1,000-world
 * check, besides every failure's final replay.
 */
export const REAL_KILL_EVERY = 50;

export interface PoolOptions extends SpawnOptions {
  /** Start the next incarnation's process before it is needed. Default true. */
  readonly warm?: boolean | undefined;
  readonly kills?: Kills | undefined;
  /** A session process serves at most this many incarnations, then is replaced. Default SESSION_INCARNATIONS. */
  readonly sessionIncarnations?: number | undefined;
  /** A session process whose resident memory passes this many megabytes is replaced. Default SESSION_MEMORY_MB. */
  readonly sessionMemoryMb?: number | undefined;
}

/**
 * A session process lives across incarnations, so whatever it leaks stays: a consumer
 * leaking 20 MB an incarnation grew single processes to several gigabytes. After this many
 * incarnations, or past this much resident memory, it is killed and a fresh one serves the
 * next incarnation, as a real restart would.
 */
export const SESSION_INCARNATIONS = 100;
export const SESSION_MEMORY_MB = 1024;

/**
 * The resident memory of a process and its descendants in megabytes, from /proc (Linux):
 * the command runs under a shell, so the consumer is often the shell's child. Null where
 * /proc cannot be read; then only the incarnation count recycles.
 */
function residentMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let pages = 0;
  const seen = new Set<number>();
  const walk = (p: number, depth: number): boolean => {
    if (seen.has(p) || depth > 8) return true;
    seen.add(p);
    try {
      pages += Number(readFileSync(`/proc/${p}/statm`, 'utf8').split(' ')[1]) || 0;
      for (const child of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').split(' ').filter(Boolean)) walk(Number(child), depth + 1);
      return true;
    } catch {
      return p !== pid;
    }
  };
  return walk(pid, 0) ? (pages * 4096) / 1_048_576 : null;
}

/** The crash-loop state the pool must respect: no spare for a command that cannot start. */
export interface LoopState {
  /** Incarnations in a row that ended on their own without making anything durable (see CRASH_LOOP_LIMIT). */
  readonly inARow: number;
  /** Some incarnation made a world call: the command can start. */
  readonly proven: boolean;
  readonly tripped: unknown;
}

/**
 * The processes of one process consumer that are not serving an incarnation right now: at
 * most one warm spare (started, never used, so it can be any incarnation's own process) and
 * the session processes between two incarnations. Processes are started outside the
 * simulation: which one serves an incarnation, and when it was started, never changes what
 * the world sees, because the world waits for every process between its calls.
 *
 * Nothing here outlives the worlds that use it. A world that was stopped (it hung, or an
 * error stopped it) kills all of it, fork server included, when it ends, before it returns
 * (worldEnded): such a world is most often the run's last, and a sweep left to the end of a
 * turn waits for the event loop, which busy timers can keep from it for as long as they
 * last. After a world that ran to its end, the next one usually follows within the same
 * turn and takes over the spare and the idle sessions; once no incarnation of the consumer
 * is alive at the end of a macrotask turn (no next world began at once), they are killed. A
 * fork server (fork-server.ts), when the hello offers one, is then kept a little longer,
 * FORK_SERVER_IDLE_MS, for the next world or the incarnation after one that ended on its
 * own, and never keeps the harness running. Every process is in the bridge's registry while
 * it runs, so a signal handler kills them too.
 */
export class Pool {
  private spare: ConsumerProcess | null = null;
  private readonly idle: ConsumerProcess[] = [];
  /** Incarnations holding a process now. */
  private live = 0;
  /** Worlds begun, counted at each world's first incarnation (w1#1). */
  private worlds = 0;
  /** Whether the current world's incarnations end with session crashes. */
  private sessionWorld = false;
  private sweepQueued = false;
  private readonly warm: boolean;
  private readonly kills: Kills;
  /** Counters for tests and measurements: processes started, incarnations given a spare, session crashes sent, worlds by kind. */
  readonly stats = { spawned: 0, fromSpare: 0, sessionCrashes: 0, realWorlds: 0, sessionWorlds: 0, recycled: 0 };
  private readonly sessionIncarnations: number;
  private readonly sessionMemoryMb: number;

  constructor(
    private readonly command: string,
    private readonly spawnOptions: SpawnOptions,
    options: PoolOptions,
    /** The hello offered sessions. */
    private readonly sessions: boolean,
    private readonly loop: LoopState,
    /** Where new processes come from when the hello offers forks: children of one fork server, not starts of the command. */
    private readonly forks: ForkServer | null = null,
  ) {
    this.warm = options.warm ?? true;
    this.kills = options.kills ?? 'real';
    this.sessionIncarnations = options.sessionIncarnations ?? SESSION_INCARNATIONS;
    this.sessionMemoryMb = options.sessionMemoryMb ?? SESSION_MEMORY_MB;
  }

  /** A process for this incarnation, and whether its end is a session crash rather than a kill. */
  take(world: WorkerWorld): { readonly proc: ConsumerProcess; readonly session: boolean } {
    if (world.worker === 'w1' && world.incarnation === 1) {
      // A world always starts with w1's first life, and numbers lives per world.
      const nth = this.worlds++;
      this.sessionWorld = this.sessions && this.kills === 'sampled' && nth % REAL_KILL_EVERY !== 0;
      if (this.sessionWorld) this.stats.sessionWorlds++;
      else this.stats.realWorlds++;
    }
    const session = this.sessionWorld;
    if (this.spare?.abandoned) this.spare = null;
    let proc: ConsumerProcess | null = null;
    if (session) {
      // A session process that died between incarnations served nobody's world: dropped.
      while (proc === null && this.idle.length > 0) {
        const candidate = this.idle.pop() as ConsumerProcess;
        if (candidate.usable) proc = candidate;
        else candidate.kill();
      }
    }
    if (proc === null && this.spare !== null && !this.spare.abandoned) {
      // Never used: this is the incarnation's own process, even if it already died or broke
      // the protocol, which the incarnation then sees as if it had been there.
      proc = this.spare;
      this.spare = null;
      this.stats.fromSpare++;
    }
    proc ??= this.spawn();
    try {
      this.replenish();
    } catch (error) {
      // The incarnation never gets its process, so nobody would end it: it goes now.
      proc.kill();
      throw error;
    }
    // Counted only once the incarnation holds its process: a take that threw has no end to
    // come, and a count left up would keep every later sweep from running.
    this.live++;
    return { proc, session };
  }

  /** An incarnation made its first world call: the command starts, so keep a spare ready. */
  proven(): void {
    this.replenish();
  }

  /**
   * An incarnation is over. A session process is told to crash and waits for the next one;
   * any other is killed for real.
   */
  end(proc: ConsumerProcess, how: 'crash' | 'kill'): void {
    this.live--;
    // Which process serves the next incarnation never changes what the world sees (see the
    // class comment), so replacing a worn session process keeps histories as they are.
    const worn = how === 'crash' && proc.usable && (proc.served >= this.sessionIncarnations || (residentMb(proc.pid) ?? 0) > this.sessionMemoryMb);
    if (worn) this.stats.recycled++;
    if (how === 'crash' && proc.usable && !worn) {
      proc.crash();
      this.stats.sessionCrashes++;
      this.idle.push(proc);
    } else {
      proc.detach();
      proc.kill();
    }
    if (this.live === 0 && !this.sweepQueued) {
      this.sweepQueued = true;
      // The next phase or world starts its incarnations within this turn; if none did, no
      // world needs these processes now.
      setImmediate(() => {
        this.sweepQueued = false;
        if (this.live === 0) this.sweep();
      });
    }
  }

  /**
   * A world is over, every incarnation of it ended. One that ran to its end leaves its spare
   * and idle sessions to the next world (see end). One that was stopped kills them now, and
   * stops the fork server, unless an incarnation of another world still holds a process.
   */
  worldEnded(how: WorldEnd): void {
    if (how === 'done' || this.live > 0) return;
    this.sweep();
    this.forks?.stop();
  }

  /** Kills the spare and the idle sessions; the fork server is stopped if it stays idle (FORK_SERVER_IDLE_MS). */
  sweep(): void {
    this.spare?.kill();
    this.spare = null;
    for (const proc of this.idle.splice(0)) proc.kill();
    this.forks?.idle();
  }

  private spawn(): ConsumerProcess {
    this.stats.spawned++;
    return this.forks ? this.forks.fork() : new SpawnedProcess(this.command, this.spawnOptions);
  }

  /**
   * Starts a spare when one may be needed: not for a command that has not yet made a world
   * call or is failing to start (a crash loop costs exactly its incarnations), nor while an
   * idle session can serve the next incarnation of a session world.
   */
  private replenish(): void {
    if (!this.warm || this.spare !== null || this.loop.tripped || !this.loop.proven || this.loop.inARow > 0) return;
    if (this.sessionWorld && this.idle.some((p) => p.usable)) return;
    this.spare = this.spawn();
  }
}

/** Kills every process of every pool; returns how many were running. */
export function killAll(): number {
  let killed = 0;
  for (const proc of [...running]) {
    proc.abandoned = true;
    if (proc.kill()) killed++;
    proc.drop();
  }
  running.clear();
  // And what any of them started outside its group.
  killMarked(runMark());
  return killed;
}

// No process may outlive the harness, however it ends: an exit with processes still running
// kills them on the way out.
atExit(() => {
  for (const proc of running) proc.kill();
  killMarked(runMark());
});
