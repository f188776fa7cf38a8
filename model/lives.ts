import type { Actor, CallStep, LifeStep, Phase } from './history.js';

/**
 * Which incarnations are alive, replayed from the life steps and the calls' endings: the
 * world runs workers w1 to wN in the adversity phase and w1 alone in the drain (the
 * header's `workers`); each worker's incarnations are numbered from 1, a new one born only
 * when the one before it has ended (it returned, threw, hung, ran out of budget, or crashed
 * at a call); a rebind and the end of the adversity phase stop every incarnation. A step by
 * an incarnation that is not alive then is the world contradicting itself: lease
 * generations, changes made during an incarnation and caught-up claims are all judged per
 * incarnation, so an actor the world never started must not act.
 */
export class Lives {
  /** Each worker's newest incarnation. */
  private readonly newest = new Map<string, number>();
  /**
   * The incarnation alive of each worker that has one. A worker has one at most: a start
   * while another lives is refused below, so asking by worker is asking by incarnation, and
   * a call's check builds no `worker#incarnation` string.
   */
  private readonly alive = new Map<string, number>();
  private phase: Phase = 'adversity';
  /** The claim that ended this phase, once made: after it the phase has no step (the world stops every incarnation at once). */
  private claimedAt: number | null = null;

  constructor(private readonly workers: number) {}

  /** Moves to the step's phase; returns what is wrong, or null. Entering the drain stops every incarnation. */
  enter(phase: Phase): string | null {
    if (phase === this.phase) return null;
    if (phase === 'adversity') return 'a step of the adversity phase after the drain began';
    this.phase = phase;
    this.alive.clear();
    this.claimedAt = null;
    return null;
  }

  /**
   * A claim ends its phase: the world runs the claim, stops every incarnation and ends the
   * phase, recording nothing more in it. A step of the phase after it is the world
   * contradicting itself (the claim was judged against a phase that went on).
   */
  claimed(seq: number): void {
    this.claimedAt = seq;
    this.alive.clear();
  }

  /** What is wrong with a step that is no incarnation's call or life (`what` it did) at this point, or null: after the claim, any is. */
  other(what: string): string | null {
    return this.afterClaim(what);
  }

  /** What is wrong with any step of the phase once its claim was made, or null. */
  private afterClaim(what: string): string | null {
    return this.claimedAt === null ? null : `${what} after the claim at step ${this.claimedAt}, which ended the ${this.phase} phase`;
  }

  /** A life step; returns what is wrong with it, or null. */
  life(step: LifeStep): string | null {
    const { worker, incarnation } = step.actor;
    const who = key(step.actor);
    const late = this.afterClaim(`${who} ${step.event.kind === 'start' ? 'was started' : `ended (${step.event.kind})`}`);
    if (late !== null) return late;
    if (step.event.kind === 'start') {
      if (!this.runs(worker)) return `${who} was started, but the ${this.phase} phase runs ${this.phase === 'drain' ? 'w1 alone' : `workers w1 to w${this.workers}`}`;
      const next = (this.newest.get(worker) ?? 0) + 1;
      if (incarnation !== next) return `${who} was started, but ${worker}'s next incarnation is #${next}`;
      const living = this.alive.get(worker);
      if (living !== undefined) return `${who} was started while ${worker}#${living} was still alive`;
      this.newest.set(worker, incarnation);
      this.alive.set(worker, incarnation);
      return null;
    }
    if (!this.end(step.actor)) return `${who} ended (${step.event.kind}), but it was not alive`;
    return null;
  }

  /** A call step; returns what is wrong with it, or null. */
  call(step: CallStep): string | null {
    if (this.claimedAt !== null) return this.afterClaim(`${key(step.actor)} made a call (${step.call.kind})`);
    if (this.alive.get(step.actor.worker) !== step.actor.incarnation) return `${key(step.actor)} made a call (${step.call.kind}), but it was not alive: the world never started it, or it had ended`;
    return null;
  }

  /** Ends the incarnation if it is alive; says whether it was. */
  private end(actor: Actor): boolean {
    if (this.alive.get(actor.worker) !== actor.incarnation) return false;
    this.alive.delete(actor.worker);
    return true;
  }

  /**
   * A crash the plan put at the incarnation's call ends it: the world kills the caller
   * whether the call ran, failed (a crash after a refused call is still a crash), or never
   * started. Ground truth says which call that is, not the recorded outcome.
   */
  kill(actor: Actor): void {
    this.end(actor);
  }

  /** A rebind stops every incarnation. */
  stopAll(): void {
    this.alive.clear();
  }

  private runs(worker: string): boolean {
    if (this.phase === 'drain') return worker === 'w1';
    const m = /^w([1-9]\d*)$/.exec(worker);
    return m !== null && Number(m[1]) <= this.workers;
  }
}

const key = (a: Actor): string => `${a.worker}#${a.incarnation}`;
