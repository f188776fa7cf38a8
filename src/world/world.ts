import type { Binding } from '../../model/binding.js';
import { EVENT_OP_KINDS, RESUME_KINDS, STORE_OP_KINDS } from '../../model/api.js';
import { refKey, refOf, type EventRef, type SourceEvent } from '../../model/event.js';
import { HISTORY_VERSION, type Actor, type Call, type CallResult, type CallStep, type FetchRequest, type History, type LifeStep, type ObservedStep, type Outcome, type Page, type Phase, type Step, type StoreOp } from '../../model/history.js';
import { isPageQuirk, type Fault, type Plan } from '../../scenarios/plan.js';
import type { AnyConsumer, BlackboxConsumer, Inspection, WorkerWorld } from '../adapter/consumer.js';
import { WORLD_ENDED, type WorldEnd, type WorldEndHook } from './end.js';
import { isKey, jsonProblem, shown } from './arguments.js';
import { AdapterError, ConsumerUnrunnableError, HarnessError } from '../adapter/errors.js';
import { worldBug } from './bugs.js';
import { WorldError } from './errors.js';
import { CallCounter, FaultPlan } from './faults.js';
import { checkedCopy, freezeOwn, frozenCopy } from './frozen.js';
import { Lease } from './lease.js';
import { PendingCalls } from './pending.js';
import { canonicalJson, fingerprint } from './order.js';
import { Source } from './source.js';
import { Store } from './store.js';
import { capText } from './cap.js';
import { turn } from './turn.js';

/** How a phase ended. */
export type PhaseEnd = 'claimed' | 'budget' | 'hung';

/** One incarnation of a worker: alive until it crashes, claims, throws or returns. */
interface Life {
  readonly actor: Actor;
  /** The binding its calls are served under: the world's when it was born. */
  readonly binding: Binding;
  /** How the lease names it. */
  readonly who: string;
  alive: boolean;
  /** Set when run() settles, so the scheduler can record it at a deterministic point. */
  settled: { readonly threw: string | null } | null;
  /**
   * Aborted when the incarnation dies, so an adapter can kill what it runs (a process). Made
   * when the consumer first reads its signal (see signalOf): most never do, and a controller
   * made and aborted for every incarnation was a measurable part of a world.
   */
  controller: AbortController | null;
  /** Work the consumer does outside the world right now; the scheduler waits for it. */
  holds: number;
  /** What the consumer says about its outermost hold, for a stall report (a process's stderr, say). */
  note: (() => string) | null;
  /** How many waits its holding may take, when its outermost hold asked for other than the stall limit. */
  limitWaits: number | null;
  /** The world's wait count when it began holding (its outermost hold): the limit counts from there. */
  heldSince: number;
  /** Why the incarnation said it cannot go on (see WorkerWorld.stuck); null while it can. */
  stuck: string | null;
}

interface Pending {
  readonly life: Life;
  readonly call: Call;
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
  private readonly pending = new PendingCalls<Pending>();
  /** The binding workers read under now: a frozen copy, never the plan's own object. */
  private binding: Binding;
  /** Each binding's fingerprint, computed once rather than on every call that needs it. */
  private readonly fingerprints = new WeakMap<Binding, string>();
  /** What the source offers, as every incarnation sees it: one frozen copy for the whole world. */
  private readonly offer: WorkerWorld['source'];
  private readonly faults: FaultPlan;
  private phase: Phase = 'adversity';
  /** Calls reached in the adversity phase: where mutations and the rebind are placed. */
  private readonly placed: CallCounter;
  private choice = 0;
  /**
   * Each worker's newest incarnation in this phase, in the order the workers first started (a
   * worker keeps its place when it is born again). A list walked by index, not a map by worker:
   * the scheduler looks at every life several times a call, and iterating a map allocated an
   * iterator and a result per life each time; a phase has a handful of workers to look up.
   */
  private living: Life[] = [];
  private readonly incarnations = new Map<string, number>();
  private readonly poison: ReadonlySet<string>;
  /**
   * Calls so far that changed durable state: a first effect of an event version (an emit, or a
   * commit's effect), a first dead letter of one, or a commit that changed the store. What a
   * process consumer's crash-loop count takes for progress (see durableChanges).
   */
  private durable = 0;
  /**
   * Whether durable changes are counted: from the first time the count is read, which a
   * process consumer's bridge does at its first call. An in-process consumer's world never
   * reads it, and its calls carry none of the counting.
   */
  private counting = false;
  /** The count as every incarnation's API carries it. */
  private readonly durableRef = new DurableRef(() => {
    this.counting = true;
    return this.durable;
  });
  /** The effects (`e:` and the version) and dead letters (`d:`) made so far. */
  private readonly kept = new Set<string>();
  /** A blackbox consumer's own store, and what its last inspection showed. */
  /** A blackbox consumer's store, and what the last inspection showed of it: its watermark, and its effects as recorded. */
  private box: { consumer: BlackboxConsumer<unknown>; store: unknown; watermark: string; effects: Effect[] } | null = null;
  private wake: (() => void) | null = null;
  /** Ends the wait for a blackbox writer's next call when a call comes (see callOrTimer). */
  private called: (() => void) | null = null;
  /**
   * Set when an incarnation found the consumer cannot be run at all, or tidemark's own code
   * inside the consumer failed (a HarnessError): the run stops at the next turn.
   */
  private unrunnable: ConsumerUnrunnableError | HarnessError | null = null;
  /** How many waits of STALL_WAIT_MS a consumer working outside may take between calls. */
  private readonly stallWaits: number;
  /** Waits of STALL_WAIT_MS taken for holds so far: the clock a hold's limit is counted on. */
  private waits = 0;
  /** A lie for tidemark's own tests of the oracle (see bugs.ts); null in every real run. */
  private readonly bug = worldBug();

