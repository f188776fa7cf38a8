import { mkdtempSync, rmSync } from 'node:fs';
import { scratchDir } from './scratch.js';
import { join } from 'node:path';
import type { AnyConsumer, BlackboxConsumer, Consumer, Inspection, WorkerWorld } from '../consumer.js';
import { WORLD_ENDED, type WorldEndHook } from '../../world/end.js';
import { durableChanges } from '../../world/world.js';
import { AdapterLoadError, validateConsumer } from '../load.js';
import { AdapterError, ConsumerUnrunnableError } from '../errors.js';
import { ConsumerProcess, PROTOCOL, running, SpawnedProcess, type Hello, type Method } from './consumer-process.js';
import { ForkServer, forkSocketDirs } from './fork-server.js';
import { killAll, Pool, type Kills, type LoopState } from './pool.js';
import { runMark } from './marks.js';
import { shimWarning } from './shim.js';
import { UsageError, validateOptions } from '../../run/options.js';

export { PROTOCOL, type Hello } from './consumer-process.js';
export { REAL_KILL_EVERY, type Kills } from './pool.js';

/**
 * The process bridge: the same world, offered over newline-delimited JSON on stdin and
 * stdout (docs/protocol.md, schema/protocol.schema.json), so a consumer in any language can
 * be tested. Every incarnation is its own process (started ahead of need, see pool.ts; forked
 * from one fork server of the command when its hello offers forks, see fork-server.ts), and
 * a crash is a real SIGKILL of its process group, at the call boundary the plan chose:
 * before the world applies the call, or after it applied it and before the reply is
 * written. A consumer whose hello offers sessions may instead, when asked for sampled kills,
 * have most worlds' crashes delivered as a `crash` message to a process that serves
 * successive incarnations (docs/protocol.md, Sessions). The harness decides when each reply
 * is sent, so several worker processes interleave as deterministically as in-process
 * consumers do.
 */

/**
 * Incarnations in a row that end on their own without having made anything durable, after
 * which the consumer is declared crash-looping and the run stops. Five: a process that
 * cannot get as far as a commit five times running will not the sixth, and stopping there
 * costs five interpreter start-ups, not the thousands a world's step budget would allow.
 * Whenever it dies counts: before its first world call ("cannot open the config file") or
 * after some ("took its lease, then cannot open the database"). Durable is what the world
 * kept: an emit or a commit that took effect and kept something new (the world counts them:
 * durableChanges), or, for a blackbox consumer, an inspection that finds its store changed;
 * any of them starts the count again. A commit of no operation, the stored watermark written
 * again or an effect made twice keeps nothing new, and does not. An incarnation the
 * harness ends (a crash the plan chose, the end of a phase, a claim) never counts: only
 * deaths the consumer caused do. One it ends while the incarnation is working (it has made
 * a world call) starts the count again too: a consumer that has caught up has nothing left
 * to commit, and one whose incarnations keep working between failures is flaky, not stuck.
 */
export const CRASH_LOOP_LIMIT = 5;

export interface ProcessOptions {
  readonly cwd?: string;
  /** How long a process may work between calls before it is declared stalled. Default 10,000 ms. */
  readonly stallMs?: number;
  /** How long a process may take to say hello. Default 10,000 ms. */
  readonly helloMs?: number;
  /**
   * `real` (the default): every incarnation is its own process, killed with SIGKILL.
   * `sampled`: if the hello offers sessions, all but one world in REAL_KILL_EVERY end their
   * incarnations with a session crash instead. docs/protocol.md says what each proves.
   */
  readonly kills?: Kills;
  /** Start each next incarnation's process ahead of need. Default true; false starts each when needed. */
  readonly warm?: boolean;
  /** With sessions: a session process serves at most this many incarnations, then a fresh one takes over. Default 100. */
  readonly sessionIncarnations?: number;
  /** With sessions: a session process past this much resident memory, in megabytes, is replaced. Default 1,024. */
  readonly sessionMemoryMb?: number;
  /**
   * When the hello offers forks: true (the default) starts the command once as a fork server
   * and forks every process an incarnation needs from it; false starts the command for each.
   * The histories are the same either way (docs/protocol.md, Fork servers).
   */
  readonly forkServer?: boolean;
  /** Where a warning about the command goes (a version manager's shim): by default to stderr, as `tidemark: warning: ...`. */
  readonly warn?: (message: string) => void;
}

