import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { AnyConsumer, BlackboxConsumer, Capabilities, Consumer, Inspection, WorkerWorld } from '../consumer.js';
import { AdapterLoadError, validateConsumer } from '../adapter.js';
import { AdapterError, ConsumerUnrunnableError } from '../world/world.js';
import { protocolProblem } from './schema.js';

/**
 * The process bridge: the same world, offered over newline-delimited JSON on stdin and
 * stdout (docs/protocol.md, schema/protocol.schema.json), so a consumer in any language can
 * be tested. Every incarnation is a new process; a crash is a real SIGKILL of its process
 * group, at the call boundary the plan chose: before the world applies the call, or after
 * it applied it and before the reply is written. The harness decides when each reply is
 * sent, so several worker processes interleave as deterministically as in-process
 * consumers do.
 */
export const PROTOCOL = 1;

/**
 * Incarnations in a row that end on their own before their first world call, after which
 * the consumer is declared crash-looping and the run stops. Five: a process that cannot
 * start five times running will not start the sixth, and stopping there costs five
 * interpreter start-ups, not the thousands a world's step budget would allow. An
 * incarnation the harness kills (a crash the plan chose, the end of a phase) does not
 * count; one that makes a world call resets the count.
 */
export const CRASH_LOOP_LIMIT = 5;

/**
 * How long the harness keeps reading a process's pipes after it exited. Its last words
 * arrive within milliseconds; a pipe still open after this is held by a process it left
 * behind outside its group (a `setsid` grandchild), and is dropped rather than waited on.
 */
const EXIT_GRACE_MS = 200;

/** What a consumer process says first: who it is and what it claims. */
export interface Hello {
  readonly type: 'hello';
  readonly protocol: number;
  readonly name: string;
  readonly capabilities: Capabilities;
  readonly kind?: 'whitebox' | 'blackbox';
}

type Method = 'fetch' | 'load' | 'completed' | 'commit' | 'emit' | 'lease' | 'caughtUp' | 'fail';

/** How much of a process's stderr a failure quotes. */
const TAIL = 2000;

export interface ProcessOptions {
  readonly cwd?: string;
  /** How long a process may work between calls before it is declared stalled. Default 10,000 ms. */
  readonly stallMs?: number;
  /** How long a process may take to say hello. Default 10,000 ms. */
  readonly helloMs?: number;
}

/** The options of processConsumer, under the name the documentation uses. */
export type ProcessConsumerOptions = ProcessOptions;

/**
 * The consumer process keeps dying before it makes a single world call: every world would
 * only respawn it. The run stops once, with the last incarnation's exit and stderr tail.
 */
export class CrashLoopError extends ConsumerUnrunnableError {
  override name = 'CrashLoopError';
  constructor(
    readonly command: string,
    readonly last: string,
  ) {
    super(`the consumer process \`${command}\` is crash-looping: ${CRASH_LOOP_LIMIT} incarnations in a row ended before their first world call, so no world can be judged. The last one: ${last}`);
  }
}

/** Every consumer process this harness has running, across every consumer and world. */
const running = new Set<Incarnation>();
/** Every blackbox store directory not yet removed. */
const stores = new Set<string>();

/**
 * The process groups of consumer processes still running and the blackbox stores not yet
 * removed: what a supervisor must clean up when the harness it watches dies abruptly.
 */
export function liveResources(): { readonly groups: readonly number[]; readonly stores: readonly string[] } {
  return { groups: [...running].flatMap((i) => (i.pid === undefined ? [] : [i.pid])), stores: [...stores] };
}

/**
 * Kills every consumer process group the bridge started and is still running, and removes
 * every blackbox store directory it made. Synchronous, so a signal handler can call it
 * right before the process exits. Returns how many processes it killed.
 */
export function killAllConsumers(): number {
  let killed = 0;
  for (const incarnation of [...running]) {
    if (incarnation.kill()) killed++;
    incarnation.drop();
  }
  running.clear();
  for (const dir of stores) rmSync(dir, { recursive: true, force: true });
  stores.clear();
  return killed;
}