  constructor(
    private readonly plan: Plan,
    private readonly consumer: AnyConsumer,
  ) {
    this.source = new Source(plan.events, plan.source, plan.seed);
    this.faults = new FaultPlan(plan.faults);
    this.placed = new CallCounter([...plan.mutations.map((m) => m.before), ...(plan.rebind === null ? [] : [plan.rebind.before])]);
    this.lease = new Lease(plan.leaseTtlSteps);
    this.binding = frozenCopy(plan.binding);
    const { pageSize, resumes, contract, order, tokens } = plan.source;
    // The order only when newest-first, and the token kind only when not a plain
    // continuation, so that what every other source offers stays as it was.
    this.offer = frozenCopy({ pageSize, resumes, contract, ...(order === 'newest-first' ? { order } : {}), ...(tokens === undefined || tokens === 'continuation' ? {} : { tokens }) });
    this.poison = new Set(plan.poison);
    this.stallWaits = Math.ceil((consumer.stallMs ?? STALL_WAITS * STALL_WAIT_MS) / STALL_WAIT_MS);
  }

  history(): History {
    return {
      header: {
        version: HISTORY_VERSION,
        initial: this.plan.events,
        binding: this.plan.binding,
        contract: this.plan.source.contract,
        delivery: this.consumer.capabilities.delivery,
        poison: this.plan.poison,
        pageSize: this.plan.source.pageSize,
        leaseTtlSteps: this.plan.leaseTtlSteps,
        // The plan, so that ground truth recomputes where each fault and quirk fired.
        resumes: this.plan.source.resumes,
        faults: this.plan.faults,
        mutations: this.plan.mutations,
        rebind: this.plan.rebind,
        workers: this.plan.workers,
        consumer: this.consumer.kind === 'blackbox' ? 'blackbox' : 'whitebox',
        // Only when declared, so that the histories of every other consumer stay as they were.
        ...(this.consumer.capabilities.profile?.refusals === 'fail-visibly' ? { refusals: 'fail-visibly' as const } : {}),
        ...(this.plan.source.order === 'newest-first' ? { order: 'newest-first' as const } : {}),
        ...(this.plan.source.tokens === undefined || this.plan.source.tokens === 'continuation' ? {} : { tokens: this.plan.source.tokens }),
      },
      steps: this.steps,
    };
  }

  /** Runs both phases: adversity with the plan's faults, mutations and workers, then drain: faults off, one worker. */
  async run(): Promise<History> {
    const workers = Array.from({ length: this.plan.workers }, (_, i) => `w${i + 1}`);
    const blackbox = this.consumer.kind === 'blackbox' ? this.consumer : null;
    if (blackbox) this.box = { consumer: blackbox, store: await blackbox.open(), watermark: canonicalJson(null), effects: [] };
    let how: WorldEnd = 'stopped';
    try {
      const adversity = await this.runPhase('adversity', workers, this.plan.budget.adversity);
      if (adversity !== 'hung' && (await this.runPhase('drain', workers.slice(0, 1), this.plan.budget.drain)) !== 'hung') how = 'done';
    } finally {
      // Also when the run stopped on an error: every incarnation still alive is told to stop,
      // so a consumer process is killed rather than left waiting for a reply that never comes.
      this.stopAll(null);
      // Then the consumer hears that the world is over, and how, before the world returns:
      // what it keeps for a next world goes now if this world was stopped.
      (this.consumer as AnyConsumer & WorldEndHook)[WORLD_ENDED]?.(how);
      if (blackbox && this.box) await blackbox.close?.(this.box.store);
    }
    return this.history();
  }

  /**
   * A blackbox consumer's durable writes happen between its calls; looking into its store
   * once every worker has gone as far as it can after a call records them at the first
   * boundary after they happened, credited to the incarnation whose call ran.
   */
  private async observe(life: Life): Promise<void> {
    const box = this.box;
    if (!box) return;
    const seen = checkInspection(await box.consumer.inspect(box.store));
    // State kept per binding: the current binding's entry is the watermark, none yet when absent.
    const current = seen.watermarks === undefined ? (seen.watermark ?? null) : (seen.watermarks[this.fingerprintOf(this.binding)] ?? null);
    // A copy: the consumer's own object could change after it was recorded.
    const value = frozenCopy(current);
    const watermark = canonicalJson(value);
    // Every effect shown before must be shown again, unchanged; what is left is new.
    const { fresh, inOrder } = newEffects(box.effects, seen.effects, this.steps.length - 1);
    const recorded = fresh.map(copyEffect);
    // Kept in the order last shown, which the next inspection most likely keeps.
    if (inOrder) for (const e of recorded) box.effects.push(e);
    else box.effects = seen.effects.map(copyEffect);
    if (watermark === box.watermark && fresh.length === 0) return;
    this.steps.push({
      kind: 'observed',
      seq: this.steps.length,
      phase: this.phase,
      actor: life.actor,
      // Always present, undefined when unchanged: one shape for every observed step (see record).
      watermark: watermark === box.watermark ? undefined : { value },
      effects: recorded,
    });
    box.watermark = watermark;
  }

