import { fingerprint, type Binding } from '../../model/binding.js';
import type { EventRef } from '../../model/event.js';
import type { Actor, Call, CallResult, CallStep, History, LifeStep, Outcome, Phase, Step, StoreOp } from '../../model/history.js';
import { isPageQuirk, type Plan } from '../../scenarios/plan.js';
import type { Consumer, WorkerWorld } from '../consumer.js';
import { WorldError } from './errors.js';
import { FaultPlan } from './faults.js';
import { Lease } from './lease.js';
import { Source } from './source.js';
import { Store } from './store.js';

/** How a phase ended. */
export type PhaseEnd = 'claimed' | 'budget' | 'hung';

/** One incarnation of a worker: alive until it crashes, claims, throws or returns. */
interface Life {
  readonly actor: Actor;
  alive: boolean;
  /** Set when run() settles, so the scheduler can record it at a deterministic point. */
  settled: { readonly threw: string | null } | null;
}

interface Pending {
  readonly life: Life;
  readonly call: Call;
  readonly execute: (quirk: ReturnType<FaultPlan['next']>) => { value: unknown; result?: CallResult };
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The simulated world: source, store and lease behind one scheduler. Every consumer call
 * becomes a pending call; the scheduler runs one at a time, at a point where every worker
 * has gone as far as it can without the world (one macrotask turn), so which calls are
 * pending is deterministic and the plan's schedule alone picks the next one.
 */
export class World {
  readonly source: Source;
  readonly store = new Store();
  private readonly lease: Lease;
  private readonly steps: Step[] = [];
  private readonly pending: Pending[] = [];
  private binding: Binding;
  private readonly faults: FaultPlan;
  private phase: Phase = 'adversity';
  /** Calls executed in the adversity phase: where mutations and the rebind are placed. */
  private calls = 0;
  private choice = 0;
  private lives = new Map<string, Life>();
  private readonly incarnations = new Map<string, number>();
  private readonly poison: ReadonlySet<string>;

  constructor(
    private readonly plan: Plan,
    private readonly consumer: Consumer,
  ) {
    this.source = new Source(plan.events, plan.source, plan.seed);
    this.faults = new FaultPlan(plan.faults);
    this.lease = new Lease(plan.leaseTtl);
    this.binding = plan.binding;
    this.poison = new Set(plan.poison);
  }

  history(): History {
    return {
      header: {
        initial: this.plan.events,
        binding: this.plan.binding,
        contract: this.plan.source.contract,
        delivery: this.consumer.capabilities.delivery,
        poison: this.plan.poison,
      },
      steps: this.steps,
    };
  }

  /** Runs both phases: adversity with the plan's faults, mutations and workers, then drain: faults off, one worker. */
  async run(): Promise<History> {
    const workers = Array.from({ length: this.plan.workers }, (_, i) => `w${i + 1}`);
    const adversity = await this.runPhase('adversity', workers, this.plan.budget.adversity);
    if (adversity !== 'hung') await this.runPhase('drain', workers.slice(0, 1), this.plan.budget.drain);
    return this.history();
  }

  private async runPhase(phase: Phase, workers: readonly string[], budget: number): Promise<PhaseEnd> {
    this.phase = phase;
    this.lives = new Map();
    let spent = 0;
    for (const w of workers) {
      this.start(w);
      spent++;
    }
    let idle = 0;
    for (;;) {
      await turn();
      for (const life of [...this.lives.values()]) {
        if (!life.alive || life.settled === null) continue;
        life.alive = false;
        this.life(life, life.settled.threw === null ? { kind: 'returned' } : { kind: 'threw', message: life.settled.threw });
        this.start(life.actor.worker);
        spent++;
        idle = 0;
      }
      if (spent >= budget) {
        this.stopAll({ kind: 'budget' });
        return 'budget';
      }
      if (this.pending.length === 0) {
        // One turn drains every promise chain; a second one lets a timer of zero fire. A
        // consumer still silent after that, and still running, waits on something outside
        // the world.
        if (++idle < 3) continue;
        this.stopAll({ kind: 'hung' });
        return 'hung';
      }
      idle = 0;
      const next = this.pick();
      if (!next.life.alive) continue;
      if (phase === 'adversity' && this.beforeCall(workers)) continue;
      spent++;
      if (this.execute(next) === 'claimed') {
        this.stopAll(null);
        return 'claimed';
      }
      // A worker that died is born again at once: crashes do not cost the phase its worker.
      if (!next.life.alive && this.lives.get(next.life.actor.worker) === next.life) {
        this.start(next.life.actor.worker);
        spent++;
      }
    }
  }