/** The options of processConsumer, under the name the documentation uses. */
export type ProcessConsumerOptions = ProcessOptions;

/**
 * The consumer process keeps dying on its own before it makes anything durable: every world
 * would only respawn it. The run stops once, with the last incarnation's end and stderr tail.
 */
export class CrashLoopError extends ConsumerUnrunnableError {
  override name = 'CrashLoopError';
  constructor(
    readonly command: string,
    readonly last: string,
  ) {
    super(
      `the consumer process \`${command}\` is crash-looping: ${CRASH_LOOP_LIMIT} incarnations in a row ended on their own without making anything durable (no emit or commit of theirs kept anything new: an effect, a completion record, a watermark, an anchor, an outbox entry or a dead letter; nothing new in its store), so no world can make progress. The last one: ${last}`,
    );
  }
}

/** A protocol error that leaves the world unjudgeable: the run stops (an inspection answered that was not asked). */
export class ProcessProtocolError extends ConsumerUnrunnableError {
  override name = 'ProcessProtocolError';
}

/**
 * Every blackbox store directory not yet removed, every connector's sync directory, and the
 * directory of a `check --jobs` run (src/cli/jobs.ts): what a supervisor removes if the
 * process dies without its exit hooks.
 */
export const stores = new Set<string>();

/**
 * The process groups of consumer processes still running, and the directories not yet
 * removed (blackbox stores, connectors' sync directories, fork servers' sockets): what a
 * supervisor must clean up when the harness it watches dies abruptly. Warm spares and idle
 * session processes are among them.
 */
export function liveResources(): { readonly groups: readonly number[]; readonly stores: readonly string[]; readonly mark: string } {
  return { groups: [...running].flatMap((p) => (p.pid === undefined ? [] : [p.pid])), stores: [...stores, ...forkSocketDirs()], mark: runMark() };
}

/**
 * Kills every consumer process group the bridge started and is still running (spares and
 * idle sessions included), and removes every blackbox store directory it made. Synchronous,
 * so a signal handler can call it right before the process exits. Returns how many
 * processes it killed.
 */
export function killAllConsumers(): number {
  const killed = killAll();
  for (const dir of stores) rmSync(dir, { recursive: true, force: true });
  stores.clear();
  return killed;
}

/** What a process consumer exposes beyond the consumer: how its processes were used, for tests and measurements. */
export interface ProcessStats {
  readonly spawned: number;
  readonly fromSpare: number;
  readonly sessionCrashes: number;
  readonly realWorlds: number;
  readonly sessionWorlds: number;
  /** Session processes replaced for their age or memory (see SESSION_INCARNATIONS). */
  readonly recycled: number;
  /** Of the processes, those forked by a fork server, and the fork servers started. */
  readonly forked: number;
  readonly forkServers: number;
}

const forkServers = new WeakMap<Pool, ForkServer>();

const pools = new WeakMap<object, Pool>();

/** How a consumer made by processConsumer has used its processes so far; undefined for any other consumer. */
export function processStats(consumer: AnyConsumer): ProcessStats | undefined {
  const pool = pools.get(consumer);
  const forks = pool ? forkServers.get(pool) : undefined;
  return pool ? { ...pool.stats, forked: forks?.stats.forks ?? 0, forkServers: forks?.stats.servers ?? 0 } : undefined;
}

/**
 * Warnings written to stderr so far: a check loads its command more than once (its final
 * replays under real kills load it again), and says each warning once.
 */
const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  process.stderr.write(`tidemark: warning: ${message}\n`);
}