  private async runPhase(phase: Phase, workers: readonly string[], budget: number): Promise<PhaseEnd> {
    this.phase = phase;
    this.living = [];
    let spent = 0;
    for (const w of workers) {
      this.start(w);
      spent++;
    }
    let idle = 0;
    // Whose call ran last: a blackbox consumer's durable writes after that call, and before
    // its next one, are that incarnation's. Only it ran since, so they are looked at here.
    let writer: Life | null = null;
    // Turns the writer has been waited for since its call ran.
    let writing = 0;
    for (;;) {
      await turn();
      if (this.unrunnable) throw this.unrunnable;
      let reborn = false;
      // Looked for first: the copy of the lives is made only when one is to be born again.
      const settled = this.anySettled() ? this.living.slice() : [];
      for (const life of settled) {
        if (!life.alive || life.settled === null) continue;
        this.kill(life);
        this.life(life, life.settled.threw === null ? { kind: 'returned' } : { kind: 'threw', message: life.settled.threw });
        this.start(life.actor.worker);
        spent++;
        idle = 0;
        reborn = true;
      }
      if (spent >= budget) {
        this.stopAll({ kind: 'budget' });
        return 'budget';
      }
      // A worker born again here runs on a later microtask (see start): it gets a whole turn,
      // as every worker does at a phase's start, to make its first call, take its hold, or
      // end, before anything is picked. Without it, what the pick saw depended on how many
      // microtasks the new incarnation took: an in-process consumer's first call was there,
      // a process's could not be, and one that ends after an await was seen only later. The
      // same design took different paths in process and through the bridge.
      if (reborn) continue;
      const waited = this.waits;
      // Nobody holding is known at once: the wait, and the promise it takes, is for those who do.
      const stalled = this.anyHolding() ? await this.awaitHolds() : null;
      if (stalled) {
        // Say who stalled and what it last said, before the stop silences it.
        const waits = stalled.limitWaits ?? this.stallWaits;
        const who = `${stalled.actor.worker}#${stalled.actor.incarnation}`;
        const detail = stalled.stuck !== null ? `${who} ${stalled.stuck}` : `${who} sent no call for ${(waits * STALL_WAIT_MS) / 1000} s${stalled.note ? `; ${stalled.note()}` : ''}`;
        this.stopAll({ kind: 'hung', detail });
        return 'hung';
      }
      if (this.waits !== waited) {
        // The world waited on a hold: what its release led to is seen after a turn, before
        // anything is picked. A process that exits releases its hold at once, and its
        // incarnation settles a few microtasks later; it is born again first. Otherwise the
        // run goes on to the pick, so a consumer that holds and releases without calling
        // still runs into the idle limit. Consumers that never hold never come here.
        await turn();
        if (this.unrunnable) throw this.unrunnable;
        if (this.anySettled()) continue;
      }
      // Only now has every worker gone as far as it can, its writes included. Only a
      // blackbox consumer has writes to look at: for any other, the await of an observation
      // that does nothing was a step's worth of promises, and nothing can run in between,
      // since nothing has been queued since the turn.
      if (writer && this.box) {
        // Its writes are all in once it has gone as far as it can: made its next call, or
        // ended. A consumer on a real database awaits its writes, which take more than a
        // turn: it is given the idle grace to get there before its store is looked at and
        // anything is picked, so that what it wrote before its next call is seen before that
        // call runs, whole, credited to it, and at the same step however long the write took.
        // The wait ends as soon as a call comes (see submit).
        const working = writer.alive && this.pending.sizeOf(writer.actor.worker) === 0;
        if (working && ++writing < 3 + GRACE_WAITS) {
          if (writing >= 3) await this.callOrTimer();
          continue;
        }
        await this.observe(writer);
        // Still writing after the grace, with nothing else to run: the wait spent the idle
        // grace, which it must not get a second time (its late writes would then meet its
        // next call unseen), so the run cannot be judged. With other calls waiting, the next
        // is picked, as before the wait.
        if (working && this.pending.size === 0) idle = Math.max(idle, 2 + GRACE_WAITS);
        writer = null;
        writing = 0;
      }
      if (this.anySettled()) continue;
      if (this.pending.size === 0) {
        // One turn drains every promise chain, which is all a deterministic consumer needs.
        // A consumer doing real I/O of its own (a blackbox one with a database) gets a grace
        // of short timer waits; still silent after that, and still running, it waits on
        // something that will not come, and the run cannot be judged.
        if (++idle < 3) continue;
        if (idle < 3 + GRACE_WAITS) {
          await new Promise((resolve) => setTimeout(resolve, GRACE_WAIT_MS));
          continue;
        }
        this.stopAll({ kind: 'hung' });
        return 'hung';
      }
      idle = 0;
      const next = this.pick();
      if (!next.life.alive) continue;
      if (phase === 'adversity' && this.beforeCall(workers, next.call)) continue;
      spent++;
      writer = next.life;
      if (this.execute(next) === 'claimed') {
        this.stopAll(null);
        return 'claimed';
      }
      // A worker that died is born again at once: crashes do not cost the phase its worker.
      if (!next.life.alive && this.living.includes(next.life)) {
        this.start(next.life.actor.worker);
        spent++;
      }
    }
  }

  /**
   * Applies what the plan put before this adversity call: source mutations, and the rebind.
   * Returns true when the rebind restarted every worker, so the picked call died with them.
   */
  private beforeCall(workers: readonly string[], call: Call): boolean {
    this.placed.count(call);
    for (const spec of this.plan.mutations) {
      if (!this.placed.names(spec.before)) continue;
      const { event, mutation } = this.source.mutate(spec, this.binding);
      const recorded = this.bug === 'contract' ? { ...event, key: event.key.map(() => -1) } : event;
      this.steps.push({ kind: 'mutation', seq: this.steps.length, phase: this.phase, event: recorded, mutation });
    }
    const rebind = this.plan.rebind;
    if (rebind === null || !this.placed.names(rebind.before)) return false;
    this.stopAll(null);
    this.binding = frozenCopy(rebind.binding);
    this.steps.push({ kind: 'rebind', seq: this.steps.length, phase: this.phase, binding: rebind.binding, call });
    for (const w of workers) this.start(w);
    return true;
  }

  /**
   * The next call to run. A choice c picks the worker c mod (workers with pending calls),
   * then that worker's call (c div workers) mod (its pending calls); 0 is the oldest call
   * of the first worker, so shrinking a schedule makes it calmer.
   */
  private pick(): Pending {
    if (this.pending.size === 1) return this.pending.take(this.pending.activeAt(0), 0);
    const workers = this.pending.activeCount();
    const c = this.plan.schedule[this.choice++] ?? 0;
    const worker = this.pending.activeAt(c % workers);
    return this.pending.take(worker, Math.floor(c / workers) % this.pending.sizeOf(worker));
  }