/**
 * Starts the command once to read its hello, and returns a consumer that runs each
 * incarnation as a fresh process of the same command.
 */
export async function processConsumer(command: string, options: ProcessOptions = {}): Promise<AnyConsumer> {
  for (const key of ['stallMs', 'helloMs'] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw new RangeError(`processConsumer: ${key} must be a positive number of milliseconds, got ${String(value)}`);
  }
  const probe = new Incarnation(command, options, new CrashLoop(command));
  let hello: Hello;
  try {
    hello = await probe.hello();
  } catch (error) {
    throw new AdapterLoadError(`cannot start consumer process \`${command}\`: ${(error as Error).message}`);
  } finally {
    probe.kill();
  }
  validateConsumer({ ...hello, run: () => undefined, open: () => undefined, inspect: () => undefined }, command);
  const base = { name: hello.name, capabilities: hello.capabilities, stallMs: options.stallMs ?? 10_000 };
  // One count for the whole consumer: a crash loop spans worlds as well as incarnations.
  const loop = new CrashLoop(command);
  if (hello.kind === 'blackbox') {
    const blackbox: BlackboxConsumer<Store> = {
      ...base,
      kind: 'blackbox',
      open: () => {
        const dir = mkdtempSync(join(tmpdir(), 'tidemark-store-'));
        stores.add(dir);
        return { dir, live: new Set(), last: { watermark: null, effects: [] } };
      },
      run: (world, store) => new Incarnation(command, options, loop).run(world, store),
      inspect: (store) => inspect(store, base.stallMs),
      close: (store) => {
        // Also when the world stopped on an error: no process of it may outlive it.
        for (const incarnation of store.live) incarnation.kill();
        rmSync(store.dir, { recursive: true, force: true });
        stores.delete(store.dir);
      },
    };
    return blackbox;
  }
  const whitebox: Consumer = { ...base, run: (world) => new Incarnation(command, options, loop).run(world, null) };
  return whitebox;
}

/** Counts incarnations in a row that ended on their own before their first world call. */
class CrashLoop {
  private inARow = 0;
  /** Once tripped, every later incarnation fails at once with the same error, without a process. */
  tripped: CrashLoopError | null = null;

  constructor(private readonly command: string) {}

  called(): void {
    this.inARow = 0;
  }

