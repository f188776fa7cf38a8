import fc from 'fast-check';
import { positionOf, refKey, type SourceEvent } from '../../model/event.js';
import type { CallStep, History } from '../../model/history.js';
import { compareKeys, comparePositions } from '../../model/order.js';
import { ADVERSITY, cellName, cellsFor, type Adversity, type Cell } from '../../scenarios/adversity.js';
import { planArb, type PlanOptions } from '../../scenarios/arbitraries.js';
import { CALL_FAULTS } from '../../scenarios/plan.js';
import { worldOptions } from '../../scenarios/profiles.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute } from '../run/execute.js';

/**
 * The adversity that real sources show (scenarios/adversity.ts names it), as it actually
 * happened in an executed history, not as a plan intended it: a fault planned at a call
 * never made did not happen.
 *
 * - `tie-at-newest-key`: under `insertion-stable`, a change landed at the key of the newest
 *   position the source held, with an id after it: a new row with the newest row's
 *   timestamp, the classic boundary case of incremental syncs.
 * - `repeated-delivery-faults`: one event version's delivery (its `emit`, or a commit with
 *   its `effect` or `outbox`) failed at least twice.
 * - `lease-retake`: an incarnation held generation g, another was granted a newer one, and
 *   the first took the lease back (a third, newer generation), having made calls in
 *   between: the stale holder's delayed work.
 * - `in-place-flip`: a change flipped an event's filter attribute as a new version at the
 *   same position.
 * - `moved-version`: a change gave an event a new version at a new position.
 * - `newest-first-error`: in a newest-first source, a fetch by token (a page below the
 *   newest) failed or crashed its worker.
 * - `checkpoint-crash`: a worker crashed at a commit that writes the watermark.
 * - `between-checkpoints`: a worker crashed after a checkpoint had taken effect and after
 *   at least one effect since the last one: work the next incarnation must replay.
 */
export const CENSUS = ADVERSITY;
export type CensusItem = Adversity;

const CALL_FAULT_KINDS: readonly string[] = CALL_FAULTS;
const CRASHES: readonly string[] = ['crash-before', 'crash-after'];

/** Which census items one history shows, and how deep into uncheckpointed work its deepest crash struck. */
export interface Reached {
  readonly items: Set<CensusItem>;
  /** The most effects made since the last checkpoint when a worker crashed between checkpoints; 0 when none did. */
  readonly depth: number;
}

/** Which of the census items this history shows. */
export function adversityIn(history: History): Set<CensusItem> {
  return reachedIn(history).items;
}