  private start(worker: string): void {
    const incarnation = (this.incarnations.get(worker) ?? 0) + 1;
    this.incarnations.set(worker, incarnation);
    const life: Life = { actor: { worker, incarnation }, binding: this.binding, who: `${worker}#${incarnation}`, alive: true, settled: null, controller: null, holds: 0, note: null, limitWaits: null, heldSince: 0, stuck: null };
    const previous = this.living.findIndex((l) => l.actor.worker === worker);
    if (previous === -1) this.living.push(life);
    else this.living[previous] = life;
    this.life(life, { kind: 'start' });
    const api = this.api(life);
    // run() is called on a later microtask so a consumer that throws synchronously is
    // recorded like one that rejects.
    const consumer = this.consumer;
    const box = this.box;
    void Promise.resolve()
      .then(() => (consumer.kind === 'blackbox' ? consumer.run(api, box?.store) : consumer.run(api)))
      .then(
        () => {
          life.settled = { threw: null };
          this.poke();
        },
        (error: unknown) => {
          if (error instanceof ConsumerUnrunnableError || error instanceof HarnessError) this.unrunnable ??= error;
          life.settled = { threw: capText(describe(error)) };
          this.poke();
        },
      );
  }

  /** Ends every live incarnation, recording why when there is a reason to record. */
  private stopAll(event: LifeStep['event'] | null): void {
    for (let i = 0; i < this.living.length; i++) {
      const life = this.living[i] as Life;
      if (!life.alive) continue;
      this.kill(life);
      if (event) this.life(life, event);
    }
    this.pending.clear();
  }

  /** The incarnation dies: its calls are dropped, and whatever it runs outside is told to stop. */
  private kill(life: Life): void {
    life.alive = false;
    life.holds = 0;
    life.controller?.abort(ABORTED);
  }

  /** Some live incarnation has returned or thrown, and is yet to be born again. */
  private anySettled(): boolean {
    for (let i = 0; i < this.living.length; i++) {
      const life = this.living[i] as Life;
      if (life.alive && life.settled !== null) return true;
    }
    return false;
  }

  /** Some live incarnation holds the world (see awaitHolds). */
  private anyHolding(): boolean {
    for (let i = 0; i < this.living.length; i++) {
      const life = this.living[i] as Life;
      if (life.alive && life.holds > 0 && life.settled === null) return true;
    }
    return false;
  }

  /** A short timer's wait, ended early when an incarnation submits a call. */
  private callOrTimer(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, GRACE_WAIT_MS);
      this.called = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Wakes the scheduler when it waits on work outside the world. */
  private poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /**
   * Waits while a live incarnation holds the world: a consumer in another process is still
   * working towards its next call, and picking now would make the order depend on timing.
   * Returns the incarnation whose hold outlasted its limit (the stall limit, or the one its
   * hold asked for), or null once nobody holds.
   */
  private async awaitHolds(): Promise<Life | null> {
    for (;;) {
      const holding = this.living.filter((l) => l.alive && l.holds > 0 && l.settled === null);
      if (holding.length === 0) return null;
      const stuck = holding.find((l) => l.stuck !== null);
      if (stuck) return stuck;
      // Which of several lives runs out of time first depends on when each said its hello,
      // by the clock, and the history must not. So a stall is declared once every life still
      // holding has run out, or once one has been out for a further limit of its own (one
      // that re-takes its hold without end, or holds with a longer limit, cannot put it off
      // for longer), and the first in the order of the lives that has run out is named.
      const out = (l: Life, times: number): boolean => this.waits - l.heldSince >= times * (l.limitWaits ?? this.stallWaits);
      if (holding.every((l) => out(l, 1)) || holding.some((l) => out(l, 2))) return holding.find((l) => out(l, 1)) as Life;
      // A poke (a hold released) ends a wait early, and it counts all the same: a consumer
      // that pokes without end cannot keep the clock from running out.
      // The timer goes with the wait it bounds: a process consumer pokes many times a second,
      // and a timer left armed by each poke would fire for nothing, and pile up while it works.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STALL_WAIT_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waits++;
    }
  }

  private life(life: Life, event: LifeStep['event']): void {
    this.steps.push({ kind: 'life', seq: this.steps.length, phase: this.phase, actor: life.actor, event });
  }

  /** Runs one call: consults the fault plan, applies it, records it, answers or kills the caller. */
  private execute(p: Pending): 'claimed' | 'done' {
    const planned = p.call.kind === 'claim' || p.call.kind === 'malformed' ? undefined : this.faults.next(p.call);
    // Page quirks are how the source behaves, so they outlive the adversity phase; crashes,
    // errors and timeouts are faults, and the drain phase has none.
    const fault = planned && (this.phase === 'adversity' || isPageQuirk(planned.kind)) ? planned : undefined;
    const kind = fault?.kind;
    if (kind === 'crash-before') {
      this.record(p, kind, { kind: 'crash-before' }, false, undefined);
      this.kill(p.life);
      return 'done';
    }
    if (kind === 'error') {
      this.record(p, kind, { kind: 'error', code: 'unavailable' }, false, undefined);
      p.reject(new WorldError('unavailable', true));
      return 'done';
    }
    if (kind === 'lost') {
      // The request never arrived; the caller hears what it hears of a timeout, which did the work.
      this.record(p, kind, { kind: 'indefinite', code: 'timeout' }, false, undefined);
      p.reject(new WorldError('timeout', false));
      return 'done';
    }
    let result: CallResult | undefined;
    try {
      result = this.perform(p, fault);
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      this.record(p, kind, { kind: 'error', code: error.code }, false, undefined);
      if (kind === 'crash-after') this.kill(p.life);
      else p.reject(error);
      return 'done';
    }
    if (p.call.kind === 'fetch') {
      // Delivered, whether or not the caller lives to read it: addresses tied to these events start counting.
      const { events } = (result as { page: Page }).page;
      this.faults.calls.delivered(events);
      this.placed.delivered(events);
    }
    if (kind === 'crash-after') {
      this.record(p, kind, { kind: 'crash-after' }, true, result);
      this.kill(p.life);
      return 'done';
    }
    if (kind === 'timeout') {
      // The work was done; the caller only hears that it may not have been.
      this.record(p, kind, { kind: 'indefinite', code: 'timeout' }, true, result);
      p.reject(new WorldError('timeout', false));
      return 'done';
    }
    this.record(p, kind, OK, true, result);
    if (p.call.kind === 'claim') return 'claimed';
    p.resolve(valueOf(result));
    return 'done';
  }

