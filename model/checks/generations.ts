import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { canonicalJson } from '../binding.js';
import type { Step, StoreOp } from '../history.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

type Slot = Truth['slot'];

/**
 * Competing workers (R6): a watermark write takes effect only from the newest lease
 * generation, unless a compare-and-set against the very watermark it overwrote guarded it.
 * The generation a worker holds is the one it heard granted; the newest is the one ground
 * truth replayed, whether or not its holder ever heard. A write from the incarnation the
 * newest generation was granted to is never stale: nobody holds a newer one.
 *
 * Two writes are judged by what they overwrote, since no guard of theirs can be seen: a
 * blackbox consumer's (its store is its own, and an ownership epoch or a compare-and-set
 * there is invisible), and a compare-and-set under a binding the stored watermark is not of
 * (after a rebind: the store answers "none" for the new binding, and the write replaces the
 * old binding's watermark). Either is stale only when it overwrote a watermark written from
 * a newer generation than the writer's.
 */
export class GenerationChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['stale-generation-commit'];
  readonly anomalies: Anomaly[] = [];
  private contested = 0;
  /** The store's watermark slot as ground truth held it before the step being visited. */
  private slot: Slot = null;
  /** The generation the last writer of a watermark was granted, by commit or in its own store (0: nobody wrote one, or only before any lease). */
  private slotGeneration = 0;

  visit(step: Step, facts: Facts, truth: Truth): void {
    const before = this.slot;
    this.slot = truth.slot;
    if ((step.kind !== 'call' && step.kind !== 'observed') || facts.watermarks.length === 0) return;
    const held = truth.generationOf(step.actor);
    // What the write overwrote was written from no newer generation than the writer's.
    const over = this.slotGeneration;
    const nothingNewer = over <= held;
    // The generation it was granted, which a writer that heard only a timeout may not know it holds.
    this.slotGeneration = truth.holdsNewest(step.actor) ? truth.generation : held;
    // Decided only for a stale writer: most commits come from the newest generation.
    const guarded = (): boolean => (step.kind === 'observed' ? nothingNewer : step.call.kind === 'commit' && comparedWithWhatItOverwrote(step.call.ops, before, nothingNewer, truth.bound));
    for (const value of facts.watermarks) {
      if (step.kind === 'observed' && value === null) continue;
      if (truth.generation >= 2) this.contested++;
      // A writer the newest generation was granted to overwrites nothing newer, even when its
      // request timed out and it still believes it holds an older one.
      if (held < truth.generation && !truth.holdsNewest(step.actor) && !guarded()) {
        this.anomalies.push(
          anomaly('stale-generation-commit', `step ${step.seq} committed a watermark from ${actorKey(step.actor)}, generation ${held}, after generation ${truth.generation} was granted${nothingNewer ? '' : `, over the watermark written from generation ${over}`}`, [], [step.seq]),
        );
      }
    }
  }

  finish(): void {}

  untested(): string | null {
    return this.contested === 0 && this.anomalies.length === 0 ? 'no watermark was written after a second lease generation was granted' : null;
  }
}

/**
 * A compare-and-set that held is a guard of its own (R6: "a compare-and-set, a lease
 * generation, or an ownership epoch"), but only when it compared against the watermark it
 * overwrote: then nobody had moved that watermark since it was read, and the writer's lapsed
 * lease overwrote nothing newer. One on another label compared against a watermark nobody
 * wrote under it (the store answers null for it) and overwrote the one that was there: a
 * guard only when it wrote under the binding now read over an earlier binding's watermark
 * (after a rebind) written from no newer generation (`nothingNewer`); under any other label
 * it compared with nothing that was there.
 */
function comparedWithWhatItOverwrote(ops: readonly StoreOp[], before: Slot, nothingNewer: boolean, bound: string): boolean {
  let there: { readonly binding: string; readonly value: unknown } | null = before;
  let any = false;
  for (const op of ops) {
    if (op.op !== 'watermark') continue;
    any = true;
    if (!('expect' in op)) return false;
    if (there !== null && there.binding !== op.binding) {
      // Only under the binding now read, over another binding's watermark: a rebind's.
      if (!(nothingNewer && there === before && op.binding === bound && (op.expect ?? null) === null)) return false;
    } else if (canonicalJson(there?.value ?? null) !== canonicalJson(op.expect ?? null)) return false;
    there = { binding: op.binding, value: op.value };
  }
  return any;
}
