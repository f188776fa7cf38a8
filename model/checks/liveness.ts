import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import type { History, LifeStep, Step } from '../history.js';
import { formatRef } from '../event.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import { Changes } from './changes.js';
import { StaleReasons } from './stale-reasons.js';
import type { Checker } from './checker.js';

/**
 * Liveness (R9, R10): with faults off in the drain phase, the consumer catches up, or fails
 * visibly where the source cannot prove its holes. A run that cannot be judged at all (a
 * consumer that stopped calling and never returned, a history without a drain phase) is not
 * a liveness failure: it is `unknown`, with the reason in `ending`. So is a final caught-up
 * claim that could not be judged in full: one the source changed events under while the
 * claiming incarnation was alive (the world never does this in the drain; a history written
 * elsewhere may), where it leaves such an event unhandled.
 */
export class LivenessChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['liveness'];
  readonly anomalies: Anomaly[] = [];
  ending: string | null = null;
  private hung: LifeStep | null = null;
  private drained = 0;
  private last: Step | undefined;
  private readonly changes = new Changes();
  /** Which incarnations a stale page gave a reason to fail visibly (R9). */
  private readonly stale: StaleReasons;

  /** `blackbox`: the consumer keeps its own store, whose replay anchor tidemark cannot see. */
  constructor(blackbox = false) {
    this.stale = new StaleReasons(blackbox);
  }

  visit(step: Step, facts: Facts, truth: Truth): void {
    this.changes.see(step);
    this.stale.see(step, facts, truth);
    if (this.hung === null && step.kind === 'life' && step.event.kind === 'hung') this.hung = step;
    if (step.phase !== 'drain') return;
    this.drained++;
    this.last = step;
  }

  finish(truth: Truth, history: History): void {
    const { hung, drained, last } = this;
    if (hung) {
      const detail = hung.event.kind === 'hung' && hung.event.detail ? `: ${hung.event.detail}` : '';
      this.ending = `incarnation ${hung.actor.worker}#${hung.actor.incarnation} stopped calling the world and never returned (step ${hung.seq})${detail}`;
      return;
    }
    if (last === undefined) {
      this.ending = 'the history has no drain phase';
      return;
    }
    if (last.kind === 'call' && last.call.kind === 'claim' && last.applied) {
      const claim = last.call.claim;
      // The completeness checker judged this claim as it was made, against every event the
      // source held still for the claiming incarnation's life; nothing else is left to judge
      // unless the source changed an event under it that is still unhandled.
      if (claim.kind === 'caught-up') {
        for (const e of truth.unhandled()) {
          const at = this.changes.changedDuring(last.actor, e.id);
          if (at === null) continue;
          this.ending = `the caught-up claim at step ${last.seq} could not be judged in full: the source changed ${formatRef(e)} at step ${at}, while ${actorKey(last.actor)} was alive, and it was never handled`;
          return;
        }
        return;
      }
      const contract = history.header.contract.kind;
      // R9 (step 9 of the seed procedure) lets a consumer answered with a stale page fail
      // visibly, as it lets one restart from its replay anchor: in the drain a `stale` quirk
      // is the source's own behaviour, not a fault turned off (see StaleReasons).
      if (contract !== 'none' && !this.honestStop(truth, history) && !this.stale.has(last.actor)) {
        this.anomalies.push(anomaly('liveness', `the consumer failed visibly at step ${last.seq} ("${claim.reason}") although the ${contract} source proves its holes`, [], [last.seq]));
      }
      return;
    }
    // Caught up means delivered: an outbox entry still waiting for the sink is not an effect yet.
    const missing = truth.eligible().filter((e) => !truth.handled(e));
    this.anomalies.push(
      anomaly('liveness', `with faults off the consumer did not catch up within the drain budget (${drained} steps)`, missing.slice(0, 3).map((e) => ({ id: e.id, version: e.version })), [last.seq]),
    );
  }

  /**
   * A consumer that declares it stops for an operator when an effect is refused (its profile's
   * `refusals: 'fail-visibly'`, recorded in the header) fails honestly when it does exactly
   * that: it stopped at an eligible poison event whose effect was refused, with every event
   * ordered before it handled. What it committed on the way is judged as always.
   */
  private honestStop(truth: Truth, history: History): boolean {
    if (history.header.refusals !== 'fail-visibly') return false;
    const refused = new Set<string>();
    for (const s of history.steps) {
      if (s.kind !== 'call' || s.outcome.kind !== 'error' || s.outcome.code !== 'rejected') continue;
      if (s.call.kind === 'emit') refused.add(s.call.event.id);
      if (s.call.kind === 'commit') for (const op of s.call.ops) if (op.op === 'effect' || op.op === 'outbox') refused.add(op.event.id);
    }
    // It stopped at the refused event: everything ordered before it was handled.
    const poison = new Set(history.header.poison);
    for (const e of truth.eligible()) {
      if (poison.has(e.id) && refused.has(e.id) && !truth.handled(e)) return true;
      if (!truth.handled(e)) return false;
    }
    return false;
  }

  untested(): string | null {
    return this.ending;
  }
}