  /**
   * What a call does when it runs: what it answers, as recorded (its value is read from
   * that), or a WorldError thrown. One method for every call, where a closure made for each
   * call at submission, and an answer object around its result, were allocations per call.
   */
  private perform(p: Pending, fault: ReturnType<FaultPlan['next']>): CallResult | undefined {
    const call = p.call;
    switch (call.kind) {
      case 'fetch': {
        const page = this.source.fetch(p.life.binding, call.request, fault && isPageQuirk(fault.kind) ? fault.kind : undefined);
        return { kind: 'page', page };
      }
      case 'load':
        // Frozen in place rather than copied: the store keeps frozen copies of what was
        // committed, and replaces its records rather than changing them, so all of it is shared.
        return { kind: 'state', state: freezeOwn(this.store.state()) };
      case 'completed':
        return { kind: 'flags', flags: freezeOwn(this.store.completed(call.events)) };
      case 'commit': {
        for (const op of call.ops) if ((op.op === 'effect' || op.op === 'outbox') && this.poison.has(op.event.id)) this.refuse(op.event);
        let changed = this.store.commit(call.ops, call.fence, this.lease.generation, this.counting);
        if (!this.counting) return undefined;
        for (const op of call.ops) if (op.op === 'effect' || op.op === 'dead-letter') changed = this.keep(op.op === 'effect' ? 'e' : 'd', op.event) || changed;
        if (changed) this.durable++;
        return undefined;
      }
      case 'emit':
        if (this.poison.has(call.event.id)) this.refuse(call.event);
        if (this.counting && this.keep('e', call.event)) this.durable++;
        return undefined;
      case 'lease':
        return { kind: 'generation', generation: this.lease.acquire(p.life.who, this.steps.length) };
      case 'claim':
        return undefined;
      case 'malformed':
        throw new WorldError('bad-request', true, `${call.method}: ${call.problem}`);
    }
  }

  /** Notes an effect (`e`) or dead letter (`d`) of an event version; says whether it is the first. */
  private keep(what: 'e' | 'd', event: EventRef): boolean {
    const key = `${what}:${refKey(event)}`;
    if (this.kept.has(key)) return false;
    this.kept.add(key);
    return true;
  }

  /** Records a call that ran, with the fault or quirk that fired there. */
  private record(p: Pending, kind: Fault['kind'] | undefined, outcome: Outcome, applied: boolean, result: CallResult | undefined): void {
    // A quirk fired only if the source found something to act on; a call fault always fires.
    const fired = kind !== undefined && (!isPageQuirk(kind) || this.source.quirked) ? kind : undefined;
    const lie = this.bug === 'applied' && p.call.kind === 'commit' && outcome.kind === 'ok';
    // One literal, every field always present (undefined where absent, which JSON leaves
    // out): every call step shares one hidden class, so the checker's reads of millions of
    // steps stay monomorphic. Spreading optional fields in gave each combination its own.
    const step: CallStep = {
      kind: 'call',
      seq: this.steps.length,
      phase: this.phase,
      actor: p.life.actor,
      call: p.call,
      outcome,
      applied: applied && !lie,
      fault: fired,
      result: result === undefined ? undefined : this.misreport(result),
    };
    this.steps.push(step);
  }

  /** What a buggy world would record (see bugs.ts); the truth otherwise. */
  private misreport(result: CallResult): CallResult {
    if (this.bug === 'lease' && result.kind === 'generation') return { kind: 'generation', generation: result.generation + 1 };
    if (this.bug === 'page' && result.kind === 'page' && result.page.events.length > 0) {
      const [first, ...rest] = result.page.events;
      return { kind: 'page', page: { ...result.page, events: [{ ...(first as SourceEvent), payload: `${(first as SourceEvent).payload}~` }, ...rest] } };
    }
    return result;
  }

  /** Queues a call; perform runs it when the scheduler picks it. */
  private submit<T>(life: Life, call: Call): Promise<T> {
    const promise = new Promise<T>(capture);
    // A dead incarnation's calls are dropped: its promises never settle, like a killed process.
    if (life.alive) {
      this.pending.push(life.actor.worker, { life, call, resolve: captured.resolve, reject: captured.reject });
      const called = this.called;
      this.called = null;
      called?.();
    }
    return promise;
  }

  private refuse(event: EventRef): never {
    throw new WorldError('rejected', true, `the effect for ${event.id} is refused: it is a poison event`, { ref: event });
  }

  /**
   * A call with arguments the world cannot read still queues, costs a step and fails with
   * bad-request when it runs: an adapter that loops on bad calls runs out of budget rather
   * than spinning outside the scheduler.
   */
  private malformed(life: Life, method: string, problem: string): Promise<never> {
    return this.submit(life, { kind: 'malformed', method, problem });
  }

