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

/**
 * Everything below draws plain data (numbers, strings, arrays and records of them) and turns
 * it into a plan only at the end, in `planArb`. Plain data is what fast-check can shrink
 * without the context it was generated with, which the second shrinking pass needs.
 */

/**
 * One event of a stream: its first ordering field often ties and leaves holes. About one
 * event in four is a landmark: faults and changes may be tied to one ("before the second
 * commit after e07 arrived"), and the tie holds while shrinking removes other events.
 */
interface EventDraw {
  readonly key: readonly number[];
  readonly kind: (typeof KINDS)[number];
  readonly landmark: number;
}

function eventArb(size: WorldSize): fc.Arbitrary<EventDraw> {
  return fc.record({
    key: fc.tuple(fc.nat(size.maxKey), fc.nat(3)),
    kind: fc.constantFrom(...KINDS),
    // Shrinks towards 0: no landmark.
    landmark: fc.nat(3),
  });
}

/**
 * Ids are numbered in draw order and padded, so that removing events keeps the order of the
 * rest: with e2 and e10, removing e0 would rename them e1 and e9 and swap them in an
 * ordering whose last field is the id.
 */
function streamOf(draws: readonly EventDraw[], keyLength: number, size: WorldSize): { events: SourceEvent[]; landmarks: string[] } {
  const digits = String(Math.max(0, size.maxEvents - 1)).length;
  const idOf = (i: number): string => `e${String(i).padStart(digits, '0')}`;
  const events = draws.map((d, i): SourceEvent => {
    const id = idOf(i);
    return { id, version: 1, key: d.key.slice(0, keyLength), attrs: { kind: d.kind }, payload: `${id}:${d.kind}` };
  });
  return { events, landmarks: draws.flatMap((d, i) => (d.landmark === 3 ? [idOf(i)] : [])) };
}

const FILTERS: readonly Filter[] = [
  { kind: 'all' },
  ...KINDS.map((value): Filter => ({ kind: 'equals', attr: 'kind', value })),
  { kind: 'in', attr: 'kind', values: [...KINDS] },
];
/** An index into FILTERS: all events half the time, one kind a third, a set of kinds a sixth. */
const filterArb = fc.constantFrom(0, 0, 0, 1, 2, 3);

/** The filter and the snapshot bound; the ordering follows from the key length. */
function bindingArb(size: WorldSize) {
  return fc.record({ filter: filterArb, upTo: fc.option(fc.nat(size.maxKey), { nil: null, freq: 3 }) });
}

const resumesArb = fc.subarray<ResumeStyle>(['after', 'key-gte', 'key-gt', 'offset']);

/**
 * Contract for a live (unbounded) binding; a binding with an upper bound reads a snapshot.
 * A replay window is the contract with the most ways to get wrong, so it comes up most.
 */
const liveArb = fc.record({
  kind: fc.constantFrom<Contract['kind']>('insertion-stable', 'replay-window', 'replay-window', 'none'),
  window: fc.integer({ min: 1, max: 12 }),
});

function liveContract(live: { kind: Contract['kind']; window: number }): Contract {
  return live.kind === 'replay-window' ? { kind: 'replay-window', window: live.window } : ({ kind: live.kind } as Contract);
}

/**
 * Each family off (0) a third of the time, else weighted 1..10; `forced` families are never off.
 * An option, because its shrinker tries "off" first, with or without the context the value
 * was drawn with: a rebind or a second worker that does not matter leaves the counterexample.
 */
export function swarmArb(forced: readonly Family[] = []): fc.Arbitrary<Swarm> {
  const on = fc.integer({ min: 1, max: 10 });
  const weight = (family: Family): fc.Arbitrary<number> => (forced.includes(family) ? on : fc.option(on, { nil: 0, freq: 3 }));
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

/**
 * Which landmark an address is tied to. Every address is tied to one when the stream has
 * any: an address counted from the start of the run shifts whenever shrinking removes an
 * event delivered before it, so it kept counterexamples large. Shrinking may still drop the
 * landmark, and the address then counts from the start.
 */
const landmarkArb = fc.nat(3);

/** Resolves a drawn landmark choice to an event id; with no landmarks in the stream the address counts from the start. */
function anchor(choice: number, landmarks: readonly string[]): { after?: string } {
  const id = landmarks[choice % Math.max(1, landmarks.length)];
  return id === undefined ? {} : { after: id };
}

/** The nth call of a kind: mostly early, since loads and leases number a handful and emits hundreds. */
function nthArb(size: WorldSize, lateFactor: number): fc.Arbitrary<number> {
  return fc.oneof({ withCrossShrink: true }, { weight: 3, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.nat(size.maxEvents * lateFactor) });
}

interface FaultDraw {
  readonly family: keyof typeof FAULT_FAMILIES;
  readonly call: Fault['call'];
  readonly nth: number;
  readonly landmark: number;
  readonly kind: number;
  readonly ticket: number;
}

export function faultsArb(size: WorldSize): fc.Arbitrary<FaultDraw[]> {
  const fault = fc.record({
    family: fc.constantFrom(...(Object.keys(FAULT_FAMILIES) as (keyof typeof FAULT_FAMILIES)[])),
    // Effects and commits are where handling goes wrong, so they draw most faults.
    call: fc.constantFrom(...FAULTABLE_CALLS.flatMap((c) => (c === 'emit' || c === 'commit' ? [c, c, c] : c === 'fetch' ? [c, c] : [c]))),
    nth: nthArb(size, 3),
    landmark: landmarkArb,
    kind: fc.nat(PAGE_QUIRKS.length - 1),
    ticket,
  });
  return fc.array(fault, { maxLength: size.maxFaults * 2 });
}

type PlacementDraw = Omit<Placement, 'after'> & { readonly landmark: number };

/** A point in the consumer's work: mostly around commits and fetches, early more often than late. */
export function placementArb(size: WorldSize): fc.Arbitrary<PlacementDraw> {
  return fc.record({
    call: fc.constantFrom<PlaceableCall>('commit', 'commit', 'fetch', 'fetch', 'emit', 'lease', 'load', 'completed', 'claim'),
    nth: nthArb(size, 2),
    landmark: landmarkArb,
  });
}

function place({ landmark, ...p }: PlacementDraw, landmarks: readonly string[]): Placement {
  return { ...p, ...anchor(landmark, landmarks) };
}

export function mutationsArb(size: WorldSize): fc.Arbitrary<(Omit<MutationSpec, 'before'> & { before: PlacementDraw; ticket: number })[]> {
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

/**
 * Shrinks as the inner arbitrary does and, once that finds nothing smaller, once more from
 * scratch, as if the value had just been drawn. fast-check's shrinkers search monotonically:
 * a candidate rejected early (a family switched off, a fault moved to call 0) is never tried
 * again after other parts have shrunk, though by then it may well pass. Worlds are not
 * monotonic, so a second pass often finds much smaller ones. The pass is part of the shrink
 * tree, so a seed and path still replay it exactly.
 */
export class ShrinkTwice<T> extends fc.Arbitrary<T> {
  constructor(private readonly inner: fc.Arbitrary<T>) {
    super();
  }
  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    return this.inner.generate(mrng, biasFactor);
  }
  canShrinkWithoutContext(value: unknown): value is T {
    return this.inner.canShrinkWithoutContext(value);
  }
  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    const inner = this.inner;
    if (context === undefined) return inner.shrink(value, undefined);
    return inner.shrink(value, context).join(
      (function* () {
        yield* inner.shrink(value, undefined);
      })(),
    );
  }
}

