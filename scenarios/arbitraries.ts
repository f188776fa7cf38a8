import fc from 'fast-check';
import type { Binding, Filter } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { Contract, ResumeStyle } from '../model/history.js';
import { FAULT_KINDS, FAULTABLE_CALLS, type Budget, type Fault, type Plan } from './plan.js';

/**
 * Generators of worlds. Every part shrinks towards the small and the calm: fewer events,
 * smaller keys, one page size, fewer faults at earlier calls, the oldest pending call
 * first. A counterexample therefore ends as a handful of events and the one fault that
 * matters.
 */
export interface WorldSize {
  readonly maxEvents: number;
  readonly maxFaults: number;
  /** Largest first ordering field; small values make ties and holes common. */
  readonly maxKey: number;
  readonly maxPageSize: number;
}

export const DEFAULT_SIZE: WorldSize = { maxEvents: 60, maxFaults: 4, maxKey: 40, maxPageSize: 8 };

/** Generous enough that a correct consumer always finishes; a consumer that cannot is a liveness failure. */
export const DEFAULT_BUDGET: Budget = { adversity: 3000, drain: 6000 };

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

export function faultArb(size: WorldSize): fc.Arbitrary<Fault> {
  return fc.record({
    call: fc.constantFrom(...FAULTABLE_CALLS),
    nth: fc.nat(size.maxEvents),
    kind: fc.constantFrom(...FAULT_KINDS),
  });
}

/** A whole world: stream, binding, source, faults, schedule and world seed. */
export function planArb(size: WorldSize = DEFAULT_SIZE, budget: Budget = DEFAULT_BUDGET): fc.Arbitrary<Plan> {
  return fc.integer({ min: 1, max: 2 }).chain((keyLength) =>
    fc
      .record({
        events: streamArb(size, keyLength),
        binding: bindingArb(size, keyLength),
        pageSize: fc.integer({ min: 1, max: size.maxPageSize }),
        resumes: resumesArb,
        faults: fc.array(faultArb(size), { maxLength: size.maxFaults }),
        schedule: fc.array(fc.nat(7), { maxLength: 24 }),
        seed: fc.nat().map(String),
      })
      .map(({ events, binding, pageSize, resumes, faults, schedule, seed }): Plan => {
        // A stable source: a snapshot when the binding has an upper bound, else append-only.
        const contract: Contract = binding.upTo === null ? { kind: 'insertion-stable' } : { kind: 'snapshot' };
        return { events, binding, source: { pageSize, resumes, contract }, faults, schedule, seed, budget };
      }),
  );
}
