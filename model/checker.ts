import { ANOMALY_KINDS, anomaly, type Anomaly } from './anomalies.js';
import { fingerprint, isEligible, type Binding } from './binding.js';
import { formatRef, positionOf, refKey, type EventRef, type SourceEvent } from './event.js';
import type { CallStep, History, LifeStep, ObservedStep, Step } from './history.js';
import { comparePositions, formatPosition, isPosition, type Position } from './order.js';

/**
 * The oracle: history in, verdict out. It rebuilds ground truth from the header and the
 * recorded mutations and rebinds, and judges every durable step against it. It shares no
 * code with the world or the reference consumer: eligibility, order, durability, lease
 * generations and bindings are worked out here from the recorded facts alone.
 *
 * Cost: one pass over the steps. The gap-free frontier only moves forward between
 * mutations, so premature-watermark checks are amortised O(1) per commit; a mutation or a
 * rebind re-sorts the eligible set (they are few).
 */
export type Verdict =
  | { readonly status: 'pass'; readonly anomalies: readonly [] }
  | { readonly status: 'fail'; readonly anomalies: readonly Anomaly[] }
  | { readonly status: 'unknown'; readonly anomalies: readonly []; readonly reason: string };

export interface CheckStats {
  readonly steps: number;
  readonly eligible: number;
  readonly effects: number;
  readonly commits: number;
  readonly incarnations: number;
}

export interface CheckResult {
  readonly verdict: Verdict;
  readonly stats: CheckStats;
}

export function check(history: History): CheckResult {
  return new Judge(history).run();
}

const posKey = (p: Position): string => `${p.key.join(',')}#${p.id}`;
const actorKey = (step: CallStep | ObservedStep): string => `${step.actor.worker}#${step.actor.incarnation}`;

class Judge {
  private binding: Binding;
  private bound: string;
  private readonly truth = new Map<string, SourceEvent>();
  private readonly everPositions = new Set<string>();
  private eligible: SourceEvent[] = [];
  private frontier = 0;
  /** Event versions with a durable outcome: an effect, or a durable outbox handoff (R5). */
  private readonly outcomes = new Set<string>();
  /** Event versions whose effect actually happened (sink or transactional effect). */
  private readonly delivered = new Map<string, number>();
  /** Poison event versions durably dead-lettered: handled, as far as handling them goes. */
  private readonly parked = new Set<string>();
  /** Event versions served under each binding fingerprint. */
  private readonly served = new Map<string, Set<string>>();
  private readonly servedPayloads = new Map<string, Set<string>>();
  /** The binding under which each outbox entry was handed off: its later delivery acts for that binding. */
  private readonly handoffs = new Map<string, string>();
  private readonly lastWatermark = new Map<string, { position: Position; seq: number }>();
  /** The store's watermark slot as it truly is, with the binding of the worker that wrote it. */
  private slot: { value: unknown; writer: string; seq: number } | null = null;
  /** Watermarks of another binding that a worker of the current binding loaded. */
  private foreign: { position: Position; seq: number; actor: string }[] = [];
  private newestGeneration = 0;
  /** When each incarnation started, and when the source last changed: a claim is judged when nothing changed in between. */
  private readonly born = new Map<string, number>();
  private lastMutation = -1;
  /** Events already reported as omitted, so that a later claim does not report them again. */
  private readonly omitted = new Set<string>();
  private readonly generations = new Map<string, number>();
  private readonly anomalies: Anomaly[] = [];
  private readonly poison: ReadonlySet<string>;
  private effects = 0;
  private commits = 0;
  private incarnations = 0;

  constructor(private readonly history: History) {
    this.binding = history.header.binding;
    this.bound = fingerprint(this.binding);
    this.poison = new Set(history.header.poison);
    for (const e of history.header.initial) this.learn(e);
    this.resort();
  }

  run(): CheckResult {
    for (const step of this.history.steps) this.visit(step);
    const ending = this.judgeEnding();
    const stats: CheckStats = {
      steps: this.history.steps.length,
      eligible: this.eligible.length,
      effects: this.effects,
      commits: this.commits,
      incarnations: this.incarnations,
    };
    if (this.anomalies.length > 0) {
      // The most specific diagnosis leads: "a stale generation committed" explains the
      // omission it caused better than the omission explains itself. The sort is stable, so
      // within a kind the earliest evidence stays first.
      const ranked = [...this.anomalies].sort((a, b) => ANOMALY_KINDS.indexOf(a.kind) - ANOMALY_KINDS.indexOf(b.kind));
      return { verdict: { status: 'fail', anomalies: ranked }, stats };
    }
    if (ending !== null) return { verdict: { status: 'unknown', anomalies: [], reason: ending }, stats };
    return { verdict: { status: 'pass', anomalies: [] }, stats };
  }

  private learn(e: SourceEvent): void {
    this.truth.set(e.id, e);
    this.everPositions.add(posKey(positionOf(e)));
  }