/**
 * Starts the command once to read its hello, and returns a consumer that runs each
 * incarnation in a process of the same command: its own process, started ahead of need
 * (unless `warm: false`) and killed for real, or, with `kills: 'sampled'` and a hello that
 * offers sessions, a session process that drops its memory at each crash, in all but one
 * world in REAL_KILL_EVERY.
 */
export async function processConsumer(command: string, options: ProcessOptions = {}): Promise<AnyConsumer> {
  // By the bounds --stall-ms, --hello-ms and --kills have on the command line.
  validateOptions(options, 'processConsumer: ');
  if (options.forkServer !== undefined && typeof options.forkServer !== 'boolean') throw new UsageError(`processConsumer: forkServer must be true or false, got ${JSON.stringify(options.forkServer)}`);
  const spawnOptions = { cwd: options.cwd };
  let hello: Hello;
  try {
    hello = await probe(command, spawnOptions, options.helloMs ?? 10_000);
  } catch (error) {
    throw new AdapterLoadError(`cannot start consumer process \`${command}\`: ${(error as Error).message}`);
  }
  validateConsumer({ ...hello, run: () => undefined, open: () => undefined, inspect: () => undefined }, command);
  const base = { name: hello.name, capabilities: hello.capabilities, stallMs: options.stallMs ?? 10_000 };
  // One count for the whole consumer: a crash loop spans worlds as well as incarnations.
  const loop = new CrashLoop(command);
  // A forked incarnation's hello limit covers the server's answer and then the child's
  // connecting: the server gets half of it, so that a server that never answers stops the run
  // as its own fault before the incarnation's limit could call it the consumer's stall.
  const forks = hello.forks === true && options.forkServer !== false ? new ForkServer(command, spawnOptions, (options.helloMs ?? 10_000) / 2) : null;
  const shim = shimWarning(command, options.cwd);
  if (shim !== null) {
    const warning = forks ? `${shim} With the fork server, only its own start pays for it.` : shim;
    (options.warn ?? warnOnce)(warning);
  }
  const pool = new Pool(command, spawnOptions, options, hello.sessions === true, loop, forks);
  if (forks) forkServers.set(pool, forks);
  const incarnation = (): Incarnation => new Incarnation(pool, loop, options.helloMs ?? 10_000);
  let consumer: AnyConsumer;
  if (hello.kind === 'blackbox') {
    const blackbox: BlackboxConsumer<Store> & WorldEndHook = {
      ...base,
      kind: 'blackbox',
      open: () => {
        const dir = mkdtempSync(join(scratchDir(), 'tidemark-store-'));
        stores.add(dir);
        return { dir, live: new Set(), last: { watermark: null, effects: [] } };
      },
      run: (world, store) => incarnation().run(world, store),
      inspect: (store) => inspect(store, base.stallMs, loop),
      close: (store) => {
        // Also when the world stopped on an error: no process of it may outlive it.
        for (const live of store.live) live.end();
        rmSync(store.dir, { recursive: true, force: true });
        stores.delete(store.dir);
      },
      [WORLD_ENDED]: (how) => pool.worldEnded(how),
    };
    consumer = blackbox;
  } else {
    const whitebox: Consumer & WorldEndHook = { ...base, run: (world) => incarnation().run(world, null), [WORLD_ENDED]: (how) => pool.worldEnded(how) };
    consumer = whitebox;
  }
  pools.set(consumer, pool);
  return consumer;
}