  /** Counts one; returns the error once the limit is reached. */
  died(last: string): CrashLoopError | null {
    if (++this.inARow >= CRASH_LOOP_LIMIT) this.tripped ??= new CrashLoopError(this.command, last);
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
async function inspect(store: Store, stallMs: number): Promise<Inspection> {
  const newest = [...store.live].filter((i) => i.started).at(-1);
  try {
    if (newest) store.last = await newest.inspect(stallMs);
  } catch (error) {
    // A bad answer to an inspection is the consumer's fault, reported as such.
    throw new AdapterError(`the consumer process answered an inspection badly: ${(error as Error).message}`);
  }
  return store.last;
}

/** One consumer process, from spawn to exit or SIGKILL. */
class Incarnation {
  private child: ChildProcess | null = null;

  /** The running process's pid, which is also its process group (it is started detached). */
  get pid(): number | undefined {
    return this.child?.pid;
  }
  private lines: Interface | null = null;
  private stderr = '';
  private lastCall = 'none yet';
  private called = false;
  /** The process group was signalled, or found empty: it is never signalled again. */
  private groupDone = false;
  private readonly inspections = new Map<string, (value: Inspection) => void>();
  private nextInspection = 0;
  private onHello: ((hello: Hello) => void) | null = null;
  private fail: (error: Error) => void = () => {};
  /** Sent its start message, so it knows its store. */
  started = false;

  constructor(
    private readonly command: string,
    private readonly options: ProcessOptions,
    private readonly loop: CrashLoop,
  ) {}

  /** Spawns the process and resolves with its hello. */
  hello(): Promise<Hello> {
    return new Promise<Hello>((resolve, reject) => {
      const limit = this.options.helloMs ?? 10_000;
      const timer = setTimeout(() => reject(new Error(`no hello within ${limit} ms${this.tail()}`)), limit);
      const settle = <T>(f: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        f(value);
      };
      this.fail = settle(reject);
      this.onHello = settle(resolve);
      // A process that dies before its hello fails the load at once, not after the timeout.
      this.onExit = (code, signal) => this.fail(new Error(`it exited with ${signal ?? `code ${code}`} before saying hello${this.tail()}`));
      this.spawn();
    });
  }

  /** One incarnation: start, serve its calls until it claims, exits, or is killed. */
  run(world: WorkerWorld, store: Store | null): Promise<void> {
    if (this.loop.tripped) return Promise.reject(this.loop.tripped);
    // Started and stopped in the same step (a restart the step budget cut short): no
    // process, or nothing would ever kill it.
    if (world.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      // Between a reply (or the spawn) and the next call the process is working outside the
      // world: the world waits for it, so interleaving and inspections never race it.
      const hold = (): (() => void) => world.hold(() => this.note());
      let release = hold();
      let settled = false;
      const die = (error: Error | null): void => {
        if (settled) return;
        settled = true;
        store?.live.delete(this);
        release();
        this.kill();
        if (!this.called && !world.signal.aborted) {
          const loop = this.loop.died(error?.message ?? `exited with code 0 before its first world call${this.tail()}`);
          if (loop) return reject(loop);
        }
        if (error) reject(error);
        else resolve();
      };
      this.fail = (error) => die(error);
      world.signal.addEventListener('abort', () => {
        // The world crashed this incarnation: kill it for real, and never settle.
        settled = true;
        store?.live.delete(this);
        this.kill();
      });
      this.onHello = () => {
        this.send({
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
      };
      this.onCall = (id, method, args) => {
        this.lastCall = `${method} (id ${id})`;
        if (!this.called) {
          this.called = true;
          this.loop.called();
        }
        release();
        let call: Promise<unknown>;
        try {
          call = (world[method] as (...a: unknown[]) => Promise<unknown>).apply(world, args);
        } catch (error) {
          call = Promise.reject(error);
        }
        call.then(
          (value) => {
            if (world.signal.aborted || settled) return;
            release = hold();
            this.send({ type: 'reply', id, ok: true, value: value ?? null });
          },
          (error: unknown) => {
            if (world.signal.aborted || settled) return;
            release = hold();
            const e = error as { code?: string; definite?: boolean; message?: string; cause?: unknown; ref?: unknown };
            // A conflict's cause and a rejection's ref travel too, only when the error has them.
            const detail = { ...(e.code === 'conflict' && typeof e.cause === 'string' ? { cause: e.cause } : {}), ...(e.ref === undefined ? {} : { ref: e.ref }) };
            this.send({ type: 'reply', id, ok: false, error: { code: e.code ?? 'bad-request', definite: e.definite ?? true, message: e.message ?? String(error), ...detail } });
          },
        );
      };
      this.onExit = (code, signal) => {
        if (world.signal.aborted) return;
        const when = this.called ? `after ${this.lastCall}` : 'before its first world call';
        if (code === 0) die(null);
        else die(new Error(`the consumer process exited with ${signal ?? `code ${code}`} ${when}${this.tail()}`));
      };
      store?.live.add(this);
      this.spawn();
    });
  }

  inspect(timeoutMs: number): Promise<Inspection> {
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
      const timer = setTimeout(() => failed(new Error(`protocol error: no inspection answers inspect ${id} within ${timeoutMs} ms${this.tail()}`)), timeoutMs);
      this.inspections.set(id, (value) => {
        settle();
        resolve(value);
      });
      this.fail = failed;
      this.send({ type: 'inspect', id });
    });
  }

  /**
   * SIGKILL to the process's whole group: the shell and everything it started die
   * together. Returns whether a running process was signalled.
   */
  kill(): boolean {
    const child = this.child;
    if (!child) return false;
    const alive = child.exitCode === null && child.signalCode === null;
    this.killGroup();
    if (alive) {
      // A group that could not be signalled: at least the process itself.
      child.kill('SIGKILL');
    }
    return alive;
  }

  /** Stops reading its pipes and forgets it: what is left of it can no longer keep the harness alive. */
  drop(): void {
    this.lines?.close();
    this.child?.stdin?.destroy();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    running.delete(this);
  }

  /**
   * Signals the group once. After the process has exited, the group's id stays reserved
   * only while a member lives, so the group is signalled right when the exit is seen, and
   * never later: a later signal could reach an unrelated group that reused the id.
   */
  private killGroup(): void {
    const pid = this.child?.pid;
    if (this.groupDone || pid === undefined) return;
    this.groupDone = true;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // The group is empty: nothing left to kill.
    }
  }

