import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { AnomalyKind } from '../../model/anomalies.js';
import type { DurableState, Page, Resume } from '../../model/history.js';
import type { RuleId } from '../../model/rules.js';
import type { Consumer, WorkerWorld } from '../consumer.js';
import { Incarnation } from './reference.js';

/**
 * Broken consumers, each the reference consumer with one real-world mistake. They are how
 * the harness proves its checks can fail: each must be caught with the anomaly it names.
 */
export interface Mutant {
  readonly name: string;
  readonly rule: RuleId;
  readonly expect: AnomalyKind;
  /** The real failure mechanism this models. */
  readonly description: string;
  readonly consumer: Consumer;
}

type IncarnationClass = new (world: WorkerWorld) => Incarnation;

function mutant(name: string, rule: RuleId, expect: AnomalyKind, description: string, Life: IncarnationClass): Mutant {
  return {
    name,
    rule,
    expect,
    description,
    consumer: { name, capabilities: { delivery: 'at-least-once' }, run: (world) => new Life(world).run() },
  };
}

/** Saves the next-page token as its progress and resumes from it after a restart. */
class TokenAsWatermark extends Incarnation {
  protected override resumeFrom(state: DurableState): Resume {
    const saved = state.watermark?.value;
    this.stored = saved ?? null;
    return typeof saved === 'string' ? { kind: 'token', token: saved } : { kind: 'start' };
  }
  protected override async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    for (const e of events) await this.apply(e);
    if (page.next !== null) {
      await this.world.commit([{ op: 'watermark', binding: this.world.fingerprint, value: page.next }]);
    }
    return true;
  }
}

/** Treats a fetched page as done: the watermark jumps to its last event even when one failed. */
class WatermarkToPageEnd extends Incarnation {
  protected override async handle(events: readonly SourceEvent[], resume: Resume, page: Page): Promise<boolean> {
    let ok = true;
    for (const e of events) {
      try {
        await this.apply(e);
      } catch {
        ok = false;
        break;
      }
    }
    const last = events.at(-1);
    if (last) await this.advance(positionOf(last), page.next);
    return ok;
  }
}

/** Writes the completion record first, then the effect: a crash between them loses the event. */
class CompletionBeforeEffect extends Incarnation {
  protected override async apply(e: SourceEvent): Promise<void> {
    await this.world.commit([{ op: 'complete', event: refOf(e) }]);
    await this.world.emit(refOf(e), e.payload);
  }
}

export const MUTANTS: readonly Mutant[] = [
  mutant('token-as-watermark', 'R8', 'token-as-watermark', 'stores the next-page token as the committed watermark and resumes from it', TokenAsWatermark),
  mutant('watermark-to-page-end', 'R7', 'premature-watermark', 'advances the watermark to the last event of every fetched page, past a failed event', WatermarkToPageEnd),
  mutant('completion-before-effect', 'R5', 'omission', 'records completion before the effect; a crash between them makes the replay skip the event', CompletionBeforeEffect),
];

export function findMutant(name: string): Mutant | undefined {
  return MUTANTS.find((m) => m.name === name);
}
