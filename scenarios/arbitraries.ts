import fc from 'fast-check';
import { fingerprint, type Binding, type Filter } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { Contract, ResumeStyle } from '../model/history.js';
import { FAULTABLE_CALLS, PAGE_QUIRKS, type Budget, type Fault, type FaultKind, type MutationSpec, type Placement, type PlaceableCall, type Plan } from './plan.js';

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

/**
 * Generous enough that a correct consumer always finishes (over 6,000 default worlds the
 * reference needed at most 596 adversity and 194 drain steps); a consumer that cannot is a
 * liveness failure. Kept near that, since a liveness failure spends the whole budget.
 */
export const DEFAULT_BUDGET: Budget = { adversity: 2000, drain: 1500 };

/** The fault families a world can switch on. */
export const FAMILIES = ['crash', 'indefinite', 'page', 'mutation', 'generations', 'rebind', 'poison'] as const;
export type Family = (typeof FAMILIES)[number];

/** Which families are on in one world, and the weight of each fault family that is. */
export type Swarm = Readonly<Record<Family, number>>;

const KINDS = ['order', 'refund'] as const;
const ALL_CONTRACTS: readonly Contract['kind'][] = ['snapshot', 'insertion-stable', 'replay-window', 'none'];

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
  // A replay window is the contract with the most ways to get wrong, so it comes up most.
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 12 }).map((window): Contract => ({ kind: 'replay-window', window })) },
  fc.constant<Contract>({ kind: 'none' }),
);

/** Each family off (0) a third of the time, else weighted 1..10; `forced` families are never off. */
export function swarmArb(forced: readonly Family[] = []): fc.Arbitrary<Swarm> {
  const on = fc.integer({ min: 1, max: 10 });
  const weight = (family: Family): fc.Arbitrary<number> =>
    forced.includes(family) ? on : fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: on });
  return fc.record(Object.fromEntries(FAMILIES.map((f) => [f, weight(f)])) as Record<Family, fc.Arbitrary<number>>);
}

/**
 * Everything adverse is generated whole and then let through by the swarm: an item of a
 * family with weight w survives when its ticket (0..9) is at least 10 - w, so a ticket that
 * shrinks towards 0 drops its item. No generator depends on another's value, so fast-check
 * shrinks every part on its own: a family switched off, a fault dropped, a key made smaller,
 * and never by letting more adversity in.
 */
const ticket = fc.integer({ min: 0, max: 9 });
const admitted = (swarm: Swarm, family: Family, t: number, forced: readonly Family[]): boolean =>
  swarm[family] > 0 && (forced.includes(family) || t >= 10 - swarm[family]);

const FAULT_FAMILIES = {
  crash: { calls: FAULTABLE_CALLS, kinds: ['crash-before', 'crash-after'] },
  indefinite: { calls: FAULTABLE_CALLS, kinds: ['error', 'timeout'] },
  page: { calls: ['fetch'], kinds: PAGE_QUIRKS },
} as const satisfies Record<string, { calls: readonly Fault['call'][]; kinds: readonly FaultKind[] }>;

export function faultsArb(size: WorldSize): fc.Arbitrary<{ family: keyof typeof FAULT_FAMILIES; call: Fault['call']; nth: number; kind: number; ticket: number }[]> {
  const fault = fc.record({
    family: fc.constantFrom(...(Object.keys(FAULT_FAMILIES) as (keyof typeof FAULT_FAMILIES)[])),
    // Effects and commits are where handling goes wrong, so they draw most faults.
    call: fc.constantFrom(...FAULTABLE_CALLS.flatMap((c) => (c === 'emit' || c === 'commit' ? [c, c, c] : c === 'fetch' ? [c, c] : [c]))),
    // Most calls of a kind come early: loads and leases number a handful, emits hundreds.
    nth: fc.oneof({ weight: 3, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.nat(size.maxEvents * 3) }),
    kind: fc.nat(PAGE_QUIRKS.length - 1),
    ticket,
  });
  return fc.array(fault, { maxLength: size.maxFaults * 2 });
}

/** A point in the consumer's work: mostly around commits and fetches, early more often than late. */
export function placementArb(size: WorldSize): fc.Arbitrary<Placement> {
  return fc.record({
    call: fc.constantFrom<PlaceableCall>('commit', 'commit', 'fetch', 'fetch', 'emit', 'lease', 'load', 'completed', 'claim'),
    nth: fc.oneof({ weight: 3, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.nat(size.maxEvents * 2) }),
  });
}

export function mutationsArb(size: WorldSize): fc.Arbitrary<(MutationSpec & { ticket: number })[]> {
  const mutation = fc.record({
    before: placementArb(size),
    kind: fc.constantFrom('insert', 'move', 'flip'),
    target: fc.nat(size.maxEvents),
    back: fc.nat(size.maxKey / 2),
    ticket,
  });
  return fc.array(mutation, { maxLength: size.maxMutations * 2 });
}