  /** The calls one incarnation may make; each one only queues, the scheduler runs it. */
  private api(life: Life): WorkerWorld {
    const raw = this.rawApi(life);
    // Arguments that are not JSON data (a cycle, a BigInt) are refused first: everything
    // after, the history included, assumes JSON. The arguments the world keeps are checked
    // and copied in one walk, and what follows reads the copy.
    // Written out rather than spread from raw: a spread would read the signal, which is made only when asked for.
    const api: Omit<WorkerWorld, 'signal'> & { readonly [LIFE]: LifeRef; readonly [DURABLE]: DurableRef } = {
      [LIFE]: new LifeRef(life),
      [DURABLE]: this.durableRef,
      hold: raw.hold,
      stuck: raw.stuck,
      binding: raw.binding,
      fingerprint: raw.fingerprint,
      source: raw.source,
      worker: raw.worker,
      incarnation: raw.incarnation,
      leaseTtl: raw.leaseTtl,
      fetch: (asked) => {
        const request = checkedCopy(asked, 'request');
        const problem = request.problem ?? badRequest(request.copy);
        return problem !== null ? this.malformed(life, 'fetch', problem) : raw.fetch(request.copy as FetchRequest);
      },
      completed: (asked) => {
        const events = checkedCopy(asked, 'events');
        const problem = events.problem ?? (Array.isArray(events.copy) && events.copy.every(isRef) ? null : 'expects an array of { id, version }');
        return problem !== null ? this.malformed(life, 'completed', problem) : raw.completed(events.copy as readonly EventRef[]);
      },
      commit: (asked, options) => {
        const ops = checkedCopy(asked, 'ops');
        const problem =
          ops.problem ??
          jsonProblem(options, 'options') ??
          badOps(ops.copy) ??
          (options?.fence !== undefined && !Number.isInteger(options.fence) ? 'fence must be an integer generation' : null);
        return problem !== null ? this.malformed(life, 'commit', problem) : raw.commit(ops.copy as readonly StoreOp[], options);
      },
      emit: (asked, payload, askedKey) => {
        // The key is kept in the history: checked and copied in one walk, as a fetch's request is.
        const key = askedKey === undefined || askedKey === null ? { copy: askedKey, problem: null } : checkedCopy(askedKey, 'key');
        // Of the event only its ref is kept. The event is checked as JSON data, then its id and
        // version are read into a ref of the world's own, and that ref is what is judged and
        // recorded: judged on the event and recorded from it, a getter could answer JSON data to
        // the check and something else to the record. (Copying the whole event, its payload and
        // attributes included, to keep two fields cost some 8% of a world's CPU.)
        const json = jsonProblem(asked, 'event');
        const event = json === null ? readRef(asked) : null;
        const problem =
          json ??
          (event !== null && typeof payload === 'string' ? null : 'expects ({ id, version }, payload string)') ??
          key.problem ??
          (key.copy === undefined || key.copy === null || isKey(key.copy) ? null : 'expects its key as an array of finite numbers, or null');
        return problem ? this.malformed(life, 'emit', problem) : raw.emit(event as EventRef, payload, key.copy);
      },
      load: raw.load,
      lease: raw.lease,
      caughtUp: raw.caughtUp,
      // A claim cannot be malformed: a reason that is not a string is recorded as readable text.
      fail: (reason) => raw.fail(typeof reason === 'string' ? reason : shown(reason, Number.POSITIVE_INFINITY)),
    };
    // The signal is an accessor every incarnation's API shares, not one written in this
    // literal: a literal's getter is a new function for every object, and such objects kept
    // their whole world alive through young-generation collections (measured over 2,000 worlds
    // of the reference consumer, with execute's hash the same way: 115 MB promoted against 11
    // MB, scavenges 457 ms against 156 ms, three full collections against none).
    return Object.defineProperty(api, 'signal', SIGNAL) as unknown as WorkerWorld;
  }

  private fingerprintOf(binding: Binding): string {
    let print = this.fingerprints.get(binding);
    if (print === undefined) {
      print = fingerprint(binding);
      this.fingerprints.set(binding, print);
    }
    return print;
  }

  /**
   * The raw calls. Nothing handed to the consumer is an object the history or the world
   * keeps using unfrozen (the binding, the offer, pages and their events, loaded state), and
   * every argument is copied before it is recorded or acted on (by api, which hands these
   * calls the frozen copies of the request, the events and the operations): a consumer
   * cannot change what the world serves or what the oracle reads, whatever it does to the
   * objects it holds.
   */
  private rawApi(life: Life): Omit<WorkerWorld, 'signal'> {
    const binding = life.binding;
    return {
      hold: (note, limitMs) => {
        if (!life.alive) return () => {};
        // Only the outermost hold sets the clock, the limit and the note: a hold taken inside
        // another (and released at once, say) must not restart the clock of one that is stuck.
        if (life.holds === 0) {
          life.limitWaits = limitMs === undefined ? null : Math.ceil(limitMs / STALL_WAIT_MS);
          life.heldSince = this.waits;
          life.note = note ?? null;
        }
        life.holds++;
        let released = false;
        return () => {
          if (released || !life.alive) return;
          released = true;
          life.holds--;
          this.poke();
        };
      },
      stuck: (reason) => {
        if (!life.alive || life.stuck !== null) return;
        life.stuck = capText(String(reason));
        this.poke();
      },
      binding,
      fingerprint: this.fingerprintOf(binding),
      source: this.offer,
      worker: life.actor.worker,
      incarnation: life.actor.incarnation,
      leaseTtl: Object.freeze({ value: this.plan.leaseTtlSteps, unit: 'steps' as const }),
      fetch: (request) => this.submit(life, { kind: 'fetch', request }),
      load: () => this.submit(life, { kind: 'load' }),
      completed: (events: readonly EventRef[]) => this.submit(life, { kind: 'completed', events }),
      commit: (ops: readonly StoreOp[], options) => this.submit(life, { kind: 'commit', ops, fence: options?.fence ?? null }),
      emit: (asked, payload, key) => {
        const event = freezeOwn({ id: asked.id, version: asked.version });
        // Only an effect that carries a key records one: every other history stays as it was.
        return this.submit(life, key === undefined ? { kind: 'emit', event, payload } : { kind: 'emit', event, payload, key });
      },
      lease: () => this.submit(life, { kind: 'lease' }),
      caughtUp: () => this.submit(life, { kind: 'claim', claim: { kind: 'caught-up' } }),
      fail: (reason) => this.submit(life, { kind: 'claim', claim: { kind: 'failed', reason: capText(String(reason)) } }),
    };
  }
}