  private onCall: (id: number | string, method: Method, args: unknown[]) => void = () => {
    this.fail(new Error('called the world before it was started'));
  };
  private onExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};

  private spawn(): void {
    const child = spawn(this.command, { shell: true, detached: true, cwd: this.options.cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TIDEMARK_PROTOCOL: String(PROTOCOL) } });
    this.child = child;
    running.add(this);
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-TAIL);
    });
    child.on('error', (error) => {
      this.drop();
      this.fail(new Error(`cannot run \`${this.command}\`: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      // What the process left running in its group dies with it, as after a crash.
      this.killGroup();
      // Its last lines and stderr are read until its pipes close, which is at once unless
      // a process outside its group (a `setsid` grandchild) holds them: then they are
      // dropped after a short grace, so that process cannot keep the harness waiting.
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(grace);
        this.drop();
        this.onExit(code, signal);
      };
      const grace = setTimeout(finish, EXIT_GRACE_MS);
      child.once('close', finish);
    });
    child.stdin?.on('error', () => {});
    const lines = createInterface({ input: child.stdout! });
    this.lines = lines;
    lines.on('line', (line) => this.receive(line));
  }

  private receive(line: string): void {
    if (line.trim() === '') return;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return this.fail(new Error(`protocol error: not JSON on stdout: ${JSON.stringify(line.slice(0, 200))}${this.tail()}`));
    }
    // The version first: a consumer of another version may shape every message differently.
    if (typeof message === 'object' && message !== null && message.type === 'hello' && typeof message.protocol === 'number' && message.protocol !== PROTOCOL) {
      return this.fail(new Error(`it speaks protocol ${message.protocol}; this tidemark speaks protocol ${PROTOCOL}${this.tail()}`));
    }
    const problem = protocolProblem('fromConsumer', message);
    if (problem !== null) return this.fail(new Error(`protocol error: ${problem} (schema/protocol.schema.json): ${line.slice(0, 200)}${this.tail()}`));
    switch (message.type) {
      case 'hello':
        return this.onHello?.(message as unknown as Hello);
      case 'call':
        return this.onCall(message.id as number | string, message.method as Method, message.args as unknown[]);
      default: {
        const resolve = this.inspections.get(String(message.id));
        if (!resolve) return this.fail(new Error(`protocol error: an inspection answers unknown id ${JSON.stringify(message.id)}${this.tail()}`));
        this.inspections.delete(String(message.id));
        const watermarks = message.watermarks as Inspection['watermarks'] | undefined;
        return resolve({ watermark: message.watermark ?? null, ...(watermarks === undefined ? {} : { watermarks }), effects: (message.effects ?? []) as Inspection['effects'] });
      }
    }
  }

  private send(message: unknown): void {
    const stdin = this.child?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${JSON.stringify(message)}\n`);
  }

  private note(): string {
    return `last call ${this.lastCall}${this.tail()}`;
  }

  private tail(): string {
    const t = this.stderr.trim();
    return t ? `; stderr tail: ${t.slice(-500)}` : '';
  }
}