/**
 * The binding a rebind switches to, always a different one: a rebind to the same binding is
 * only a restart of every worker, which crash faults already are, and it would give the
 * shrinker a second, larger way to reach the same failure.
 */
function otherBinding(binding: Binding, filter: Filter, upTo: number): Binding {
  const next: Binding = { ...binding, filter, upTo: binding.upTo === null ? null : upTo };
  if (fingerprint(next) !== fingerprint(binding)) return next;
  if (binding.upTo !== null) return { ...next, upTo: binding.upTo + 1 };
  return { ...next, filter: filter.kind === 'all' ? { kind: 'equals', attr: 'kind', value: 'order' } : { kind: 'all' } };
}

export interface PlanOptions {
  readonly size?: WorldSize;
  readonly budget?: Budget;
  /** Families every generated world has on, e.g. to run 1,000 worlds of one family. */
  readonly families?: readonly Family[];
  /** Source contracts the consumer supports; worlds only use these. Default: all. */
  readonly contracts?: readonly Contract['kind'][];
}

const LIVE: readonly Contract['kind'][] = ['insertion-stable', 'replay-window', 'none'];

/**
 * The contract a world gets: a snapshot when its binding has an upper bound, else the drawn
 * live one, both bent to what the consumer supports (a world it cannot run is no test of it).
 */
function contractFor(upTo: number | null, live: Contract, allowed: readonly Contract['kind'][]): { contract: Contract; snapshot: boolean } {
  const lives = LIVE.filter((k) => allowed.includes(k));
  const snapshot = allowed.includes('snapshot') && (upTo !== null || lives.length === 0);
  if (snapshot) return { contract: { kind: 'snapshot' }, snapshot };
  if (allowed.includes(live.kind)) return { contract: live, snapshot };
  const kind = lives[0] as Contract['kind'];
  return { contract: kind === 'replay-window' ? { kind, window: 4 } : ({ kind } as Contract), snapshot };
}

/** A whole world: the swarm, then stream, binding, source, faults, mutations, workers and schedule. */
export function planArb(options: PlanOptions = {}): fc.Arbitrary<Plan> {
  const size = options.size ?? DEFAULT_SIZE;
  const budget = options.budget ?? DEFAULT_BUDGET;
  const forced = options.families ?? [];
  return fc
    .record({
      swarm: swarmArb(options.families),
      keyLength: fc.integer({ min: 1, max: 2 }),
      events: streamArb(size, 2),
      binding: bindingArb(size, 1),
      pageSize: fc.integer({ min: 1, max: size.maxPageSize }),
      resumes: resumesArb,
      live: liveContractArb,
      faults: faultsArb(size),
      mutations: mutationsArb(size),
      workers: fc.integer({ min: 2, max: 3 }),
      leaseTtl: fc.integer({ min: 3, max: 24 }),
      rebind: fc.record({ before: placementArb(size), filter: filterArb, upTo: fc.nat(size.maxKey) }),
      schedule: fc.array(fc.nat(11), { maxLength: 64 }),
      poison: fc.array(fc.nat(size.maxEvents), { minLength: 1, maxLength: 2 }),
      seed: fc.nat().map(String),
    })
    .map((w): Plan => {
      const { swarm } = w;
      const events = w.events.map((e) => ({ ...e, key: e.key.slice(0, w.keyLength) }));
      const { contract, snapshot } = contractFor(w.binding.upTo, w.live, options.contracts ?? ALL_CONTRACTS);
      const binding: Binding = { ...w.binding, ordering: ['ts', 'shard'].slice(0, w.keyLength), upTo: snapshot ? (w.binding.upTo ?? size.maxKey) : null };
      const faults = w.faults.flatMap((f): Fault[] => {
        if (!admitted(swarm, f.family, f.ticket, forced)) return [];
        const { calls, kinds } = FAULT_FAMILIES[f.family];
        const call = (calls as readonly string[]).includes(f.call) ? f.call : (calls[0] as Fault['call']);
        return [{ call, nth: f.nth, kind: kinds[f.kind % kinds.length] as FaultKind }];
      });
      const mutations = w.mutations.flatMap(({ ticket: t, ...m }) => (admitted(swarm, 'mutation', t, forced) ? [m] : []));
      const rebind =
        swarm.rebind === 0 ? null : { before: w.rebind.before, binding: otherBinding(binding, w.rebind.filter, w.rebind.upTo) };
      // Poison picks existing events by index; with no events there is nothing to poison.
      const poison = swarm.poison === 0 || events.length === 0 ? [] : [...new Set(w.poison.map((i) => (events[i % events.length] as SourceEvent).id))];
      return {
        events,
        binding,
        source: { pageSize: w.pageSize, resumes: w.resumes, contract },
        faults,
        schedule: w.schedule,
        seed: w.seed,
        budget,
        workers: swarm.generations === 0 ? 1 : w.workers,
        leaseTtl: w.leaseTtl,
        mutations,
        rebind,
        poison,
      };
    });
}
