import { anomaly, type Anomaly } from './anomalies.js';
import { isEligible } from './binding.js';
import { formatRef, positionOf, refKey, type EventRef, type SourceEvent } from './event.js';
import type { CallStep, History, LifeStep, Step } from './history.js';
import { comparePositions, formatPosition, isPosition, type Position } from './order.js';

/**
 * The oracle: history in, verdict out. It rebuilds ground truth from the header and the
 * recorded mutations, and judges every durable step against it. It shares no code with the
 * world or the reference consumer: eligibility, order and durability are worked out here
 * from the recorded facts alone.
 *
 * Cost: one pass over the steps. The gap-free frontier only moves forward between
 * mutations, so premature-watermark checks are amortised O(1) per commit; a mutation
 * re-sorts the eligible set (mutations are few).
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

class Judge {
  private readonly binding;
  private readonly truth = new Map<string, SourceEvent>();
  private readonly everPositions = new Set<string>();
  private eligible: SourceEvent[] = [];
  private frontier = 0;
  private readonly outcomes = new Set<string>();
  private readonly effectCounts = new Map<string, number>();
  private readonly served = new Set<string>();
  private readonly servedPayloads = new Map<string, Set<string>>();
  private lastWatermark: { position: Position; seq: number } | null = null;
  private readonly anomalies: Anomaly[] = [];
  private effects = 0;
  private commits = 0;
  private incarnations = 0;

  constructor(private readonly history: History) {
    this.binding = history.header.binding;
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
    if (this.anomalies.length > 0) return { verdict: { status: 'fail', anomalies: this.anomalies }, stats };
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
        return;
      case 'life':
        if (step.event.kind === 'start') this.incarnations++;
        return;
      case 'call':
        this.visitCall(step);
    }
  }

  private visitCall(step: CallStep): void {
    const { call } = step;
    if (call.kind === 'fetch' && step.result?.kind === 'page') {
      for (const e of step.result.page.events) this.serve(e);
      return;
    }
    if (!step.applied) return;
    if (call.kind === 'emit') {
      this.effect(step, { id: call.event.id, version: call.event.version }, call.payload);
    } else if (call.kind === 'commit') {
      this.commits++;
      // A transaction applies all at once: its effects count before its watermark.
      for (const op of call.ops) if (op.op === 'effect') this.effect(step, op.event, op.payload);
      for (const op of call.ops) if (op.op === 'watermark') this.watermark(step, op.value);
    }
  }

  private serve(e: SourceEvent): void {
    const key = refKey(e);
    this.served.add(key);
    let payloads = this.servedPayloads.get(e.id);
    if (!payloads) this.servedPayloads.set(e.id, (payloads = new Set()));
    payloads.add(e.payload);
  }

  private effect(step: CallStep, ref: EventRef, payload: string): void {
    this.effects++;
    const key = refKey(ref);
    if (!this.served.has(key)) {
      this.report('phantom-effect', `effect for ${formatRef(ref)} at step ${step.seq}, which the source never served under this binding`, [ref], [step.seq]);
    }
    const seen = this.effectCounts.get(key) ?? 0;
    this.effectCounts.set(key, seen + 1);
    this.outcomes.add(key);
    if (seen === 0) return;
    if (!(this.servedPayloads.get(ref.id)?.has(payload) ?? false)) {
      this.report('divergent-duplicate', `repeated effect for ${formatRef(ref)} at step ${step.seq} carries content no served version of ${ref.id} has`, [ref], [step.seq]);
    }
    if (this.history.header.delivery === 'exactly-once') {
      this.report('duplicate-effect', `effect number ${seen + 1} for ${formatRef(ref)} at step ${step.seq} from a consumer that claims exactly-once`, [ref], [step.seq]);
    }
  }

  private watermark(step: CallStep, value: unknown): void {
    if (!isPosition(value) || !this.everPositions.has(posKey(value))) {
      this.report('token-as-watermark', `step ${step.seq} committed the watermark ${JSON.stringify(value)}, which is not a position of the bound order`, [], [step.seq]);
      return;
    }
    const previous = this.lastWatermark;
    if (previous !== null && comparePositions(value, previous.position) < 0) {
      this.report(
        'watermark-regression',
        `step ${step.seq} committed ${formatPosition(value)}, below ${formatPosition(previous.position)} committed at step ${previous.seq}`,
        [],
        [previous.seq, step.seq],
      );
    }
    this.lastWatermark = { position: value, seq: step.seq };
    const gap = this.firstWithoutOutcome();
    if (gap !== undefined && comparePositions(positionOf(gap), value) <= 0) {
      this.report(
        'premature-watermark',
        `step ${step.seq} committed the watermark ${formatPosition(value)} while ${formatRef(gap)} at ${formatPosition(positionOf(gap))} had no durable outcome`,
        [{ id: gap.id, version: gap.version }],
        [step.seq],
      );
    }
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
  private judgeEnding(): string | null {
    const drain = this.history.steps.filter((s) => s.phase === 'drain');
    const hung = this.history.steps.find((s): s is LifeStep => s.kind === 'life' && s.event.kind === 'hung');
    if (hung) return `incarnation ${hung.actor.worker}#${hung.actor.incarnation} stopped calling the world and never returned (step ${hung.seq})`;
    const last = drain.at(-1);
    if (last === undefined) return 'the history has no drain phase';
    if (last.kind === 'call' && last.call.kind === 'claim' && last.applied) {
      const claim = last.call.claim;
      if (claim.kind === 'caught-up') {
        const missing = this.eligible.filter((e) => !this.outcomes.has(refKey(e)));
        for (const e of missing) {
          this.report('omission', `${formatRef(e)} at ${formatPosition(positionOf(e))} is eligible but has no durable outcome, and the consumer claimed caught-up at step ${last.seq}`, [{ id: e.id, version: e.version }], [last.seq]);
        }
        return null;
      }
      if (this.history.header.contract.kind !== 'none') {
        this.report('liveness', `the consumer failed visibly at step ${last.seq} ("${claim.reason}") although the ${this.history.header.contract.kind} source proves its holes`, [], [last.seq]);
      }
      return null;
    }
    const missing = this.eligible.filter((e) => !this.outcomes.has(refKey(e))).slice(0, 3);
    this.report('liveness', `with faults off the consumer did not catch up within the drain budget (${drain.length} steps)`, missing.map((e) => ({ id: e.id, version: e.version })), [last.seq]);
    return null;
  }

  private report(...args: Parameters<typeof anomaly>): void {
    this.anomalies.push(anomaly(...args));
  }
}