export function reachedIn(history: History): Reached {
  const found = new Set<CensusItem>();
  const held = new Map<string, SourceEvent>(history.header.initial.map((e) => [e.id, e]));
  // The stable order's newest event, kept as changes arrive (a change only ever adds or replaces one).
  let top: SourceEvent | undefined;
  for (const e of held.values()) if (top === undefined || comparePositions(positionOf(e), positionOf(top)) > 0) top = e;
  const failedDeliveries = new Map<string, number>();
  /** Per incarnation: the generations it heard, and the seq of its first call after each. */
  const heard = new Map<string, { generation: number; seq: number }[]>();
  /** Every grant, in order: who, which generation, at which step. */
  const grants: { actor: string; generation: number; seq: number }[] = [];
  const callsBy = new Map<string, number[]>();
  const newestFirst = history.header.order === 'newest-first';
  let checkpoints = 0;
  let sinceCheckpoint = 0;
  let depth = 0;
  for (const step of history.steps) {
    if (step.kind === 'mutation') {
      const before = held.get(step.event.id);
      if (history.header.contract.kind === 'insertion-stable' && top !== undefined && top.id !== step.event.id && compareKeys(step.event.key, top.key) === 0 && step.event.id > top.id) {
        found.add('tie-at-newest-key');
      }
      if (before !== undefined && step.mutation !== 'insert') found.add(compareKeys(before.key, step.event.key) === 0 ? 'in-place-flip' : 'moved-version');
      held.set(step.event.id, step.event);
      if (top === undefined || comparePositions(positionOf(step.event), positionOf(top)) > 0) top = step.event;
      else if (top.id === step.event.id) top = [...held.values()].reduce<SourceEvent | undefined>((m, e) => (m === undefined || comparePositions(positionOf(e), positionOf(m)) > 0 ? e : m), undefined);
      continue;
    }
    if (step.kind !== 'call') continue;
    const actor = `${step.actor.worker}#${step.actor.incarnation}`;
    const calls = callsBy.get(actor);
    if (calls === undefined) callsBy.set(actor, [step.seq]);
    else calls.push(step.seq);
    const { call } = step;
    const checkpoint = call.kind === 'commit' && call.ops.some((op) => op.op === 'watermark');
    if (step.fault !== undefined && CALL_FAULT_KINDS.includes(step.fault)) {
      for (const ref of deliveries(step)) {
        const n = (failedDeliveries.get(ref) ?? 0) + 1;
        failedDeliveries.set(ref, n);
        if (n >= 2) found.add('repeated-delivery-faults');
      }
      if (newestFirst && call.kind === 'fetch' && call.request.resume.kind === 'token') found.add('newest-first-error');
      if (CRASHES.includes(step.fault)) {
        if (checkpoint) found.add('checkpoint-crash');
        // A crash after its call took effect counts that call's effects as made before it.
        const made = sinceCheckpoint + (step.fault === 'crash-after' && step.applied ? deliveries(step).length : 0);
        if (checkpoints > 0 && made > 0 && !(checkpoint && step.applied)) {
          found.add('between-checkpoints');
          depth = Math.max(depth, made);
        }
      }
    }
    if (step.applied) {
      if (checkpoint) {
        checkpoints++;
        sinceCheckpoint = 0;
      } else sinceCheckpoint += deliveries(step).length;
    }
    if (call.kind === 'lease' && step.applied && step.result?.kind === 'generation') {
      const generation = step.result.generation;
      grants.push({ actor, generation, seq: step.seq });
      if (step.outcome.kind === 'ok') {
        const mine = heard.get(actor);
        if (mine === undefined) heard.set(actor, [{ generation, seq: step.seq }]);
        else mine.push({ generation, seq: step.seq });
      }
    }
  }
  if (retaken(heard, grants, callsBy)) found.add('lease-retake');
  return { items: found, depth };
}

interface Grant {
  readonly actor: string;
  readonly generation: number;
  readonly seq: number;
}

/**
 * A, B, A': A heard g1; another incarnation was granted g2 > g1 after that; A heard g3 > g2
 * after that, and made a call between the grant of g2 and its retake. `heard` holds each
 * incarnation's grants, `grants` everyone's and `callsBy` each one's calls, all in step order.
 * Linear in the grants and calls in practice: a holder renews once a page, so a long world
 * has many grants, and asking each of them about every other one (and copying each
 * incarnation's list of calls at every call) made a calm 10,000-event world's census cost
 * more than the world.
 */
function retaken(heard: ReadonlyMap<string, readonly Omit<Grant, 'actor'>[]>, grants: readonly Grant[], callsBy: ReadonlyMap<string, readonly number[]>): boolean {
  // Where the run of grants to the actor of grant j ends, so that a search for another
  // actor's grant skips a holder's renewals at once.
  const runEnd: number[] = new Array<number>(grants.length);
  for (let j = grants.length - 1; j >= 0; j--) runEnd[j] = grants[j + 1]?.actor === grants[j]?.actor ? (runEnd[j + 1] as number) : j + 1;
  for (const [actor, mine] of heard) {
    const calls = callsBy.get(actor) ?? [];
    for (const [i, first] of mine.entries()) {
      let other: Grant | undefined;
      for (let j = firstAfter(grants.length, (k) => (grants[k] as Grant).seq, first.seq); j < grants.length && other === undefined; ) {
        const g = grants[j] as Grant;
        if (g.actor === actor) j = runEnd[j] as number;
        else if (g.generation > first.generation) other = g;
        else j++;
      }
      if (other === undefined) continue;
      const after = other;
      const back = mine.find((g, k) => k > i && g.seq > after.seq && g.generation > after.generation);
      if (back === undefined) continue;
      const call = calls[firstAfter(calls.length, (k) => calls[k] as number, after.seq)];
      if (call !== undefined && call < back.seq) return true;
    }
  }
  return false;
}

