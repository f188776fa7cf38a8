import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { AnomalyKind } from '../../model/anomalies.js';
import type { DurableState, Page, Resume } from '../../model/history.js';
import type { Position } from '../../model/order.js';
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
  /** Other anomalies the same mistake legitimately shows as, declared up front; usually none. */
  readonly also: readonly AnomalyKind[];
  /** The real failure mechanism this models. */
  readonly description: string;
  readonly consumer: Consumer;
}

type IncarnationClass = new (world: WorkerWorld) => Incarnation;

function mutant(name: string, rule: RuleId, expect: AnomalyKind | [AnomalyKind, ...AnomalyKind[]], description: string, Life: IncarnationClass): Mutant {
  const [first, ...also] = Array.isArray(expect) ? expect : [expect];
  return {
    name,
    rule,
    expect: first,
    also,
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
      await this.world.commit([{ op: 'watermark', binding: this.label, value: page.next }]);
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

/** Writes the watermark blind: no compare-and-set, no lease fence. A paused, stale worker overwrites newer progress. */
class BlindWatermarkWrite extends Incarnation {
  protected override async advance(to: Position, token: string | null): Promise<void> {
    const value = { key: [...to.key], id: to.id };
    await this.world.commit([
      { op: 'watermark', binding: this.label, value },
      { op: 'anchor', binding: this.label, token, watermark: value },
    ]);
    this.stored = value;
    this.watermark = value;
  }
}

/** Takes an empty page as proof the stream is exhausted, though it still carries a token. */
class EmptyPageAsEnd extends Incarnation {
  protected override async pass(): Promise<'caught-up' | 'unprovable' | 'retry'> {
    const state = await this.world.load();
    await this.relay(state.outbox);
    let resume = this.resumeFrom(state);
    for (;;) {
      const page = await this.fetch(resume);
      if (page.head !== null) this.head = Math.max(this.head ?? page.head, page.head);
      if (!(await this.handle(this.normalize(page), resume, page))) return 'retry';
      if (page.next === null || page.events.length === 0) return 'caught-up';
      resume = this.continueAfter(page);
    }
  }
}

/** Trusts every hole: ignores the source's contract, advances past events that can still change, claims caught-up anyway. */
class TrustsNumericHole extends Incarnation {
  protected override settled(): boolean {
    return true;
  }
  protected override async pass(): Promise<'caught-up' | 'unprovable' | 'retry'> {
    const end = await super.pass();
    return end === 'unprovable' ? 'caught-up' : end;
  }
}

/** Stores progress under one fixed name, not the binding: whatever binding wrote it is reused. */
class WatermarkAcrossBindings extends Incarnation {
  protected override get label(): string {
    return 'progress';
  }
}

/** Resumes with `key > last key` on a non-unique ordering field: events tied with the last one are skipped. */
class StrictKeyResume extends Incarnation {
  protected override resumeFrom(state: DurableState): Resume {
    const resume = super.resumeFrom(state);
    return this.watermark !== null && this.world.source.resumes.includes('key-gt') ? { kind: 'key-gt', key: this.watermark.key } : resume;
  }
  protected override continueAfter(page: Page): Resume {
    const last = page.events.at(-1);
    return last && this.world.source.resumes.includes('key-gt') ? { kind: 'key-gt', key: last.key } : super.continueAfter(page);
  }
}

export const MUTANTS: readonly Mutant[] = [
  mutant('token-as-watermark', 'R8', 'token-as-watermark', 'stores the next-page token as the committed watermark and resumes from it', TokenAsWatermark),
  mutant('watermark-to-page-end', 'R7', 'premature-watermark', 'advances the watermark to the last event of every fetched page, past a failed event', WatermarkToPageEnd),
  mutant('completion-before-effect', 'R5', ['omission', 'premature-watermark'], 'records completion before the effect; a crash between them makes the replay skip the event', CompletionBeforeEffect),
  mutant('blind-watermark-write', 'R6', 'stale-generation-commit', 'writes the watermark without compare-and-set or lease fence; a paused stale worker overwrites newer progress', BlindWatermarkWrite),
  mutant('empty-page-as-end', 'R9', 'omission', 'takes progress from an empty page: treats it as the end of the stream although it carries a token', EmptyPageAsEnd),
  mutant('trusts-numeric-hole', 'R10', ['omission', 'premature-watermark'], 'advances past positions a mutable source can still fill, and claims caught-up without a stability contract', TrustsNumericHole),
  mutant('watermark-across-bindings', 'R2', 'binding-confusion', 'resumes from the stored watermark even when another binding wrote it', WatermarkAcrossBindings),
  mutant('strict-key-resume', 'R1', 'omission', 'resumes with key > last key on a non-unique ordering field, with no id tie-break', StrictKeyResume),
];

export function findMutant(name: string): Mutant | undefined {
  return MUTANTS.find((m) => m.name === name);
}