  /** Rebuilds the eligible set in the stable order and restarts the frontier. */
  private resort(): void {
    this.eligible = [...this.truth.values()]
      .filter((e) => isEligible(this.binding, e))
      .sort((a, b) => comparePositions(positionOf(a), positionOf(b)));
    this.frontier = 0;
  }

  private visit(step: Step): void {
    switch (step.kind) {
      case 'mutation':
        this.learn(step.event);
        this.resort();
        this.lastMutation = step.seq;
        return;
      case 'rebind':
        this.binding = step.binding;
        this.bound = fingerprint(step.binding);
        this.foreign = [];
        this.resort();
        return;
      case 'life':
        if (step.event.kind === 'start') {
          this.incarnations++;
          this.born.set(`${step.actor.worker}#${step.actor.incarnation}`, step.seq);
        }
        return;
      case 'call':
        this.visitCall(step);
        return;
      case 'observed':
        for (const e of step.effects) this.effect(step, e.event, e.payload);
        if (step.watermark) this.watermark(step, step.watermark.value);
    }
  }

  private visitCall(step: CallStep): void {
    const { call, result } = step;
    const answered = step.outcome.kind === 'ok';
    if (call.kind === 'fetch' && answered && result?.kind === 'page') {
      for (const e of result.page.events) this.serve(e);
      return;
    }
    if (call.kind === 'load' && answered && result?.kind === 'state') {
      this.noteForeign(step);
      return;
    }
    if (!step.applied) return;
    if (call.kind === 'claim' && call.claim.kind === 'caught-up') {
      this.judgeClaim(step);
    } else if (call.kind === 'lease' && result?.kind === 'generation') {
      this.newestGeneration = Math.max(this.newestGeneration, result.generation);
      if (answered) this.generations.set(actorKey(step), result.generation);
    } else if (call.kind === 'emit') {
      this.effect(step, { id: call.event.id, version: call.event.version }, call.payload);
    } else if (call.kind === 'commit') {
      this.commits++;
      // A transaction applies all at once: its outcomes count before its watermark.
      for (const op of call.ops) {
        if (op.op === 'effect') this.effect(step, op.event, op.payload);
        if (op.op === 'outbox') {
          this.outcomes.add(refKey(op.event));
          this.handoffs.set(refKey(op.event), this.bound);
        }
        // Parking is an outcome only for what truly cannot be handled.
        if (op.op === 'dead-letter' && this.poison.has(op.event.id)) {
          this.outcomes.add(refKey(op.event));
          this.parked.add(refKey(op.event));
        }
      }
      for (const op of call.ops) if (op.op === 'watermark') this.watermark(step, op.value);
    }
  }

  private serve(e: SourceEvent): void {
    let served = this.served.get(this.bound);
    if (!served) this.served.set(this.bound, (served = new Set()));
    served.add(refKey(e));
    let payloads = this.servedPayloads.get(refKey(e));
    if (!payloads) this.servedPayloads.set(refKey(e), (payloads = new Set()));
    payloads.add(e.payload);
  }

  /** A worker loaded a watermark that a worker of another binding wrote: remember where it points. */
  private noteForeign(step: CallStep): void {
    const slot = this.slot;
    if (slot === null || slot.writer === this.bound || !isPosition(slot.value)) return;
    this.foreign.push({ position: slot.value, seq: step.seq, actor: actorKey(step) });
  }

  private effect(step: CallStep | ObservedStep, ref: EventRef, payload: string): void {
    this.effects++;
    const key = refKey(ref);
    const on = this.handoffs.get(key) ?? this.bound;
    if (!(this.served.get(on)?.has(key) ?? false)) {
      this.report('phantom-effect', `effect for ${formatRef(ref)} at step ${step.seq}, which the source never served under this binding`, [ref], [step.seq]);
    }
    const seen = this.delivered.get(key) ?? 0;
    this.delivered.set(key, seen + 1);
    this.outcomes.add(key);
    if (seen === 0) return;
    if (!(this.servedPayloads.get(key)?.has(payload) ?? false)) {
      this.report('divergent-duplicate', `repeated effect for ${formatRef(ref)} at step ${step.seq} carries content the source never served for it`, [ref], [step.seq]);
    }
    if (this.history.header.delivery === 'exactly-once') {
      this.report('duplicate-effect', `effect number ${seen + 1} for ${formatRef(ref)} at step ${step.seq} from a consumer that claims exactly-once`, [ref], [step.seq]);
    }
  }