/** Runs the command once for its hello, then kills it. The probe never gets a start. */
function probe(command: string, spawnOptions: { cwd?: string | undefined }, limit: number): Promise<Hello> {
  const proc = new SpawnedProcess(command, spawnOptions);
  return new Promise<Hello>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no hello within ${limit} ms${proc.tail()}`)), limit);
    const settle =
      <T>(f: (value: T) => void) =>
      (value: T): void => {
        clearTimeout(timer);
        f(value);
      };
    const fail = settle(reject);
    proc.attach({
      hello: settle(resolve),
      // A process that dies before its hello fails the load at once, not after the timeout.
      exit: (code, signal) => fail(new Error(`it exited with ${signal ?? `code ${code}`} before saying hello${proc.tail()}`)),
      fail,
      call: () => fail(new Error('called the world before it was started')),
      inspection: (id) => fail(new Error(`protocol error: an inspection answers unknown id ${JSON.stringify(id)}${proc.tail()}`)),
    });
  }).finally(() => {
    proc.detach();
    proc.kill();
  });
}

/** Counts incarnations in a row that ended on their own with nothing durable made since the last durable step. */
class CrashLoop implements LoopState {
  inARow = 0;
  proven = false;
  /** Once tripped, every later incarnation fails at once with the same error, without a process. */
  tripped: CrashLoopError | null = null;

  constructor(private readonly command: string) {}

  /** Some incarnation made a world call: the command starts (so spares are worth starting). */
  called(): void {
    this.proven = true;
  }

  /** Something durable took effect, or an incarnation was working when the world ended it: no loop so far. */
  progressed(): void {
    this.inARow = 0;
  }

  /** An incarnation died of its own doing; counted unless it made something durable. Returns the error once the limit is reached. */
  died(last: string, durable: boolean): CrashLoopError | null {
    if (!durable && ++this.inARow >= CRASH_LOOP_LIMIT) this.tripped ??= new CrashLoopError(this.command, last);
    return this.tripped;
  }
}

/** A blackbox process consumer's durable store: a directory its processes keep their database in. */
interface Store {
  readonly dir: string;
  /** Live incarnations, newest last: the newest started one is asked to read the store for an inspection. */
  readonly live: Set<Incarnation>;
  /** What the last inspection saw. */
  last: Inspection;
}

/**
 * Reads the store through the newest started process. The world inspects only once every
 * process holding it has made its next call (WorkerWorld.hold), so none is writing now and
 * what is seen does not depend on timing.
 */
async function inspect(store: Store, stallMs: number, loop: CrashLoop): Promise<Inspection> {
  const newest = [...store.live].filter((i) => i.started).at(-1);
  try {
    if (newest) {
      const seen = await newest.inspect(stallMs);
      // A changed store is a durable write, whoever made it: the consumer is getting somewhere.
      if (JSON.stringify(seen) !== JSON.stringify(store.last)) loop.progressed();
      store.last = seen;
    }
  } catch (error) {
    // A bad answer to an inspection is the consumer's fault, reported as such.
    throw new AdapterError(`the consumer process answered an inspection badly: ${(error as Error).message}`);
  }
  return store.last;
}

/**
 * One incarnation: a process from the pool, from its start message to its end. The end is
 * the world's (a crash the plan chose, a claim, the end of a phase): a SIGKILL of its
 * process, or a session crash. Or it is the process's own: it exits, or breaks the protocol,
 * and is killed.
 */
class Incarnation {
  private proc: ConsumerProcess | null = null;
  private session = false;
  private ended = false;
  private lastCall = 'none yet';
  private called = false;
  /** World calls this incarnation has made. */
  private calls = 0;
  /** A commit or an emit of this incarnation took effect (see CRASH_LOOP_LIMIT). */
  private durable = false;
  /** Inspections answered, so a second answer to one is told apart from one never asked. */
  private readonly answered = new Set<string>();
  /**
   * The call the process waits on, until its reply is written: protocol 1 has one in flight.
   * Left set when the incarnation ends without a reply; every incarnation is a new object.
   */
  private inFlight: string | null = null;
  private readonly inspections = new Map<string, (value: Inspection) => void>();
  private nextInspection = 0;
  private fail: (error: Error) => void = () => {};
  /** Sent its start message, so it knows its store. */
  started = false;

  constructor(
    private readonly pool: Pool,
    private readonly loop: CrashLoop,
    private readonly helloMs: number,
  ) {}

  run(world: WorkerWorld, store: Store | null): Promise<void> {
    if (this.loop.tripped) return Promise.reject(this.loop.tripped);
    // Started and stopped in the same step (a restart the step budget cut short): no
    // process, or nothing would ever kill it.
    if (world.signal.aborted) return Promise.resolve();
    const { proc, session } = this.pool.take(world);
    this.proc = proc;
    this.session = session;
    return new Promise<void>((resolve, reject) => {
      // Between a reply (or the start) and the next call the process is working outside the
      // world: the world waits for it, so interleaving and inspections never race it.
      const hold = (limitMs?: number): (() => void) => world.hold(() => this.note(), limitMs);
      // A process still starting up (no spare was ready) has the hello limit to say hello,
      // not the stall limit between calls: a slow interpreter start on a busy machine is
      // not a stall. From its hello on, the stall limit counts.
      const fresh = proc.hello === null;
      let release = fresh ? hold(this.helloMs) : hold();
      let settled = false;
      const die = (error: Error | null): void => {
        if (settled) return;
        settled = true;
        store?.live.delete(this);
        release();
        this.end('kill');
        // Its own death (the world's crashes abort the signal first); one that stops the run is no loop.
        if (!world.signal.aborted && !(error instanceof ConsumerUnrunnableError)) {
          const when = this.called ? `after ${this.lastCall}` : 'before its first world call';
          const loop = this.loop.died(error?.message ?? `exited with code 0 ${when}${proc.tail()}`, this.durable);
          if (loop) return reject(loop);
        }
        if (error) reject(error);
        else resolve();
      };
      this.fail = (error) => die(error);
      world.signal.addEventListener('abort', () => {
        // The world ended it while it worked (it had not died of itself): it breaks a row of deaths.
        if (!settled && this.called) this.loop.progressed();
        // The world crashed this incarnation: a real kill, or a session crash; never settled.
        settled = true;
        store?.live.delete(this);
        this.end(this.session ? 'crash' : 'kill');
      });
      store?.live.add(this);
      proc.attach({
        hello: () => {
          // Told once per incarnation: a second hello from the process is a protocol error.
          if (fresh) {
            release();
            release = hold();
          }
          proc.send({
            type: 'start',
            protocol: PROTOCOL,
            worker: world.worker,
            incarnation: world.incarnation,
            binding: world.binding,
            fingerprint: world.fingerprint,
            source: world.source,
            leaseTtl: world.leaseTtl,
            ...(store ? { store: store.dir } : {}),
          });
          this.started = true;
        },
        call: (id, method, args) => this.call(world, id, method, args, () => release(), () => (release = hold()), () => settled),
        inspection: (id, message) => {
          const answer = this.inspections.get(String(id));
          if (!answer) {
            // While an inspection waits, a wrong id fails it (and the run, see inspect). With
            // none waiting, there is nothing to fail but the run: the store cannot be read.
            const problem = this.answered.has(String(id)) ? `answers inspect ${JSON.stringify(id)} a second time` : `answers unknown id ${JSON.stringify(id)}`;
            const text = `protocol error: an inspection ${problem}${proc.tail()}`;
            return this.inspections.size > 0 ? this.fail(new Error(text)) : die(new ProcessProtocolError(text));
          }
          this.inspections.delete(String(id));
          this.answered.add(String(id));
          const watermarks = message.watermarks as Inspection['watermarks'] | undefined;
          answer({ watermark: message.watermark ?? null, ...(watermarks === undefined ? {} : { watermarks }), effects: (message.effects ?? []) as Inspection['effects'] });
        },
        exit: (code, signal) => {
          if (world.signal.aborted) return;
          const when = this.called ? `after ${this.lastCall}` : 'before its first world call';
          if (code === 0) die(null);
          else die(new Error(`the consumer process exited with ${signal ?? `code ${code}`} ${when}${proc.tail()}`));
        },
        fail: (error) => this.fail(error),
      });
    });
  }

  /** Ends it from outside (the world is being closed): its process is killed. */
  end(how: 'crash' | 'kill' = 'kill'): void {
    if (this.ended || !this.proc) return;
    this.ended = true;
    this.pool.end(this.proc, how);
  }

  inspect(timeoutMs: number): Promise<Inspection> {
    const proc = this.proc as ConsumerProcess;
    return new Promise((resolve, reject) => {
      const id = `i${this.nextInspection++}`;
      const before = this.fail;
      const settle = (): void => {
        clearTimeout(timer);
        this.inspections.delete(id);
        if (this.fail === failed) this.fail = before;
      };
      const failed = (error: Error): void => {
        settle();
        reject(error);
        before(error);
      };
      const timer = setTimeout(() => failed(new Error(`protocol error: no inspection answers inspect ${id} within ${timeoutMs} ms${proc.tail()}`)), timeoutMs);
      this.inspections.set(id, (value) => {
        settle();
        resolve(value);
      });
      this.fail = failed;
      proc.send({ type: 'inspect', id });
    });
  }

  /** One world call from the process: run by the world in its turn, answered with a reply. */
  private call(world: WorkerWorld, id: number | string, method: Method, args: unknown[], release: () => void, rehold: () => void, settled: () => boolean): void {
    const proc = this.proc as ConsumerProcess;
    if (this.inFlight !== null) {
      // Run, it would leave the process holding the world while it waits for a reply the
      // world will not pick for it: a stall that says nothing of the cause.
      return this.fail(new Error(`protocol error: call ${method} (call ${this.calls + 1}) while ${this.inFlight} has no reply yet; protocol 1 has one call in flight: wait for each reply before the next call${proc.tail()}`));
    }
    // Named by its place among this incarnation's calls, never by the id the process gave it:
    // a session process may go on counting from an earlier incarnation, or world, and what
    // the history records must not depend on which process served it before.
    this.lastCall = `${method} (call ${++this.calls})`;
    this.inFlight = this.lastCall;
    if (!this.called) {
      this.called = true;
      this.loop.called();
      this.pool.proven();
    }
    release();
    let call: Promise<unknown>;
    try {
      call = (world[method] as (...a: unknown[]) => Promise<unknown>).apply(world, args);
    } catch (error) {
      call = Promise.reject(error);
    }
    // What the world kept: a commit or an emit that took effect (a timeout may have)
    // and changed durable state, as the world counts it. One that keeps nothing new (a commit
    // of no operation, the stored watermark written again, an effect made twice) is no
    // progress: one in every incarnation would have kept a crash loop going to the step budget.
    const before = durableChanges(world);
    const keeps = method === 'emit' || (method === 'commit' && !(Array.isArray(args[0]) && args[0].length === 0));
    const kept = (): void => {
      const after = durableChanges(world);
      if (!(before === null || after === null ? keeps : keeps && after > before)) return;
      this.durable = true;
      this.loop.progressed();
    };
    call.then(
      (value) => {
        kept();
        if (world.signal.aborted || settled()) return;
        rehold();
        this.inFlight = null;
        proc.send({ type: 'reply', id, ok: true, value: value ?? null });
      },
      (error: unknown) => {
        if ((error as { definite?: unknown } | null)?.definite === false) kept();
        if (world.signal.aborted || settled()) return;
        rehold();
        this.inFlight = null;
        const e = error as { code?: string; definite?: boolean; message?: string; cause?: unknown; ref?: unknown };
        // A conflict's cause and a rejection's ref travel too, only when the error has them.
        const detail = { ...(e.code === 'conflict' && typeof e.cause === 'string' ? { cause: e.cause } : {}), ...(e.ref === undefined ? {} : { ref: e.ref }) };
        proc.send({ type: 'reply', id, ok: false, error: { code: e.code ?? 'bad-request', definite: e.definite ?? true, message: e.message ?? String(error), ...detail } });
      },
    );
  }

  private note(): string {
    const proc = this.proc as ConsumerProcess;
    const waiting = proc.awaitingCrashed ? '; its process has not yet answered crash with crashed' : '';
    const hello = proc.hello === null ? '; it has not said hello' : '';
    return `last call ${this.lastCall}${hello}${waiting}${proc.tail()}`;
  }
}