/**
 * The resolving functions of the promise a call returns, as its executor hands them over:
 * one executor for every call (see submit), where a closure per call was an allocation per
 * call. The executor runs inside the Promise constructor, so they are read right after it.
 */
const captured: { resolve: (value: unknown) => void; reject: (error: unknown) => void } = { resolve: () => {}, reject: () => {} };

function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  captured.resolve = resolve as (value: unknown) => void;
  captured.reject = reject;
}

/** What a call answers its caller: what its result carries, or nothing. */
function valueOf(result: CallResult | undefined): unknown {
  if (result === undefined) return undefined;
  switch (result.kind) {
    case 'page':
      return result.page;
    case 'state':
      return result.state;
    case 'flags':
      return result.flags;
    case 'generation':
      return result.generation;
    case 'done':
      return undefined;
  }
}

/** The outcome of every call that succeeded: one frozen object, shared by their steps as the JSON of each is the same. */
const OK: Outcome = Object.freeze({ kind: 'ok' });

/** How long a consumer may work outside the world between calls before it is declared stalled: 1,000 x 10 ms. */
const STALL_WAITS = 1000;
const STALL_WAIT_MS = 10;

/** Short waits, counted rather than timed, before a silent consumer is declared hung: 50 x 10 ms. */
const GRACE_WAITS = 50;
const GRACE_WAIT_MS = 10;

/**
 * Why an incarnation's signal aborts, built once: every kill is the same event, and a fresh
 * DOMException (with its stack) per kill was a measurable part of a world's cost. Frozen,
 * since every incarnation of every world sees this one object.
 */
const ABORTED = Object.freeze(new DOMException('the incarnation died: it crashed, its phase ended, or the world rebound', 'AbortError'));

/**
 * Where an incarnation's API keeps its life, for the signal getter. A plain property of the
 * literal (defining it hidden cost about a percent of a world's CPU): a spread copies it,
 * which gives the copy nothing the spread did not already read.
 */
const LIFE = Symbol('tidemark.incarnation');

/** Where an incarnation's API keeps the world's count of durable changes (see durableChanges). */
const DURABLE = Symbol('tidemark.durable');

/**
 * How many calls of the world an incarnation belongs to have changed durable state so far
 * (a first effect or dead letter of an event version, a commit that changed the store), read
 * from the incarnation's API: what a process consumer's crash-loop count takes for progress,
 * so that a commit or an emit that keeps nothing new (an empty commit, the stored watermark
 * written again, an effect made twice) does not pass for it. Null for an API that is not a
 * world's.
 */
export function durableChanges(world: WorkerWorld): number | null {
  return countIn((world as { readonly [DURABLE]?: unknown })[DURABLE]);
}

/** The count a DurableRef reads; null for anything that is not one. */
let countIn: (ref: unknown) => number | null = () => null;

