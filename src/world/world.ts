import { fingerprint } from '../../model/binding.js';
import type { EventRef } from '../../model/event.js';
import type { Actor, Call, CallResult, CallStep, History, LifeStep, Outcome, Phase, Step, StoreOp } from '../../model/history.js';
import type { Plan } from '../../scenarios/plan.js';
import type { Consumer, WorkerWorld } from '../consumer.js';
import { WorldError } from './errors.js';
import { FaultPlan } from './faults.js';
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
  readonly execute: () => { value: unknown; result?: CallResult };
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
  private readonly steps: Step[] = [];
  private readonly pending: Pending[] = [];
  private readonly bindingFingerprint: string;
  private faults: FaultPlan;
  private phase: Phase = 'adversity';
  private choice = 0;
  private generation = 0;
  private lives = new Map<string, Life>();
  private incarnations = new Map<string, number>();

  constructor(
    private readonly plan: Plan,
    private readonly consumer: Consumer,
  ) {
    this.source = new Source(plan.events, plan.source, plan.seed);
    this.faults = new FaultPlan(plan.faults);
    this.bindingFingerprint = fingerprint(plan.binding);
  }

  history(): History {
    return {
      header: {
        initial: this.plan.events,
        binding: this.plan.binding,
        contract: this.plan.source.contract,
        delivery: this.consumer.capabilities.delivery,
      },
      steps: this.steps,
    };
  }

  /** Runs both phases: adversity with the plan's faults, then drain with faults off. */
  async run(workers: readonly string[] = ['w1']): Promise<History> {
    const adversity = await this.runPhase('adversity', workers, this.plan.budget.adversity);
    if (adversity !== 'hung') {
      this.faults = new FaultPlan([]);
      await this.runPhase('drain', workers.slice(0, 1), this.plan.budget.drain);
    }
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
        for (const life of this.lives.values()) if (life.alive) this.end(life, { kind: 'budget' });
        this.pending.length = 0;
        return 'budget';
      }
      if (this.pending.length === 0) {
        // One turn drains every promise chain; a second one lets a timer of zero fire. A
        // consumer still silent after that, and still running, waits on something outside
        // the world.
        if (++idle < 3) continue;
        for (const life of this.lives.values()) if (life.alive) this.end(life, { kind: 'hung' });
        return 'hung';
      }
      idle = 0;
      const next = this.pick();
      if (!next.life.alive) continue;
      spent++;
      if (this.execute(next) === 'claimed') {
        for (const life of this.lives.values()) life.alive = false;
        this.pending.length = 0;
        return 'claimed';
      }
      // A worker that died is born again at once: crashes do not cost the phase its worker.
      if (!next.life.alive && this.lives.get(next.life.actor.worker) === next.life) {
        this.start(next.life.actor.worker);
        spent++;
      }
    }
  }

  private pick(): Pending {
    let index = 0;
    if (this.pending.length > 1) {
      const choice = this.plan.schedule[this.choice++] ?? 0;
      index = choice % this.pending.length;
    }
    return this.pending.splice(index, 1)[0] as Pending;
  }

  private start(worker: string): void {
    const incarnation = (this.incarnations.get(worker) ?? 0) + 1;
    this.incarnations.set(worker, incarnation);
    const life: Life = { actor: { worker, incarnation }, alive: true, settled: null };
    this.lives.set(worker, life);
    this.life(life, { kind: 'start' });
    const api = this.api(life);
    // run() is called on a later microtask so a consumer that throws synchronously is
    // recorded like one that rejects.
    void Promise.resolve()
      .then(() => this.consumer.run(api))
      .then(
        () => (life.settled = { threw: null }),
        (error: unknown) => (life.settled = { threw: describe(error) }),
      );
  }

  private end(life: Life, event: LifeStep['event']): void {
    life.alive = false;
    this.life(life, event);
  }

  private life(life: Life, event: LifeStep['event']): void {
    this.steps.push({ kind: 'life', seq: this.steps.length, phase: this.phase, actor: life.actor, event });
  }

  /** Runs one call: consults the fault plan, applies it, records it, answers or kills the caller. */
  private execute(p: Pending): 'claimed' | 'done' {
    const fault = this.phase === 'adversity' && p.call.kind !== 'claim' ? this.faults.next(p.call.kind) : undefined;
    const record = (outcome: Outcome, applied: boolean, result?: CallResult): void => {
      const step: CallStep = { kind: 'call', seq: this.steps.length, phase: this.phase, actor: p.life.actor, call: p.call, outcome, applied };
      this.steps.push(result === undefined ? step : { ...step, result });
    };
    if (fault?.kind === 'crash-before') {
      record({ kind: 'crash-before' }, false);
      p.life.alive = false;
      return 'done';
    }
    if (fault?.kind === 'error') {
      record({ kind: 'error', code: 'unavailable' }, false);
      p.reject(new WorldError('unavailable', true));
      return 'done';
    }
    let answer: { value: unknown; result?: CallResult };
    try {
      answer = p.execute();
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      record({ kind: 'error', code: error.code }, false);
      if (fault?.kind === 'crash-after') p.life.alive = false;
      else p.reject(error);
      return 'done';
    }
    if (fault?.kind === 'crash-after') {
      record({ kind: 'crash-after' }, true);
      p.life.alive = false;
      return 'done';
    }
    record({ kind: 'ok' }, true, answer.result);
    if (p.call.kind === 'claim') return 'claimed';
    p.resolve(answer.value);
    return 'done';
  }

  private submit<T>(life: Life, call: Call, execute: () => { value: T; result?: CallResult }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // A dead incarnation's calls are dropped: its promises never settle, like a killed process.
      if (!life.alive) return;
      this.pending.push({ life, call, execute, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** The calls one incarnation may make; each one only queues, the scheduler runs it. */
  private api(life: Life): WorkerWorld {
    const { binding } = this.plan;
    const { pageSize, resumes, contract } = this.plan.source;
    return {
      binding,
      fingerprint: this.bindingFingerprint,
      source: { pageSize, resumes, contract },
      worker: life.actor.worker,
      incarnation: life.actor.incarnation,
      fetch: (request) =>
        this.submit(life, { kind: 'fetch', request }, () => {
          const page = this.source.fetch(binding, request);
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
          this.store.commit(ops, fence, this.generation);
          return { value: undefined };
        });
      },
      emit: (event, payload) =>
        this.submit(life, { kind: 'emit', event: { id: event.id, version: event.version }, payload }, () => ({ value: undefined })),
      lease: () =>
        this.submit(life, { kind: 'lease' }, () => {
          const generation = ++this.generation;
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
