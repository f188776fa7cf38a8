import type { Actor, Step } from '../history.js';
import { actorKey } from '../truth.js';

/**
 * What a claim could have seen: when each incarnation was born, and when the source last
 * changed each event. An event the source changed while an incarnation was alive may have
 * changed after it last looked; an event it did not change was there, as it is, for the
 * incarnation's whole life. Each checker that needs this keeps its own.
 */
export class Changes {
  private readonly born = new Map<string, number>();
  private readonly changed = new Map<string, number>();

  see(step: Step): void {
    if (step.kind === 'mutation') this.changed.set(step.event.id, step.seq);
    else if (step.kind === 'life' && step.event.kind === 'start') this.born.set(actorKey(step.actor), step.seq);
  }

  /**
   * The step at which the source changed `id` during the life of `actor`, or null when it
   * did not. An incarnation whose birth the history does not show was alive from the start.
   */
  changedDuring(actor: Actor, id: string): number | null {
    const at = this.changed.get(id);
    if (at === undefined) return null;
    return at > (this.born.get(actorKey(actor)) ?? -1) ? at : null;
  }
}