  private watermark(step: CallStep | ObservedStep, value: unknown): void {
    this.slot = { value, writer: this.bound, seq: step.seq };
    const generation = this.generations.get(actorKey(step)) ?? 0;
    if (generation < this.newestGeneration) {
      this.report(
        'stale-generation-commit',
        `step ${step.seq} committed a watermark from ${actorKey(step)}, generation ${generation}, after generation ${this.newestGeneration} was granted`,
        [],
        [step.seq],
      );
    }
    if (!isPosition(value) || !this.everPositions.has(posKey(value))) {
      this.report('token-as-watermark', `step ${step.seq} committed the watermark ${JSON.stringify(value)}, which is not a position of the bound order`, [], [step.seq]);
      return;
    }
    const previous = this.lastWatermark.get(this.bound);
    if (previous !== undefined && comparePositions(value, previous.position) < 0) {
      this.report(
        'watermark-regression',
        `step ${step.seq} committed ${formatPosition(value)}, below ${formatPosition(previous.position)} committed at step ${previous.seq}`,
        [],
        [previous.seq, step.seq],
      );
    }
    this.lastWatermark.set(this.bound, { position: value, seq: step.seq });
    const gap = this.firstWithoutOutcome();
    if (gap !== undefined && comparePositions(positionOf(gap), value) <= 0) {
      this.report(
        'premature-watermark',
        `step ${step.seq} committed the watermark ${formatPosition(value)} while ${formatRef(gap)} at ${formatPosition(positionOf(gap))} had no durable outcome`,
        [{ id: gap.id, version: gap.version }],
        [step.seq],
      );
      this.confusion(gap, step.seq, actorKey(step));
    }
  }

  /**
   * A skipped event behind a watermark this binding took from another binding: that is why
   * it was skipped. For a commit, only the committing incarnation's own loads count; for a
   * claim, any load under this binding does (the skip may have happened lives earlier).
   */
  private confusion(e: SourceEvent, seq: number, actor: string | null): void {
    const cause = this.foreign.find((f) => (actor === null || f.actor === actor) && comparePositions(positionOf(e), f.position) <= 0);
    if (!cause) return;
    this.report(
      'binding-confusion',
      `${formatRef(e)} was skipped behind ${formatPosition(cause.position)}, a watermark written under another binding and loaded at step ${cause.seq}`,
      [{ id: e.id, version: e.version }],
      [cause.seq, seq],
    );
  }

  /** The first eligible event, in the stable order, that has no durable outcome yet. */
  private firstWithoutOutcome(): SourceEvent | undefined {
    while (this.frontier < this.eligible.length && this.outcomes.has(refKey(this.eligible[this.frontier] as SourceEvent))) {
      this.frontier++;
    }
    return this.eligible[this.frontier];
  }

  /**
   * The final check after the drain phase: omission if the consumer claimed it was caught
   * up, liveness if it could not finish with faults off. Returns a reason when the run
   * cannot be judged at all.
   */
  /**
   * A caught-up claim says every eligible event was handled. It is judged whenever the
   * source held still for the claiming incarnation's whole life: then "caught up" has one
   * meaning. A claim made while the source was changing under it is judged only by the
   * drain phase's final claim, where the source holds still. Handled means an effect (or,
   * for a poison event, a dead letter): an outbox entry never delivered is not handled yet.
   */
  private judgeClaim(step: CallStep): void {
    if ((this.born.get(actorKey(step)) ?? -1) < this.lastMutation) return;
    for (const e of this.eligible) {
      const key = refKey(e);
      if (this.delivered.has(key) || this.parked.has(key) || this.omitted.has(key)) continue;
      this.omitted.add(key);
      this.report('omission', `${formatRef(e)} at ${formatPosition(positionOf(e))} is eligible but was never handled, and the consumer claimed caught-up at step ${step.seq}`, [{ id: e.id, version: e.version }], [step.seq]);
      this.confusion(e, step.seq, null);
    }
  }

  private judgeEnding(): string | null {
    const drain = this.history.steps.filter((s) => s.phase === 'drain');
    const hung = this.history.steps.find((s): s is LifeStep => s.kind === 'life' && s.event.kind === 'hung');
    if (hung) {
      const detail = hung.event.kind === 'hung' && hung.event.detail ? `: ${hung.event.detail}` : '';
      return `incarnation ${hung.actor.worker}#${hung.actor.incarnation} stopped calling the world and never returned (step ${hung.seq})${detail}`;
    }
    const last = drain.at(-1);
    if (last === undefined) return 'the history has no drain phase';
    // Caught up means delivered: an outbox entry still waiting for the sink is not an effect yet.
    const missing = this.eligible.filter((e) => !this.delivered.has(refKey(e)) && !this.parked.has(refKey(e)));
    if (last.kind === 'call' && last.call.kind === 'claim' && last.applied) {
      const claim = last.call.claim;
      // The drain phase's claim was judged as it was made: nothing changes in the drain.
      if (claim.kind === 'caught-up') return null;
      if (this.history.header.contract.kind !== 'none') {
        this.report('liveness', `the consumer failed visibly at step ${last.seq} ("${claim.reason}") although the ${this.history.header.contract.kind} source proves its holes`, [], [last.seq]);
      }
      return null;
    }
    this.report('liveness', `with faults off the consumer did not catch up within the drain budget (${drain.length} steps)`, missing.slice(0, 3).map((e) => ({ id: e.id, version: e.version })), [last.seq]);
    return null;
  }

  private report(...args: Parameters<typeof anomaly>): void {
    this.anomalies.push(anomaly(...args));
  }
}
