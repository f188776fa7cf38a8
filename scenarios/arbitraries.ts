import fc from 'fast-check';
import type { Binding, Filter } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { Contract, ResumeStyle } from '../model/history.js';
import { FAULTABLE_CALLS, PAGE_QUIRKS, type Budget, type Fault, type FaultKind, type MutationSpec, type Plan } from './plan.js';

/**
 * Generators of worlds. Every part shrinks towards the small and the calm: fewer events,
 * smaller keys, fewer faults at earlier calls, one worker, the oldest pending call first.
 * A counterexample therefore ends as a handful of events and the one fault that matters.
 *
 * Swarm testing: each world first draws which fault families are on and how heavily each
 * is weighted, so rare combinations (a repeated page right after a lease was lost, say) come
 * up instead of being averaged away by a uniform mix.
 */
export interface WorldSize {
  readonly maxEvents: number;
  readonly maxFaults: number;
  /** Largest first ordering field; small values make ties and holes common. */
  readonly maxKey: number;
  readonly maxPageSize: number;
  readonly maxMutations: number;
}

export const DEFAULT_SIZE: WorldSize = { maxEvents: 60, maxFaults: 6, maxKey: 40, maxPageSize: 8, maxMutations: 6 };

/** Generous enough that a correct consumer always finishes; a consumer that cannot is a liveness failure. */
export const DEFAULT_BUDGET: Budget = { adversity: 3000, drain: 6000 };

/** The fault families a world can switch on. */
export const FAMILIES = ['crash', 'indefinite', 'page', 'mutation', 'generations', 'rebind', 'poison'] as const;
export type Family = (typeof FAMILIES)[number];

/** Which families are on in one world, and the weight of each fault family that is. */
export type Swarm = Readonly<Record<Family, number>>;

const KINDS = ['order', 'refund'] as const;

/** A stream of 0..maxEvents events whose first ordering field often ties and leaves holes. */
export function streamArb(size: WorldSize, keyLength: number): fc.Arbitrary<SourceEvent[]> {
  const event = fc.record({
    key: fc.tuple(fc.nat(size.maxKey), fc.nat(3)),
    kind: fc.constantFrom(...KINDS),
  });
  return fc.array(event, { maxLength: size.maxEvents, size: 'medium' }).map((specs) =>
    specs.map((s, i) => {
      const id = `e${i}`;
      return { id, version: 1, key: s.key.slice(0, keyLength), attrs: { kind: s.kind }, payload: `${id}:${s.kind}` };
    }),
  );
}

export const filterArb: fc.Arbitrary<Filter> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Filter>({ kind: 'all' }) },
  { weight: 2, arbitrary: fc.constantFrom<Filter>(...KINDS.map((value) => ({ kind: 'equals', attr: 'kind', value }) as const)) },
  { weight: 1, arbitrary: fc.constant<Filter>({ kind: 'in', attr: 'kind', values: [...KINDS] }) },
);

export function bindingArb(size: WorldSize, keyLength: number): fc.Arbitrary<Binding> {
  return fc.record({
    scope: fc.constant('orders'),
    filter: filterArb,
    ordering: fc.constant(['ts', 'shard'].slice(0, keyLength)),
    upTo: fc.option(fc.nat(size.maxKey), { nil: null, freq: 3 }),
  });
}

export const resumesArb: fc.Arbitrary<ResumeStyle[]> = fc.subarray<ResumeStyle>(['after', 'key-gte', 'key-gt', 'offset']);

/** Contracts for a live (unbounded) binding; a binding with an upper bound reads a snapshot. */
export const liveContractArb: fc.Arbitrary<Contract> = fc.oneof(
  fc.constant<Contract>({ kind: 'insertion-stable' }),
  fc.integer({ min: 1, max: 12 }).map((window): Contract => ({ kind: 'replay-window', window })),
  fc.constant<Contract>({ kind: 'none' }),
);

/** Each family on or off (0), and weighted 1..10 when on; `forced` families are always on. */
export function swarmArb(forced: readonly Family[] = []): fc.Arbitrary<Swarm> {
  const weight = (family: Family): fc.Arbitrary<number> =>
    forced.includes(family) ? fc.integer({ min: 1, max: 10 }) : fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10 }));
  return fc.record(Object.fromEntries(FAMILIES.map((f) => [f, weight(f)])) as Record<Family, fc.Arbitrary<number>>);
}