  /**
   * Applies what the plan put before this adversity call: source mutations, and the rebind.
   * Returns true when the rebind restarted every worker, so the picked call died with them.
   */
  private beforeCall(workers: readonly string[]): boolean {
    const at = this.calls++;
    for (const spec of this.plan.mutations) {
      if (spec.atCall !== at) continue;
      const { event, mutation } = this.source.mutate(spec, this.binding);
      this.steps.push({ kind: 'mutation', seq: this.steps.length, phase: this.phase, event, mutation });
    }
    const rebind = this.plan.rebind;
    if (rebind === null || rebind.atCall !== at) return false;
    this.stopAll(null);
    this.binding = rebind.binding;
    this.steps.push({ kind: 'rebind', seq: this.steps.length, phase: this.phase, binding: rebind.binding });
    for (const w of workers) this.start(w);
    return true;
  }

  /**
   * The next call to run. A choice c picks the worker c mod (workers with pending calls),
   * then that worker's call (c div workers) mod (its pending calls); 0 is the oldest call
   * of the first worker, so shrinking a schedule makes it calmer.
   */
  private pick(): Pending {
    let index = 0;
    if (this.pending.length > 1) {
      const c = this.plan.schedule[this.choice++] ?? 0;
      const workers = [...new Set(this.pending.map((p) => p.life.actor.worker))].sort();
      const worker = workers[c % workers.length];
      const mine = this.pending.flatMap((p, i) => (p.life.actor.worker === worker ? [i] : []));
      index = mine[Math.floor(c / workers.length) % mine.length] as number;
    }
    return this.pending.splice(index, 1)[0] as Pending;
  }

  private start(worker: string): void {
    const incarnation = (this.incarnations.get(worker) ?? 0) + 1;
    this.incarnations.set(worker, incarnation);
    const life: Life = { actor: { worker, incarnation }, alive: true, settled: null };
    this.lives.set(worker, life);
    this.life(life, { kind: 'start' });
    const api = this.api(life, this.binding);
    // run() is called on a later microtask so a consumer that throws synchronously is
    // recorded like one that rejects.
    void Promise.resolve()
      .then(() => this.consumer.run(api))
      .then(
        () => (life.settled = { threw: null }),
        (error: unknown) => (life.settled = { threw: describe(error) }),
      );
  }

  /** Ends every live incarnation, recording why when there is a reason to record. */
  private stopAll(event: LifeStep['event'] | null): void {
    for (const life of this.lives.values()) {
      if (!life.alive) continue;
      life.alive = false;
      if (event) this.life(life, event);
    }
    this.pending.length = 0;
  }

  private life(life: Life, event: LifeStep['event']): void {
    this.steps.push({ kind: 'life', seq: this.steps.length, phase: this.phase, actor: life.actor, event });
  }

