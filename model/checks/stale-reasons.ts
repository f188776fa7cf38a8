import type { Actor, Step } from '../history.js';
import { actorKey, type Facts, type Truth } from '../truth.js';

/**
 * R9, step 9 of the seed procedure: on a stale page, "restart from the durable replay anchor
 * or fail visibly". Which incarnations' last page request gave them that reason to fail: a
 * stale-token answer, for a token the source issued and then forgot, that the incarnation
 * came by honestly:
 *
 * - the source's stale page, fired at that very request, on a token never answered stale
 *   before;
 * - the `next` of the last page served to the incarnation (an iterator chain serves an
 *   expired token again after an empty batch);
 * - its durable replay anchor: for a whitebox consumer the anchor the store holds, written
 *   while its token was still good; for a blackbox one, whose anchor tidemark cannot see, the
 *   incarnation's first page request (where a restart from its anchor begins).
 *
 * Anything else is no reason: a token kept aside after it expired, written as the anchor
 * after it expired, or made up. A page served after the stale answer takes the reason away.
 */
export class StaleReasons {
  private readonly answeredStale = new Set<string>();
  /** The anchor the store holds (whitebox), and whether its token was still good when written. */
  private anchor: { readonly token: string; readonly good: boolean } | null = null;
  /** By incarnation: the token of the last page served to it. */
  private readonly lastNext = new Map<string, string | null>();
  private readonly reasons = new Set<string>();

  constructor(private readonly blackbox: boolean) {}

  see(step: Step, facts: Facts, truth: Truth): void {
    if (step.kind !== 'call') return;
    const { call } = step;
    if (call.kind === 'commit') {
      if (!facts.applied) return;
      for (const op of call.ops) if (op.op === 'anchor') this.anchor = op.token === null ? null : { token: op.token, good: !truth.tokenExpired(op.token) };
      return;
    }
    if (call.kind !== 'fetch') return;
    const who = actorKey(step.actor);
    const first = !this.lastNext.has(who);
    const { resume } = call.request;
    if (step.outcome.kind === 'error' && step.outcome.code === 'stale-token' && resume.kind === 'token') {
      const token = resume.token;
      const fresh = step.fault === 'stale' && !this.answeredStale.has(token);
      const continued = this.lastNext.get(who) === token;
      const anchored = this.blackbox ? first : this.anchor !== null && this.anchor.token === token && this.anchor.good;
      this.answeredStale.add(token);
      if (!this.lastNext.has(who)) this.lastNext.set(who, null);
      if (truth.tokenExpired(token) && (fresh || continued || anchored)) this.reasons.add(who);
      else this.reasons.delete(who);
      return;
    }
    this.reasons.delete(who);
    this.lastNext.set(who, step.outcome.kind === 'ok' && step.result?.kind === 'page' ? step.result.page.next : (this.lastNext.get(who) ?? null));
  }

  /** Whether the incarnation's last page request gave it a reason to fail visibly. */
  has(actor: Actor): boolean {
    return this.reasons.has(actorKey(actor));
  }
}
