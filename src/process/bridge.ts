import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AnyConsumer, BlackboxConsumer, Capabilities, Consumer, Inspection, WorkerWorld } from '../consumer.js';
import { AdapterLoadError, validateConsumer } from '../adapter.js';
import { AdapterError } from '../world/world.js';

/**
 * The process bridge: the same world, offered over newline-delimited JSON on stdin and
 * stdout (docs/protocol.md), so a consumer in any language can be tested. Every
 * incarnation is a new process; a crash is a real SIGKILL of its process group, at the call
 * boundary the plan chose: before the world applies the call, or after it applied it and
 * before the reply is written. The harness decides when each reply is sent, so several
 * worker processes interleave as deterministically as in-process consumers do.
 */
export const PROTOCOL = 1;

/** What a consumer process says first: who it is and what it claims. */
export interface Hello {
  readonly type: 'hello';
  readonly protocol: number;
  readonly name: string;
  readonly capabilities: Capabilities;
  readonly kind?: 'whitebox' | 'blackbox';
}

const METHODS = ['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'caughtUp', 'fail'] as const;
type Method = (typeof METHODS)[number];

/** How much of a process's stderr a failure quotes. */
const TAIL = 2000;

const liveGroups = new Set<number>();
const liveStores = new Set<string>();

/**
 * The process groups of consumer processes still running and the blackbox stores not yet
 * removed: what a harness that is interrupted, or ends abruptly, must still clean up.
 */
export function liveResources(): { readonly groups: readonly number[]; readonly stores: readonly string[] } {
  return { groups: [...liveGroups], stores: [...liveStores] };
}

export interface ProcessOptions {
  readonly cwd?: string;
  /** How long a process may work between calls before it is declared stalled. */
  readonly stallMs?: number;
  /** How long a process may take to say hello. */
  readonly helloMs?: number;
}

/**
 * Starts the command once to read its hello, and returns a consumer that runs each
 * incarnation as a fresh process of the same command.
 */
export async function processConsumer(command: string, options: ProcessOptions = {}): Promise<AnyConsumer> {
  const probe = new Incarnation(command, options);
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
  if (hello.kind === 'blackbox') {
    const blackbox: BlackboxConsumer<Store> = {
      ...base,
      kind: 'blackbox',
      open: () => {
        const dir = mkdtempSync(join(tmpdir(), 'tidemark-store-'));
        liveStores.add(dir);
        return { dir, live: new Set(), last: { watermark: null, effects: [] } };
      },
      run: (world, store) => new Incarnation(command, options).run(world, store),
      inspect: (store) => inspect(store, base.stallMs),
      close: (store) => {
        // Also when the world stopped on an error: no process of it may outlive it.
        for (const incarnation of store.live) incarnation.kill();
        rmSync(store.dir, { recursive: true, force: true });
        liveStores.delete(store.dir);
      },
    };
    return blackbox;
  }
  const whitebox: Consumer = { ...base, run: (world) => new Incarnation(command, options).run(world, null) };
  return whitebox;
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
  private stderr = '';
  private lastCall = 'none yet';
  private readonly inspections = new Map<string, (value: Inspection) => void>();
  private nextInspection = 0;
  private onHello: ((hello: Hello) => void) | null = null;
  private fail: (error: Error) => void = () => {};
  /** Sent its start message, so it knows its store. */
  started = false;

  constructor(
    private readonly command: string,
    private readonly options: ProcessOptions,
  ) {}

  /** Spawns the process and resolves with its hello. */
  hello(): Promise<Hello> {
    return new Promise<Hello>((resolve, reject) => {
      this.fail = reject;
      this.onHello = resolve;
      // A process that dies before its hello fails the load at once, not after the timeout.
      this.onExit = (code, signal) => reject(new Error(`it exited with ${signal ?? `code ${code}`} before saying hello${this.tail()}`));
      this.spawn();
      const timer = setTimeout(() => reject(new Error(`no hello within ${this.options.helloMs ?? 10_000} ms${this.tail()}`)), this.options.helloMs ?? 10_000);
      timer.unref();
    });
  }

  /** One incarnation: start, serve its calls until it claims, exits, or is killed. */
  run(world: WorkerWorld, store: Store | null): Promise<void> {
    // Started and stopped in the same step (a restart the step budget cut short): no
    // process, or nothing would ever kill it.
    if (world.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      // Between a reply (or the spawn) and the next call the process is working outside the
      // world: the world waits for it, so interleaving and inspections never race it.
      const hold = (): (() => void) => world.hold(() => this.note());
      let release = hold();
      const die = (error: Error | null): void => {
        store?.live.delete(this);
        release();
        this.kill();
        if (error) reject(error);
        else resolve();
      };
      this.fail = (error) => die(error);
      world.signal.addEventListener('abort', () => {
        // The world crashed this incarnation: kill it for real, and never settle.
        store?.live.delete(this);
        this.kill();
      });
      this.onHello = (hello) => {
        if (hello.protocol !== PROTOCOL) return die(new Error(`speaks protocol ${hello.protocol}; this harness speaks ${PROTOCOL}`));
        this.send({
          type: 'start',
          protocol: PROTOCOL,
          worker: world.worker,
          incarnation: world.incarnation,
          binding: world.binding,
          fingerprint: world.fingerprint,
          source: world.source,
          ...(store ? { store: store.dir } : {}),
        });
        this.started = true;
      };
      this.onCall = (id, method, args) => {
        this.lastCall = `${method} (id ${id})`;
        release();
        const call = (world[method] as (...a: unknown[]) => Promise<unknown>).apply(world, args);
        call.then(
          (value) => {
            if (world.signal.aborted) return;
            release = hold();
            this.send({ type: 'reply', id, ok: true, value: value ?? null });
          },
          (error: unknown) => {
            if (world.signal.aborted) return;
            release = hold();
            const e = error as { code?: string; definite?: boolean; message?: string };
            this.send({ type: 'reply', id, ok: false, error: { code: e.code ?? 'bad-request', definite: e.definite ?? true, message: e.message ?? String(error) } });
          },
        );
      };
      this.onExit = (code, signal) => {
        if (world.signal.aborted) return;
        if (code === 0) die(null);
        else die(new Error(`the consumer process exited with ${signal ?? `code ${code}`} after ${this.lastCall}${this.tail()}`));
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

  kill(): void {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    try {
      // The command runs in its own process group: the shell and everything it started die together.
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }

  private onCall: (id: number | string, method: Method, args: unknown[]) => void = () => {
    this.fail(new Error('called the world before it was started'));
  };
  private onExit: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};

  private spawn(): void {
    const child = spawn(this.command, { shell: true, detached: true, cwd: this.options.cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TIDEMARK_PROTOCOL: String(PROTOCOL) } });
    this.child = child;
    const group = child.pid;
    if (group !== undefined) liveGroups.add(group);
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-TAIL);
    });
    child.on('error', (error) => this.fail(new Error(`cannot run \`${this.command}\`: ${error.message}`)));
    // 'close' rather than 'exit': by then stderr has been read to the end, so the tail a
    // failure quotes includes the process's last words.
    child.on('close', (code, signal) => {
      if (group !== undefined) liveGroups.delete(group);
      this.onExit(code, signal);
    });
    child.stdin?.on('error', () => {});
    const lines = createInterface({ input: child.stdout! });
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
    switch (message.type) {
      case 'hello':
        return this.onHello?.(message as unknown as Hello);
      case 'call': {
        const { id, method, args } = message;
        if ((typeof id !== 'number' && typeof id !== 'string') || !METHODS.includes(method as Method) || !Array.isArray(args)) {
          return this.fail(new Error(`protocol error: a call needs { id, method: one of ${METHODS.join(', ')}, args: [...] }, got ${line.slice(0, 200)}${this.tail()}`));
        }
        return this.onCall(id, method as Method, args);
      }
      case 'inspection': {
        const resolve = this.inspections.get(String(message.id));
        if (!resolve) return this.fail(new Error(`protocol error: an inspection answers unknown id ${JSON.stringify(message.id)}${this.tail()}`));
        this.inspections.delete(String(message.id));
        return resolve({ watermark: message.watermark ?? null, effects: (message.effects ?? []) as Inspection['effects'] });
      }
      default:
        return this.fail(new Error(`protocol error: unknown message type ${JSON.stringify(message.type)}: ${line.slice(0, 200)}${this.tail()}`));
    }
  }

  private send(message: unknown): void {
    this.child?.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  private note(): string {
    return `last call ${this.lastCall}${this.tail()}`;
  }

  private tail(): string {
    const t = this.stderr.trim();
    return t ? `; stderr tail: ${t.slice(-500)}` : '';
  }
}