/**
 * The world as plain data, before it becomes a plan. Exported so a test can hold it to being
 * shrinkable without context, which the second shrinking pass relies on.
 */
export function worldDrawArb(options: PlanOptions = {}) {
  const size = options.size ?? DEFAULT_SIZE;
  return fc.record({
    swarm: swarmArb(options.families),
    keyLength: fc.integer({ min: 1, max: 2 }),
    events: fc.array(eventArb(size), { maxLength: size.maxEvents, size: 'medium' }),
    binding: bindingArb(size),
    pageSize: fc.integer({ min: 1, max: size.maxPageSize }),
    resumes: resumesArb,
    live: liveArb,
    faults: faultsArb(size),
    mutations: mutationsArb(size),
    workers: fc.integer({ min: 2, max: 3 }),
    leaseTtl: fc.integer({ min: 3, max: 24 }),
    rebind: fc.record({ before: placementArb(size), filter: filterArb, upTo: fc.nat(size.maxKey) }),
    schedule: fc.array(fc.nat(11), { maxLength: 64 }),
    poison: fc.array(fc.nat(size.maxEvents), { minLength: 1, maxLength: 2 }),
    seed: fc.nat(),
  });
}

/** A whole world: the swarm, then stream, binding, source, faults, mutations, workers and schedule. */
export function planArb(options: PlanOptions = {}): fc.Arbitrary<Plan> {
  const size = options.size ?? DEFAULT_SIZE;
  const budget = options.budget ?? DEFAULT_BUDGET;
  const forced = options.families ?? [];
  return new ShrinkTwice(worldDrawArb(options)).map((w): Plan => {
    const { swarm } = w;
    const { events, landmarks } = streamOf(w.events, w.keyLength, size);
    const { contract, snapshot } = contractFor(w.binding.upTo, liveContract(w.live), options.contracts ?? ALL_CONTRACTS);
    const binding: Binding = {
      scope: 'orders',
      filter: FILTERS[w.binding.filter] as Filter,
      ordering: ['ts', 'shard'].slice(0, w.keyLength),
      upTo: snapshot ? (w.binding.upTo ?? size.maxKey) : null,
    };
    const faults = w.faults.flatMap((f): Fault[] => {
      if (!admitted(swarm, f.family, f.ticket, forced)) return [];
      const { calls, kinds } = FAULT_FAMILIES[f.family];
      const call = (calls as readonly string[]).includes(f.call) ? f.call : (calls[0] as Fault['call']);
      return [{ call, nth: f.nth, kind: kinds[f.kind % kinds.length] as FaultKind, ...anchor(f.landmark, landmarks) }];
    });
    const mutations = w.mutations.flatMap(({ ticket: t, before, ...m }) => (admitted(swarm, 'mutation', t, forced) ? [{ ...m, before: place(before, landmarks) }] : []));
    const rebind =
      swarm.rebind === 0 ? null : { before: place(w.rebind.before, landmarks), binding: otherBinding(binding, FILTERS[w.rebind.filter] as Filter, w.rebind.upTo) };
    // Poison picks existing events by index; with no events there is nothing to poison.
    const poison = swarm.poison === 0 || events.length === 0 ? [] : [...new Set(w.poison.map((i) => (events[i % events.length] as SourceEvent).id))];
    return {
      events,
      binding,
      source: { pageSize: w.pageSize, resumes: w.resumes, contract },
      faults,
      schedule: w.schedule,
      seed: String(w.seed),
      budget,
      workers: swarm.generations === 0 ? 1 : w.workers,
      leaseTtl: w.leaseTtl,
      mutations,
      rebind,
      poison,
    };
  });
}
