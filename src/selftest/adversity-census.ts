import fc from 'fast-check';
import { positionOf, refKey, type SourceEvent } from '../../model/event.js';
import type { CallStep, History } from '../../model/history.js';
import { compareKeys, comparePositions } from '../../model/order.js';
import { planArb, type PlanOptions } from '../../scenarios/arbitraries.js';
import { CALL_FAULTS } from '../../scenarios/plan.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute } from '../run/execute.js';

/**
 * The adversity that real sources show, as it actually happened in an executed history
 * (not as a plan intended it: a fault planned at a call never made did not happen):
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
 */
export const CENSUS = ['tie-at-newest-key', 'repeated-delivery-faults', 'lease-retake', 'in-place-flip', 'moved-version'] as const;
export type CensusItem = (typeof CENSUS)[number];

const CALL_FAULT_KINDS: readonly string[] = CALL_FAULTS;

/** Which of the census items this history shows. */
export function adversityIn(history: History): Set<CensusItem> {
  const found = new Set<CensusItem>();
  const held = new Map<string, SourceEvent>(history.header.initial.map((e) => [e.id, e]));
  const newest = (): SourceEvent | undefined => [...held.values()].reduce<SourceEvent | undefined>((m, e) => (m === undefined || comparePositions(positionOf(e), positionOf(m)) > 0 ? e : m), undefined);
  const failedDeliveries = new Map<string, number>();
  /** Per incarnation: the generations it heard, and the seq of its first call after each. */
  const heard = new Map<string, { generation: number; seq: number }[]>();
  /** Every grant, in order: who, which generation, at which step. */
  const grants: { actor: string; generation: number; seq: number }[] = [];
  const callsBy = new Map<string, number[]>();
  for (const step of history.steps) {
    if (step.kind === 'mutation') {
      const before = held.get(step.event.id);
      const top = newest();
      if (history.header.contract.kind === 'insertion-stable' && top !== undefined && top.id !== step.event.id && compareKeys(step.event.key, top.key) === 0 && step.event.id > top.id) {
        found.add('tie-at-newest-key');
      }
      if (before !== undefined && step.mutation !== 'insert') found.add(compareKeys(before.key, step.event.key) === 0 ? 'in-place-flip' : 'moved-version');
      held.set(step.event.id, step.event);
      continue;
    }
    if (step.kind !== 'call') continue;
    const actor = `${step.actor.worker}#${step.actor.incarnation}`;
    callsBy.set(actor, [...(callsBy.get(actor) ?? []), step.seq]);
    if (step.fault !== undefined && CALL_FAULT_KINDS.includes(step.fault)) {
      for (const ref of deliveries(step)) {
        const n = (failedDeliveries.get(ref) ?? 0) + 1;
        failedDeliveries.set(ref, n);
        if (n >= 2) found.add('repeated-delivery-faults');
      }
    }
    if (step.call.kind === 'lease' && step.applied && step.result?.kind === 'generation') {
      const generation = step.result.generation;
      grants.push({ actor, generation, seq: step.seq });
      if (step.outcome.kind === 'ok') heard.set(actor, [...(heard.get(actor) ?? []), { generation, seq: step.seq }]);
    }
  }
  // A, B, A': A heard g1; another incarnation was granted g2 > g1 after that; A heard g3 > g2
  // after that, and made a call between the grant of g2 and its retake.
  for (const [actor, mine] of heard) {
    for (const [i, first] of mine.entries()) {
      const other = grants.find((g) => g.actor !== actor && g.seq > first.seq && g.generation > first.generation);
      if (other === undefined) continue;
      const back = mine.slice(i + 1).find((g) => g.seq > other.seq && g.generation > other.generation);
      if (back === undefined) continue;
      if ((callsBy.get(actor) ?? []).some((seq) => seq > other.seq && seq < back.seq)) found.add('lease-retake');
    }
  }
  return found;
}

/** The event versions a call delivers: an emit's event, a commit's effects and outbox handoffs. */
function deliveries(step: CallStep): string[] {
  const { call } = step;
  if (call.kind === 'emit') return [refKey(call.event)];
  if (call.kind === 'commit') return call.ops.flatMap((op) => (op.op === 'effect' || op.op === 'outbox' ? [refKey(op.event)] : []));
  return [];
}

/** How many of `worlds` generated worlds (from `seed`) show each census item when `consumer` runs them. */
export async function census(consumer: AnyConsumer, worlds: number, seed: number, options: PlanOptions = {}): Promise<Record<CensusItem, number>> {
  const counts = Object.fromEntries(CENSUS.map((c) => [c, 0])) as Record<CensusItem, number>;
  for (const plan of fc.sample(planArb(options), { numRuns: worlds, seed })) {
    for (const item of adversityIn((await execute(plan, consumer)).history)) counts[item]++;
  }
  return counts;
}