export function faultsArb(size: WorldSize, swarm: Swarm): fc.Arbitrary<Fault[]> {
  const groups: { weight: number; arbitrary: fc.Arbitrary<Fault> }[] = [];
  const at = fc.nat(size.maxEvents);
  const kinds = (ks: readonly FaultKind[]) => fc.constantFrom(...ks);
  if (swarm.crash > 0) {
    groups.push({ weight: swarm.crash, arbitrary: fc.record({ call: fc.constantFrom(...FAULTABLE_CALLS), nth: at, kind: kinds(['crash-before', 'crash-after']) }) });
  }
  if (swarm.indefinite > 0) {
    groups.push({ weight: swarm.indefinite, arbitrary: fc.record({ call: fc.constantFrom(...FAULTABLE_CALLS), nth: at, kind: kinds(['error', 'timeout']) }) });
  }
  if (swarm.page > 0) {
    groups.push({ weight: swarm.page, arbitrary: fc.record({ call: fc.constant('fetch' as const), nth: at, kind: kinds(PAGE_QUIRKS) }) });
  }
  if (groups.length === 0) return fc.constant([]);
  return fc.array(fc.oneof(...groups), { maxLength: size.maxFaults });
}

export function mutationsArb(size: WorldSize, swarm: Swarm): fc.Arbitrary<MutationSpec[]> {
  if (swarm.mutation === 0) return fc.constant([]);
  const mutation = fc.record({
    atCall: fc.nat(size.maxEvents * 2),
    kind: fc.constantFrom('insert', 'move', 'flip'),
    target: fc.nat(size.maxEvents),
    back: fc.nat(size.maxKey / 2),
  });
  return fc.array(mutation, { minLength: 1, maxLength: size.maxMutations });
}

export interface PlanOptions {
  readonly size?: WorldSize;
  readonly budget?: Budget;
  /** Families every generated world has on, e.g. to run 1,000 worlds of one family. */
  readonly families?: readonly Family[];
}

/** A whole world: swarm first, then stream, binding, source, faults, mutations, workers and schedule. */
export function planArb(options: PlanOptions = {}): fc.Arbitrary<Plan> {
  const size = options.size ?? DEFAULT_SIZE;
  const budget = options.budget ?? DEFAULT_BUDGET;
  return fc.tuple(fc.integer({ min: 1, max: 2 }), swarmArb(options.families)).chain(([keyLength, swarm]) =>
    fc
      .record({
        events: streamArb(size, keyLength),
        binding: bindingArb(size, keyLength),
        pageSize: fc.integer({ min: 1, max: size.maxPageSize }),
        resumes: resumesArb,
        live: liveContractArb,
        faults: faultsArb(size, swarm),
        mutations: mutationsArb(size, swarm),
        workers: swarm.generations > 0 ? fc.integer({ min: 2, max: 3 }) : fc.constant(1),
        leaseTtl: fc.integer({ min: 3, max: 24 }),
        rebind:
          swarm.rebind > 0
            ? fc.record({ atCall: fc.nat(size.maxEvents * 2), filter: filterArb, upTo: fc.nat(size.maxKey) })
            : fc.constant(null),
        schedule: fc.array(fc.nat(11), { maxLength: 64 }),
        poison: swarm.poison > 0 ? fc.array(fc.nat(size.maxEvents), { minLength: 1, maxLength: 2 }) : fc.constant<number[]>([]),
        seed: fc.nat().map(String),
      })
      .map((w): Plan => {
        const contract: Contract = w.binding.upTo === null ? w.live : { kind: 'snapshot' };
        const rebind =
          w.rebind === null ? null : { atCall: w.rebind.atCall, binding: { ...w.binding, filter: w.rebind.filter, upTo: w.binding.upTo === null ? null : w.rebind.upTo } };
        return {
          events: w.events,
          binding: w.binding,
          source: { pageSize: w.pageSize, resumes: w.resumes, contract },
          faults: w.faults,
          schedule: w.schedule,
          seed: w.seed,
          budget,
          workers: w.workers,
          leaseTtl: w.leaseTtl,
          mutations: w.mutations,
          rebind,
          // Poison picks existing events by index; with no events there is nothing to poison.
          poison: [...new Set(w.poison.flatMap((i) => (w.events.length === 0 ? [] : [(w.events[i % w.events.length] as SourceEvent).id])))],
        };
      }),
  );
}