/** The first index from 0 to `length` whose seq is greater than `seq`, in a list sorted by seq. */
function firstAfter(length: number, seqAt: (i: number) => number, seq: number): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (seqAt(mid) > seq) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The event versions a call delivers: an emit's event, a commit's effects and outbox handoffs. */
function deliveries(step: CallStep): string[] {
  const { call } = step;
  if (call.kind === 'emit') return [refKey(call.event)];
  if (call.kind === 'commit') return call.ops.flatMap((op) => (op.op === 'effect' || op.op === 'outbox' ? [refKey(op.event)] : []));
  return [];
}

/** One cell of a run's census: the world (from 1, in the order generated) that first reached it, if any. */
export interface CellReach {
  readonly cell: Cell;
  readonly name: string;
  readonly firstWorld: number | null;
  /** How many worlds reached it. */
  readonly worlds: number;
}

/** A run's census: every cell its consumer's worlds can reach, and when each was first reached. */
export interface CensusSummary {
  readonly worlds: number;
  readonly cells: readonly CellReach[];
  /** The deepest crash between checkpoints, in effects past the last checkpoint (0: none). */
  readonly depth: number;
}

/**
 * Gathers the census over the generated worlds of a run, in the order they were generated
 * (world k is the kth, from 0): only the cells this consumer's worlds can reach, so that a
 * cell never reached is a gap of the search, not an impossibility.
 */
export class CensusTally {
  private readonly first = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  private readonly cells: readonly Cell[];
  private worlds = 0;
  private depth = 0;

  constructor(options: PlanOptions = {}) {
    this.cells = cellsFor({ ...(options.profile ? { profile: options.profile } : {}), contracts: options.contracts ?? ['snapshot', 'insertion-stable', 'replay-window', 'none'] });
  }

  /** A consumer's census, with the worlds its capabilities give it (see worldOptions). */
  static of(consumer: AnyConsumer, options: PlanOptions = {}): CensusTally {
    return new CensusTally(worldOptions(consumer.capabilities, options));
  }

  /** The kth generated world (from 0) executed, with this history. */
  add(history: History, k: number): void {
    const reached = reachedIn(history);
    this.worlds = Math.max(this.worlds, k + 1);
    this.depth = Math.max(this.depth, reached.depth);
    for (const cell of this.cells) {
      if (!cell.every((item) => reached.items.has(item))) continue;
      const name = cellName(cell);
      this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
      const known = this.first.get(name);
      if (known === undefined || k < known) this.first.set(name, k);
    }
  }

  summary(): CensusSummary {
    return {
      worlds: this.worlds,
      depth: this.depth,
      cells: this.cells.map((cell) => {
        const name = cellName(cell);
        const k = this.first.get(name);
        return { cell, name, firstWorld: k === undefined ? null : k + 1, worlds: this.counts.get(name) ?? 0 };
      }),
    };
  }
}

/** The census as `check --verbose` prints it: what was reached, after how many worlds, what never was. */
export function renderCensus(s: CensusSummary): string[] {
  const reached = s.cells.filter((c) => c.firstWorld !== null);
  const lines = [`adversity census: ${reached.length} of ${s.cells.length} reached in ${s.worlds} generated worlds`];
  const width = Math.max(...s.cells.map((c) => c.name.length));
  for (const c of s.cells) {
    const deep = c.name === 'between-checkpoints' && s.depth > 0 ? `; the deepest ${s.depth} effect(s) past a checkpoint` : '';
    lines.push(`  ${c.name.padEnd(width)}  ${c.firstWorld === null ? 'never reached' : `reached after ${c.firstWorld} world(s), in ${c.worlds}${deep}`}`);
  }
  return lines;
}

/** The census of `worlds` generated worlds from `seed`, run by `consumer` as `check` generates them. */
export async function census(consumer: AnyConsumer, worlds: number, seed: number, options: PlanOptions = {}): Promise<CensusSummary> {
  const tally = CensusTally.of(consumer, options);
  const plans = fc.sample(planArb(worldOptions(consumer.capabilities, options)), { numRuns: worlds, seed });
  for (const [k, plan] of plans.entries()) tally.add((await execute(plan, consumer)).history, k);
  return tally.summary();
}

/** The median of the first-reach worlds over seeds, a never-reached seed counting as past every budget. */
export function medianFirst(firsts: readonly (number | null)[]): number | null {
  const sorted = firsts.map((f) => f ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = sorted.length / 2;
  const m = sorted.length % 2 === 1 ? (sorted[Math.floor(mid)] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return Number.isFinite(m) ? m : null;
}
