import type { AnyConsumer, WorkerWorld } from '../adapter/consumer.js';

/**
 * What a run is doing right now, kept where a supervisor can see it even while the run is
 * stuck. The `tidemark` command runs a check in a child process; when that process stops
 * making progress or ends without a verdict, the message must say which adapter ran, in
 * which world, and what it last asked of the world.
 *
 * The stage (which world, which scenario) changes a few thousand times a run and is told
 * to a listener. World calls happen millions of times, so they only bump counters in
 * shared memory, which a reporter thread reads even while the run spins in a synchronous
 * loop: the last call is known exactly, at the cost of a few integer writes per call.
 */
export interface Stage {
  /** The consumer under test as the user named it: `adapter 'x.ts'`, `command \`...\``, `consumer reference`. */
  readonly target: string;
  /** Whether the user's code runs in this process (an --adapter), so that stray errors are theirs. */
  readonly inProcess: boolean;
  /** The stage of the run: loading the adapter, a scenario, a generated world, writing outputs. */
  readonly stage: string;
  /** A command that replays the current world, when one is known (a scenario's). */
  readonly replay: string | null;
}

/** The counters, as a reporter reads them from shared memory. */
export interface Counters {
  /** World calls made so far, across all worlds. */
  readonly calls: number;
  /** Adapter hooks (open, inspect, close) entered so far. */
  readonly hooks: number;
  /** The last world call, as `w1#2 fetch`. */
  readonly lastCall: string | null;
  /** The adapter hook running now, if any. */
  readonly inHook: string | null;
}

const METHODS = ['fetch', 'load', 'completed', 'commit', 'emit', 'lease', 'caughtUp', 'fail'] as const;
const HOOKS = ['open()', 'inspect()', 'close()'] as const;

/** Slots of the shared counters. */
const CALLS = 0;
const HOOK_COUNT = 1;
const LAST_WORKER = 2;
const LAST_INCARNATION = 3;
const LAST_METHOD = 4;
const IN_HOOK = 5;
const SLOTS = 6;

/** Shared with the reporter thread, which only reads it. */
export const counterMemory = new SharedArrayBuffer(SLOTS * 4);
const counters = new Int32Array(counterMemory);

let stage: Stage = { target: 'no consumer yet', inProcess: false, stage: 'starting', replay: null };
let listener: ((stage: Stage) => void) | null = null;

/** Says what the run does now; `replay` is the command that repeats it, if there is one. */
export function doing(what: string, replay: string | null = null): void {
  stage = { ...stage, stage: what, replay };
  listener?.(stage);
}

/** Names the consumer under test, for every later message. */
export function testing(target: string, inProcess: boolean): void {
  stage = { ...stage, target, inProcess };
  listener?.(stage);
}

export function currentStage(): Stage {
  return stage;
}

/** Told every change of stage (the supervised run forwards them to its supervisor). */
export function onStage(fn: (stage: Stage) => void): void {
  listener = fn;
  fn(stage);
}

/** Reads the counters; also what the reporter thread runs, on its own view of the same memory. */
export function readCounters(view: ArrayLike<number> = counters): Counters {
  const method = view[LAST_METHOD] as number;
  const hook = view[IN_HOOK] as number;
  return {
    calls: view[CALLS] as number,
    hooks: view[HOOK_COUNT] as number,
    lastCall: method === 0 ? null : `w${view[LAST_WORKER]}#${view[LAST_INCARNATION]} ${METHODS[method - 1]}`,
    inHook: hook === 0 ? null : (HOOKS[hook - 1] ?? null),
  };
}

/** A one-line account of where the run is, for messages about a run that stopped. */
export function describeActivity(s: Stage, c: Counters): string {
  const hook = c.inHook === null ? '' : `, inside the adapter's ${c.inHook}`;
  return `${s.stage} of ${s.target}${hook} (last world call: ${c.lastCall ?? 'none yet'})${s.replay ? `; replay it with: ${s.replay}` : ''}`;
}

export function whereNow(): string {
  return describeActivity(stage, readCounters());
}

/**
 * The consumer, with every world call and adapter hook counted. It behaves exactly as the
 * consumer does: the world it is handed forwards everything, and only the calls are noted
 * on the way through.
 */
export function watched<C extends AnyConsumer>(consumer: C): C {
  const hook = <A extends unknown[], R>(index: number, fn: ((...args: A) => R) | undefined): ((...args: A) => R) | undefined => {
    if (fn === undefined) return undefined;
    return (...args: A): R => {
      counters[HOOK_COUNT] = (counters[HOOK_COUNT] as number) + 1;
      counters[IN_HOOK] = index + 1;
      const result = fn.apply(consumer, args);
      const done = (): void => {
        if (counters[IN_HOOK] === index + 1) counters[IN_HOOK] = 0;
      };
      // A hook that returns a promise runs until it settles; one that never does is what a stall report names.
      if (result instanceof Promise) void result.then(done, done);
      else done();
      return result;
    };
  };
  const c = consumer as AnyConsumer;
  // Inherit from the consumer rather than copy it: a class instance keeps its getters and methods.
  const out = Object.create(c) as Record<string, unknown>;
  if (c.kind === 'blackbox') {
    out.open = hook(0, c.open);
    out.inspect = hook(1, c.inspect);
    if (c.close) out.close = hook(2, c.close);
    out.run = (world: WorkerWorld, store: unknown) => c.run(watchedWorld(world), store);
  } else {
    out.run = (world: WorkerWorld) => c.run(watchedWorld(world));
  }
  return out as unknown as C;
}

function watchedWorld(world: WorkerWorld): WorkerWorld {
  const worker = Number(/^w(\d+)$/.exec(world.worker)?.[1] ?? 0);
  const incarnation = world.incarnation;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(world, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      const method = typeof key === 'string' ? (METHODS as readonly string[]).indexOf(key) : -1;
      if (typeof value !== 'function' || method < 0) return value;
      let fn = wrapped.get(key);
      if (fn === undefined) {
        fn = (...args: unknown[]): unknown => {
          counters[CALLS] = (counters[CALLS] as number) + 1;
          counters[LAST_WORKER] = worker;
          counters[LAST_INCARNATION] = incarnation;
          counters[LAST_METHOD] = method + 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
        wrapped.set(key, fn);
      }
      return fn;
    },
  });
}

/**
 * The reporter thread's source: every `intervalMs` it writes the raw counters as one JSON
 * array to file descriptor `fd` (a pipe to the supervisor, which decodes them with
 * `readCounters`). It runs whatever the main thread does, and never keeps the process alive.
 * When the supervisor is gone it signals the process, whose handlers clean up and end it;
 * if the process still runs `graceMs` later (a handler on an idle event loop runs within
 * that, however loaded the machine), its main thread is busy and will never run one (an
 * adapter in a loop), so it is killed: nobody is left to stop it otherwise.
 */
export function reporterSource(fd: number, intervalMs: number, graceMs = 10_000): string {
  return `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const view = new Int32Array(workerData);
let orphaned = null;
setInterval(() => {
  if (orphaned !== null) {
    if (Date.now() - orphaned >= ${graceMs}) process.kill(process.pid, 'SIGKILL');
    return;
  }
  try {
    writeSync(${fd}, JSON.stringify(Array.from(view)) + '\\n');
  } catch {
    orphaned = Date.now();
    process.kill(process.pid, 'SIGTERM');
  }
}, ${intervalMs});
`;
}