/** The world's count of durable changes as its APIs carry it: frozen, as LifeRef is, and read only through durableChanges. */
class DurableRef {
  readonly #read: () => number;
  constructor(read: () => number) {
    this.#read = read;
    Object.freeze(this);
  }
  static {
    countIn = (ref) => (typeof ref === 'object' && ref !== null && #read in ref ? (ref as DurableRef).#read() : null);
  }
}
Object.freeze(DurableRef.prototype);
Object.freeze(DurableRef);

/** The life a LifeRef holds; undefined for anything that is not one. */
let lifeIn: (ref: unknown) => Life | undefined = () => undefined;

/**
 * An incarnation's life as its API carries it: in a private field, behind a brand check, in
 * a frozen class, so that a consumer that finds the symbol holds an object it can do nothing
 * with, and can change nothing another incarnation's signal depends on.
 */
class LifeRef {
  readonly #life: Life;
  constructor(life: Life) {
    this.#life = life;
    Object.freeze(this);
  }
  static {
    lifeIn = (ref) => (typeof ref === 'object' && ref !== null && #life in ref ? (ref as LifeRef).#life : undefined);
  }
}
Object.freeze(LifeRef.prototype);
Object.freeze(LifeRef);

/**
 * The signal of every incarnation's API, one getter for all. It finds its incarnation by the
 * ref under LIFE of the object it is read from, which the API itself, an object made from it
 * (Object.create) and a proxy that forwards every read all reach. A spread of the API reads
 * the signal as it copies. A wrapper that passes on only string keys (a proxy of an
 * allow-list, a copy of Object.keys) has no ref to reach: it reads the signal from the API.
 */
const SIGNAL: PropertyDescriptor = Object.freeze({
  get(this: { readonly [LIFE]?: unknown }): AbortSignal {
    const life = lifeIn(this[LIFE]);
    if (life === undefined) {
      throw new TypeError(
        'signal is read from the world an incarnation was given, or from an object that passes every read on to it (a spread, Object.create, a proxy that forwards symbols too); this one does not',
      );
    }
    return signalOf(life);
  },
  enumerable: true,
  configurable: true,
});

/** An incarnation's signal, made on first read; already aborted when it is read after the incarnation died. */
function signalOf(life: Life): AbortSignal {
  if (life.controller === null) {
    life.controller = new AbortController();
    if (!life.alive) life.controller.abort(ABORTED);
  }
  return life.controller.signal;
}

/** An event's id and version, read once into a ref of the world's own; null if they make none, or a getter threw. */
function readRef(value: unknown): EventRef | null {
  if (typeof value !== 'object' || value === null) return null;
  try {
    const ref = refOf(value as EventRef);
    return isRef(ref) ? ref : null;
  } catch {
    return null;
  }
}

function isRef(value: unknown): value is EventRef {
  const v = value as EventRef | null;
  return typeof v === 'object' && v !== null && typeof v.id === 'string' && Number.isInteger(v.version);
}

// The vocabulary is model/'s (model/api.ts): read as plain strings, since what is checked here is anything a consumer sent.
const RESUMES: readonly string[] = RESUME_KINDS;
const OPS: readonly string[] = STORE_OP_KINDS;
const EVENT_OPS: readonly string[] = EVENT_OP_KINDS;

function badRequest(request: unknown): string | null {
  const r = request as { resume?: { kind?: unknown }; limit?: unknown } | null;
  if (typeof r !== 'object' || r === null) return 'expects { resume, limit }';
  if (typeof r.resume !== 'object' || r.resume === null || !RESUMES.includes(r.resume.kind as string)) return `resume.kind must be one of ${RESUMES.join(', ')}`;
  // A key resume without a key is the natural first page of `{ key: watermark?.key }`.
  const key = (r.resume as { key?: unknown }).key;
  if ((r.resume.kind === 'key-gt' || r.resume.kind === 'key-gte') && !isKey(key)) return `resume.key must be an array of finite numbers for ${r.resume.kind}, got ${shown(key)}`;
  return null;
}

function badOps(ops: unknown): string | null {
  if (!Array.isArray(ops)) return 'expects an array of operations';
  for (const [i, op] of ops.entries()) {
    const o = op as { op?: unknown; event?: unknown; payload?: unknown; binding?: unknown } | null;
    if (typeof o !== 'object' || o === null || !OPS.includes(o.op as string)) return `ops[${i}].op must be one of ${OPS.join(', ')}`;
    if (EVENT_OPS.includes(o.op as string) && !isRef(o.event)) return `ops[${i}].event must be { id, version }`;
    if ((o.op === 'effect' || o.op === 'outbox') && typeof o.payload !== 'string') return `ops[${i}].payload must be a string`;
    if ((o.op === 'watermark' || o.op === 'anchor') && typeof o.binding !== 'string') return `ops[${i}].binding must be a string`;
  }
  return null;
}

/** An effect of a blackbox store, as an observed step records it. */
type Effect = ObservedStep['effects'][number];

/** What a blackbox store's effects must be, said first when they are not. */
const LOG_RULE = "A blackbox consumer's effects, as inspect() returns them, only grow: each inspection shows every effect shown before, unchanged (in any order; a duplicate perhaps fewer times), and any new ones.";
const LOG_CAUSE = 'Either the consumer lost or rewrote an effect it had made durable (a loss: what a later reader of its store would miss), or inspect() reads something other than its durable effects (a transaction not yet committed, say).';

function copyEffect(e: Effect): Effect {
  return { event: { id: e.event.id, version: e.event.version }, payload: e.payload };
}

function sameEffect(a: Effect, b: Effect): boolean {
  return a.event.id === b.event.id && a.event.version === b.event.version && a.payload === b.payload;
}

/** Whether `now` begins with `before`, effect for effect: the common case, an append-only log, costs no allocation. */
function sameOrder(before: readonly Effect[], now: readonly Effect[]): boolean {
  if (now.length < before.length) return false;
  for (let i = 0; i < before.length; i++) if (!sameEffect(before[i] as Effect, now[i] as Effect)) return false;
  return true;
}

/**
 * The effects an inspection shows that the one before did not: every effect shown before must
 * be there again, unchanged, though not necessarily in the same place (a store that orders
 * rows by a sequence drawn at insert shows a row committed late before later rows), and
 * perhaps fewer times (an at-least-once store that compacts its duplicates: the history holds
 * each shown already). Throws, naming an effect that is gone, when one is.
 */
function newEffects(before: readonly Effect[], now: readonly Effect[], step: number): { readonly fresh: readonly Effect[]; readonly inOrder: boolean } {
  if (sameOrder(before, now)) return { fresh: now.slice(before.length), inOrder: true };
  const key = (e: Effect): string => `${e.event.id}\u0000${e.event.version}\u0000${e.payload}`;
  const owed = new Map<string, number>();
  for (const e of before) owed.set(key(e), (owed.get(key(e)) ?? 0) + 1);
  const fresh: Effect[] = [];
  const shown = new Set<string>();
  for (const e of now) {
    const k = key(e);
    shown.add(k);
    const n = owed.get(k) ?? 0;
    if (n > 0) owed.set(k, n - 1);
    else fresh.push(e);
  }
  const gone = before.find((e) => !shown.has(key(e)));
  if (gone !== undefined) {
    throw new AdapterError(`${LOG_RULE} Its inspection after step ${step} no longer shows ${describeEffect(gone)}${now.length < before.length ? ` (it shows ${now.length} effect(s), where it showed ${before.length})` : ''}. ${LOG_CAUSE}`);
  }
  return { fresh, inOrder: false };
}

function describeEffect(e: Effect): string {
  return `${e.event.id} v${e.event.version} ${JSON.stringify(e.payload).slice(0, 80)}`;
}

function checkInspection(value: unknown): Inspection {
  const v = value as Partial<Inspection> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    ('watermark' in v || (typeof v.watermarks === 'object' && v.watermarks !== null && !Array.isArray(v.watermarks))) &&
    Array.isArray(v.effects) &&
    v.effects.every((e) => typeof e?.payload === 'string' && typeof e.event?.id === 'string' && Number.isInteger(e.event.version));
  if (!ok) throw new AdapterError(`inspect() must return { watermark (or watermarks by binding fingerprint), effects: [{ event: { id, version }, payload }] }, got ${JSON.stringify(value)?.slice(0, 200)}`);
  return v as Inspection;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