  /** Runs one call: consults the fault plan, applies it, records it, answers or kills the caller. */
  private execute(p: Pending): 'claimed' | 'done' {
    const planned = p.call.kind === 'claim' ? undefined : this.faults.next(p.call.kind);
    // Page quirks are how the source behaves, so they outlive the adversity phase; crashes,
    // errors and timeouts are faults, and the drain phase has none.
    const fault = planned && (this.phase === 'adversity' || isPageQuirk(planned.kind)) ? planned : undefined;
    const kind = fault?.kind;
    const record = (outcome: Outcome, applied: boolean, result?: CallResult): void => {
      // A quirk fired only if the source found something to act on; a call fault always fires.
      const fired = kind !== undefined && (!isPageQuirk(kind) || this.source.quirked) ? kind : undefined;
      const step: CallStep = { kind: 'call', seq: this.steps.length, phase: this.phase, actor: p.life.actor, call: p.call, outcome, applied };
      this.steps.push({ ...step, ...(fired === undefined ? {} : { fault: fired }), ...(result === undefined ? {} : { result }) });
    };
    if (kind === 'crash-before') {
      record({ kind: 'crash-before' }, false);
      p.life.alive = false;
      return 'done';
    }
    if (kind === 'error') {
      record({ kind: 'error', code: 'unavailable' }, false);
      p.reject(new WorldError('unavailable', true));
      return 'done';
    }
    let answer: { value: unknown; result?: CallResult };
    try {
      answer = p.execute(fault);
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      record({ kind: 'error', code: error.code }, false);
      if (kind === 'crash-after') p.life.alive = false;
      else p.reject(error);
      return 'done';
    }
    if (kind === 'crash-after') {
      record({ kind: 'crash-after' }, true, answer.result);
      p.life.alive = false;
      return 'done';
    }
    if (kind === 'timeout') {
      // The work was done; the caller only hears that it may not have been.
      record({ kind: 'indefinite', code: 'timeout' }, true, answer.result);
      p.reject(new WorldError('timeout', false));
      return 'done';
    }
    record({ kind: 'ok' }, true, answer.result);
    if (p.call.kind === 'claim') return 'claimed';
    p.resolve(answer.value);
    return 'done';
  }

  private submit<T>(life: Life, call: Call, execute: (fault: ReturnType<FaultPlan['next']>) => { value: T; result?: CallResult }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // A dead incarnation's calls are dropped: its promises never settle, like a killed process.
      if (!life.alive) return;
      this.pending.push({ life, call, execute, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  private refuse(event: EventRef): never {
    throw new WorldError('rejected', true, `the effect for ${event.id} is refused: it is a poison event`);
  }

  /** The calls one incarnation may make; each one only queues, the scheduler runs it. */
  private api(life: Life, binding: Binding): WorkerWorld {
    const { pageSize, resumes, contract } = this.plan.source;
    const who = `${life.actor.worker}#${life.actor.incarnation}`;
    return {
      binding,
      fingerprint: fingerprint(binding),
      source: { pageSize, resumes, contract },
      worker: life.actor.worker,
      incarnation: life.actor.incarnation,
      fetch: (request) =>
        this.submit(life, { kind: 'fetch', request }, (fault) => {
          const page = this.source.fetch(binding, request, fault && isPageQuirk(fault.kind) ? fault.kind : undefined);
          return { value: page, result: { kind: 'page', page } };
        }),
      load: () =>
        this.submit(life, { kind: 'load' }, () => {
          const state = this.store.state();
          return { value: state, result: { kind: 'state', state } };
        }),
      completed: (events: readonly EventRef[]) =>
        this.submit(life, { kind: 'completed', events: [...events] }, () => {
          const flags = this.store.completed(events);
          return { value: flags, result: { kind: 'flags', flags } };
        }),
      commit: (ops: readonly StoreOp[], options) => {
        const fence = options?.fence ?? null;
        return this.submit(life, { kind: 'commit', ops: [...ops], fence }, () => {
          for (const op of ops) if ((op.op === 'effect' || op.op === 'outbox') && this.poison.has(op.event.id)) this.refuse(op.event);
          this.store.commit(ops, fence, this.lease.generation);
          return { value: undefined };
        });
      },
      emit: (event, payload) =>
        this.submit(life, { kind: 'emit', event: { id: event.id, version: event.version }, payload }, () => {
          if (this.poison.has(event.id)) this.refuse(event);
          return { value: undefined };
        }),
      lease: () =>
        this.submit(life, { kind: 'lease' }, () => {
          const generation = this.lease.acquire(who, this.steps.length);
          return { value: generation, result: { kind: 'generation', generation } };
        }),
      caughtUp: () => this.submit(life, { kind: 'claim', claim: { kind: 'caught-up' } }, () => ({ value: undefined })),
      fail: (reason) => this.submit(life, { kind: 'claim', claim: { kind: 'failed', reason: String(reason) } }, () => ({ value: undefined })),
    };
  }
}

/** One macrotask turn: every microtask (every promise continuation) runs before it ends. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
