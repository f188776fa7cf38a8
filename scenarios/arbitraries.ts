import fc from 'fast-check';
import { fingerprint, isEligible, type Binding, type Filter } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { Contract, ResumeStyle } from '../model/history.js';
import { aim, CELLS, cellsFor, type Cell } from './adversity.js';
import { quirkAllowed, type SourceProfile } from './profiles.js';
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

/** The most events a world may be asked to hold (`--events`), and the largest page. */
export const MAX_EVENTS = 100_000;
export const MAX_PAGE_SIZE = 1000;

/**
 * Worlds of up to `events` events, shaped like what connectors read: pages of up to a tenth
 * of the stream (at most 1,000), keys spread as wide as the stream so that ties stay
 * occasional, faults and changes in proportion, and a step budget that grows with the stream
 * (the reference needs about three steps an event), so that a consumer that checkpoints every
 * N records is seen between its checkpoints and a correct one still finishes. Lengths are
 * drawn up to `events` and shrink towards the smallest world that fails, as small ones do.
 */
export function sizedWorlds(events: number): Pick<PlanOptions, 'size' | 'budget'> {
  if (!Number.isSafeInteger(events) || events < 1 || events > MAX_EVENTS) throw new RangeError(`events must be an integer from 1 to ${MAX_EVENTS}, got ${events}`);
  if (events <= DEFAULT_SIZE.maxEvents) return { size: { ...DEFAULT_SIZE, maxEvents: events } };
  const scale = events / DEFAULT_SIZE.maxEvents;
  const maxFaults = Math.round(DEFAULT_SIZE.maxFaults * Math.sqrt(scale));
  return {
    size: {
      maxEvents: events,
      maxFaults,
      maxKey: Math.max(DEFAULT_SIZE.maxKey, events),
      maxPageSize: Math.min(MAX_PAGE_SIZE, Math.max(DEFAULT_SIZE.maxPageSize, Math.floor(events / 10))),
      maxMutations: Math.round(DEFAULT_SIZE.maxMutations * Math.sqrt(scale)),
    },
    budget: sizedBudget,
  };
}

/**
 * A large world's step budgets, from its own size: its events (the changes it plans may add
 * as many again) and its stale pages, the one fault that still fires in the drain and costs
 * more than a step or two. The drain reads the whole stream again after every stale page, on
 * a newest-first source (which starts again from the top): four steps an event for each read
 * (the reference takes under three), the first and one after each stale page, so that a
 * correct consumer still finishes. From the world's own size, not the largest asked for: a
 * world shrunk to a few events gets the default budgets, so that a consumer that never
 * finishes, which spends the whole budget in every world it runs, is shrunk as fast as in
 * default worlds.
 */
export function sizedBudget(events: number, stalePages: number): Budget {
  return { adversity: Math.max(DEFAULT_BUDGET.adversity, events * 12), drain: Math.max(DEFAULT_BUDGET.drain, events * 4 * (1 + stalePages)) };
}

/**
 * Generous enough that a correct consumer always finishes (over 10,000 default worlds the
 * reference needed at most 673 adversity and 197 drain steps); a consumer that cannot is a
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
 * One event of a stream: its first ordering field often ties and leaves holes. An event may
 * be poison, and may carry a fault and a change of the source tied to it ("crash before the
 * first commit about e07", "insert before the second fetch after e07 arrived"). These stay
 * with their event while shrinking removes others, where an address counted from the start
 * of the run, or an event picked by index, would shift with every event removed before it.
 * The first eligible landmark event may anchor the rebind (see `rebindAnchor`).
 */
interface EventDraw {
  readonly key: readonly number[];
  readonly kind: (typeof KINDS)[number];
  readonly fault: FaultDraw;
  /**
   * How many more times the fault strikes the same call about the event, one call after the
   * other: its first k deliveries fail, say, not only its first. Only for a fault tied to
   * its event; shrinks towards 0, a single fault.
   */
  readonly again: number;
  readonly change: MutationDraw;
  /** 0: the fault, or the change, counts from the start of the run instead. */
  readonly tied: { readonly fault: number; readonly change: number };
  readonly poison: number;
  readonly landmark: number;
}

/**
 * Tied to an event, a fault or change is present one time in `oneIn`. Its ticket holds that
 * chance (family weights gate only the untied ones), and it shrinks towards 0: absent.
 */
const presentArb = (oneIn: number): fc.Arbitrary<number> => fc.nat(oneIn - 1);
const isPresent = (chance: number, oneIn: number): boolean => chance === oneIn - 1;
const FAULT_ONE_IN = 4;
const CHANGE_ONE_IN = 6;
const POISON_ONE_IN = 16;

function eventArb(size: WorldSize): fc.Arbitrary<EventDraw> {
  return fc.record({
    // The second field is mostly small, so that whole keys tie; now and then it has two
    // digits beside one, where a field compared as text puts 10 before 9.
    key: fc.tuple(fc.nat(size.maxKey), fc.oneof({ weight: 3, arbitrary: fc.nat(3) }, { weight: 1, arbitrary: fc.integer({ min: 8, max: 12 }) })),
    kind: fc.constantFrom(...KINDS),
    // Mostly at the first call of its kind about the event, the one every event gets: a fault
    // at its third emit fires only if it is replayed twice.
    fault: faultArb(fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(3) }), FAULT_CALLS, presentArb(FAULT_ONE_IN)),
    // Mostly a few times; now and then more often than the retry budgets of connector
    // frameworks (often five), so that "retry N times, then skip" meets a call that fails more.
    again: fc.oneof({ weight: 5, arbitrary: fc.nat(3) }, { weight: 1, arbitrary: fc.integer({ min: 4, max: 12 }) }),
    change: mutationArb(size, fc.nat(3), PLACE_CALLS, presentArb(CHANGE_ONE_IN)),
    // Mostly tied; shrinking may untie one, so a fault at the first fetch stays one when the event it rode on goes.
    tied: fc.record({ fault: fc.nat(3), change: fc.nat(3) }),
    poison: presentArb(POISON_ONE_IN),
    // Shrinks towards 0: no landmark.
    landmark: fc.nat(3),
  });
}

/**
 * How a world names its events, as real APIs do: ids compare in code-unit order (R1), which
 * is not the order a locale's collation or a natural sort gives, and a consumer that breaks
 * ties its own way advances past events of its tie. So a world draws one of four styles:
 *
 * - 0, numbered in draw order and padded (`e07`): every comparison agrees, and a failure
 *   reads easily; shrinking goes here.
 * - 1, unpadded (`e7`): `e10` comes before `e9`, where a natural sort puts it after.
 * - 2, padded, with a capital for the later half of the stream (`e03`, `E07`): every capital
 *   comes before every small letter, where a locale's collation puts `e03` first, so the two
 *   orders part wherever an event of each half tie.
 * - 3, the later half numbered as the first, with a capital (`e03` and `E03`): ids that
 *   differ by case alone, as case-sensitive record ids do, which a store that compares text
 *   without case (a case-insensitive collation) takes for one record.
 *
 * Padded ids keep the order of the rest when shrinking removes an event (with e2 and e10,
 * removing e0 would rename them e1 and e9 and swap them); the other styles may not, which
 * costs the shrinker some steps, never a wrong verdict.
 */
function idsOf(draws: readonly EventDraw[], size: WorldSize, style: number): string[] {
  const digits = String(Math.max(0, size.maxEvents - 1)).length;
  if (style === 1) return draws.map((_, i) => `e${i}`);
  if (style === 0) return draws.map((_, i) => `e${String(i).padStart(digits, '0')}`);
  if (style === 3) {
    // The later half numbered as the first: e00 and E00 both, ids that differ by case alone.
    const half = Math.ceil(draws.length / 2);
    return draws.map((_, i) => (i < half ? `e${String(i).padStart(digits, '0')}` : `E${String(i - half).padStart(digits, '0')}`));
  }
  return draws.map((_, i) => `${2 * i < draws.length ? 'e' : 'E'}${String(i).padStart(digits, '0')}`);
}

/**
 * How a world writes its first ordering field, as real APIs do. A consumer must take any
 * finite number (R1), and one that rounds its bookmark, truncates it to a whole number or
 * keeps it unsigned passes events it never handled:
 *
 * - 0, whole numbers from 0 (`42`); shrinking goes here.
 * - 1, quarters (`10.25`, `10.5`): a timestamp with a fraction of a second, where a rounded
 *   or truncated bookmark lands past, or short of, events of the same second.
 * - 2, halves from below zero (`-9`, `-8.5`): a bookmark truncated towards zero lands past
 *   an event it has not handled, where below zero the fraction is cut the other way.
 * - 3, epoch milliseconds with a fraction (`1733011200042.041015625`): a timestamp past 2^40
 *   with microseconds, where a bookmark kept as a Date (whole milliseconds), a float32 or a
 *   32-bit integer lands short of or past events it has not handled. Each key k is
 *   EPOCH_MS + k * 1025 / 1024: exact in binary (51 bits), so the world and ground truth
 *   still compute the same keys, and nearly every key has a fraction of a millisecond.
 *
 * A profile whose keys are `whole` numbers from 0 (a connector's cursor) gets style 0 only.
 *
 * The world counts in whole units of the field whatever its grid: a change lands one unit
 * past the head, or `back` units behind it; a replay window spans `window` units. Quarters
 * are exact in binary, so the world and ground truth compute the same keys. A change behind
 * the head lands no lower than 0, or than the world's lowest key where that is below 0
 * (src/world/source.ts).
 */
function keyScale(style: number, size: WorldSize, profile: SourceProfile): ((k: number) => number) | null {
  if (profile.keyValues === 'whole') return null;
  if (style === 1) return (k) => k / 4;
  if (style === 2) {
    const below = Math.floor(size.maxKey / 2);
    return (k) => (k - below) / 2;
  }
  if (style === 3) return (k) => EPOCH_MS + (k * 1025) / 1024;
  return null;
}

/** Where key style 3 starts: 2024-12-01T00:00:00Z in milliseconds. */
const EPOCH_MS = 1_733_011_200_000;

/** The plan with its first ordering field written in a key style (see keyScale): its events', and the bounds of its bindings. */
function scaled(plan: Plan, scale: ((k: number) => number) | null): Plan {
  if (scale === null) return plan;
  const bound = (b: Binding): Binding => (b.upTo === null ? b : { ...b, upTo: scale(b.upTo) });
  return {
    ...plan,
    events: plan.events.map((e) => ({ ...e, key: e.key.map((k, i) => (i === 0 ? scale(k) : k)) })),
    binding: bound(plan.binding),
    rebind: plan.rebind === null ? null : { ...plan.rebind, binding: bound(plan.rebind.binding) },
  };
}

/**
 * A replay window as wide as the consumer's API has (its profile's `window`), and late records
 * as far back as it lets them land: the drawn window (1 to WIDEST_DRAWN keys) and the drawn
 * distances behind the head are stretched onto it. Never wider: a late record further back
 * than the real API ever puts one would fail a correct consumer for a world that cannot
 * happen to it. Never only as wide as drawn: an API whose window is an hour, read with a
 * lookback of a minute, must meet records later than a minute. Without a bound, the plan as
 * it is.
 */
function toWindow(plan: Plan, widest: number | undefined): Plan {
  const { contract } = plan.source;
  if (widest === undefined || contract.kind !== 'replay-window') return plan;
  const stretch = (n: number): number => Math.round((n * widest) / WIDEST_DRAWN);
  const window = Math.min(widest, Math.max(1, stretch(contract.window)));
  return { ...plan, source: { ...plan.source, contract: { kind: 'replay-window', window } }, mutations: plan.mutations.map((m) => ({ ...m, back: stretch(m.back) })) };
}

function streamOf(draws: readonly EventDraw[], ids: readonly string[], keyLength: number): SourceEvent[] {
  return draws.map((d, i): SourceEvent => {
    const id = ids[i] as string;
    return { id, version: 1, key: d.key.slice(0, keyLength), attrs: { kind: d.kind }, payload: `${id}:${d.kind}` };
  });
}

const FILTERS: readonly Filter[] = [
  { kind: 'all' },
  ...KINDS.map((value): Filter => ({ kind: 'equals', attr: 'kind', value })),
  { kind: 'in', attr: 'kind', values: [...KINDS] },
];
/** An index into FILTERS: all events half the time, one kind a third, a set of kinds a sixth. */
const filterArb = fc.constantFrom(0, 0, 0, 1, 2, 3);

/**
 * The filter and the snapshot bound; the ordering follows from the key length. A bound,
 * and so a snapshot, half of the time: the live contracts are where sources change under
 * the consumer, and they need their share.
 */
function bindingArb(size: WorldSize) {
  return fc.record({ filter: filterArb, upTo: fc.option(fc.nat(size.maxKey), { nil: null, freq: 2 }) });
}

const resumesArb = fc.subarray<ResumeStyle>(['after', 'key-gte', 'key-gt', 'offset']);

/**
 * Contract for a live (unbounded) binding; a binding with an upper bound reads a snapshot.
 * A replay window is the contract with the most ways to get wrong, and insertion-stable the
 * one with the boundary case incremental syncs get wrong (a new row at the newest key), so
 * those two come up most.
 */
const liveArb = fc.record({
  kind: fc.constantFrom<Contract['kind']>('insertion-stable', 'replay-window', 'insertion-stable', 'replay-window', 'none'),
  window: fc.integer({ min: 1, max: 12 }),
});

/** The widest replay window drawn, in keys (liveArb). */
const WIDEST_DRAWN = 12;

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
  indefinite: { calls: FAULTABLE_CALLS, kinds: ['error', 'timeout', 'lost'] },
  page: { calls: ['fetch'], kinds: PAGE_QUIRKS },
} as const satisfies Record<string, { calls: readonly Fault['call'][]; kinds: readonly FaultKind[] }>;

interface FaultDraw {
  readonly family: keyof typeof FAULT_FAMILIES;
  readonly call: Fault['call'];
  readonly nth: number;
  readonly kind: number;
  readonly ticket: number;
}

/** Effects and commits are where handling goes wrong, so they draw most faults. */
const FAULT_CALLS = FAULTABLE_CALLS.flatMap((c) => (c === 'emit' || c === 'commit' ? [c, c, c] : c === 'fetch' ? [c, c] : [c]));
/**
 * Calls about no event, for faults and changes tied to none: counted from the start of the
 * run, an address at "the third commit" would move to another event whenever shrinking
 * removed one before it. Calls about events get their faults through the events.
 */
const UNTIED_CALLS = ['fetch', 'fetch', 'load', 'lease'] as const;

function faultArb(nth: fc.Arbitrary<number>, calls: readonly Fault['call'][], ticketArb: fc.Arbitrary<number> = ticket): fc.Arbitrary<FaultDraw> {
  return fc.record({
    family: fc.constantFrom(...(Object.keys(FAULT_FAMILIES) as (keyof typeof FAULT_FAMILIES)[])),
    call: fc.constantFrom(...calls),
    nth,
    kind: fc.nat(PAGE_QUIRKS.length - 1),
    ticket: ticketArb,
  });
}

/** The fault a draw stands for, if its family lets it through; `after` ties it to an event. */
function faultOf(f: FaultDraw, swarm: Swarm, forced: readonly Family[], after?: string, ticket: number = f.ticket): Fault[] {
  if (!admitted(swarm, f.family, ticket, forced)) return [];
  const { calls, kinds } = FAULT_FAMILIES[f.family];
  const call = (calls as readonly string[]).includes(f.call) ? f.call : (calls[0] as Fault['call']);
  return [{ call, nth: f.nth, kind: kinds[f.kind % kinds.length] as FaultKind, ...(after === undefined ? {} : { after }) }];
}

/**
 * A fault tied to an event, and `again` more like it at the calls right after: "the first
 * three emits of e07 fail". Calls about no event are counted from the start of the run, so
 * there repeating would only strike whatever calls come next; those stay single.
 */
function repeated(faults: Fault[], again: number, out: Fault[]): void {
  // Onto the list being built (see planArb), rather than a list per event flattened after.
  for (const f of faults) {
    if (f.after === undefined) out.push(f);
    else for (let i = 0; i <= again; i++) out.push({ ...f, nth: f.nth + i });
  }
}

/**
 * A point in the consumer's work: mostly around commits and fetches, early more often than
 * late, and often just before the first claim, once the consumer has read to the end.
 */
const PLACE_CALLS: readonly PlaceableCall[] = ['commit', 'commit', 'fetch', 'fetch', 'emit', 'lease', 'load', 'completed', 'claim', 'claim'];

function placementArb(nth: fc.Arbitrary<number>, calls: readonly PlaceableCall[] = PLACE_CALLS): fc.Arbitrary<Placement> {
  return fc.record({ call: fc.constantFrom(...calls), nth });
}

type MutationDraw = MutationSpec & { readonly ticket: number };

/**
 * The first claim of the adversity phase ends it, so a change placed before a later claim
 * could never happen. Before the first claim is where a change is most telling: the
 * consumer has read the whole stream and bookmarked its end, and the change lands behind
 * that bookmark or ties with it. Any claim placement is therefore the first claim.
 */
function claimOnce(before: Placement): Placement {
  return before.call === 'claim' ? { ...before, nth: 0 } : before;
}

function mutationArb(size: WorldSize, nth: fc.Arbitrary<number>, calls: readonly PlaceableCall[], ticketArb: fc.Arbitrary<number> = ticket): fc.Arbitrary<MutationDraw> {
  // The order of these keys is the order of a plan's mutation fields: planArb writes them out.
  return fc.record({
    before: placementArb(nth, calls),
    kind: fc.constantFrom('insert', 'move', 'flip'),
    target: fc.nat(size.maxEvents),
    back: fc.nat(size.maxKey / 2),
    ticket: ticketArb,
  });
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

/**
 * The event a rebind is tied to, among those the binding delivers (one it never delivers could
 * never arm it). 0: the last of them, so the rebind comes once the whole stream has been read;
 * 1: the first landmark event (else the last), for rebinds in mid-stream; 2: none, counted
 * from the start of the run.
 * Shrinking moves towards the last event, which stays the end of the stream whichever other
 * events go: an untied rebind, or one on a landmark whose flag shrank away, is stuck at "the
 * third fetch" and keeps every event that gets the consumer there.
 */
function rebindAnchor(choice: number, eligible: readonly { d: EventDraw; id: string }[]): string | undefined {
  if (choice === 0) return eligible.at(-1)?.id;
  if (choice === 1) return (eligible.find(({ d }) => d.landmark === 3) ?? eligible.at(-1))?.id;
  return undefined;
}

export interface PlanOptions {
  readonly size?: WorldSize;
  /** The step budgets of every world, or a world's from its size: its events (the initial ones and the changes it plans) and its stale pages. */
  readonly budget?: Budget | ((events: number, stalePages: number) => Budget);
  /** Families every generated world has on, e.g. to run 1,000 worlds of one family. */
  readonly families?: readonly Family[];
  /** Source contracts the consumer supports; worlds only use these. Default: all. */
  readonly contracts?: readonly Contract['kind'][];
  /**
   * The source API the consumer is written against: worlds fix what it says (the resume
   * forms offered, the key arity, whether records change, whether effects can be refused)
   * and vary only the rest. Its contracts are applied through `contracts`.
   */
  readonly profile?: SourceProfile;
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
 * monotonic, so a second pass often finds much smaller ones. Only one: every pass tries
 * hundreds of worlds, and further ones rarely pay for themselves. The pass is part of the
 * shrink tree, so a seed and path still replay it exactly.
 */
export class ShrinkTwice<T> extends fc.Arbitrary<T> {
  constructor(private readonly inner: fc.Arbitrary<T>) {
    super();
  }
  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    return this.wrap(this.inner.generate(mrng, biasFactor), false);
  }
  canShrinkWithoutContext(value: unknown): value is T {
    return this.inner.canShrinkWithoutContext(value);
  }
  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    const { inner, restarted } = (context ?? { inner: undefined, restarted: true }) as PassContext;
    const first = this.inner.shrink(value, inner).map((v) => this.wrap(v, restarted));
    if (restarted) return first;
    const again = (function* (self: ShrinkTwice<T>) {
      for (const v of self.inner.shrink(value, undefined)) yield self.wrap(v, true);
    })(this);
    return first.join(again);
  }
  private wrap(v: fc.Value<T>, restarted: boolean): fc.Value<T> {
    return new fc.Value(v.value_, { inner: v.context, restarted } satisfies PassContext);
  }
}

interface PassContext {
  readonly inner: unknown;
  /** Whether the pass from scratch has been taken on the way to this value. */
  readonly restarted: boolean;
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
    // Default worlds keep fast-check's medium lengths; asked-for sizes reach their maximum.
    events: fc.array(eventArb(size), { maxLength: size.maxEvents, size: size.maxEvents > DEFAULT_SIZE.maxEvents ? 'max' : 'medium' }),
    binding: bindingArb(size),
    pageSize: fc.integer({ min: 1, max: size.maxPageSize }),
    resumes: resumesArb,
    live: liveArb,
    // Not tied to any event: early calls about no event only (see UNTIED_CALLS).
    faults: fc.array(faultArb(fc.nat(6), UNTIED_CALLS), { maxLength: size.maxFaults }),
    mutations: fc.array(mutationArb(size, fc.nat(6), [...UNTIED_CALLS, 'claim', 'claim']), { maxLength: size.maxMutations }),
    workers: fc.integer({ min: 2, max: 3 }),
    // Short leases most of the time: a lease that lapses mid-page is where generations compete.
    leaseTtlSteps: fc.oneof({ withCrossShrink: true }, { weight: 2, arbitrary: fc.integer({ min: 3, max: 8 }) }, { weight: 1, arbitrary: fc.integer({ min: 3, max: 24 }) }),
    rebind: fc.record({ anchor: fc.nat(2), before: placementArb(fc.nat(3)), filter: filterArb, upTo: fc.nat(size.maxKey) }),
    // Runs of one choice: a run keeps picking the same worker, so one worker can race ahead
    // through pages while another waits with its call in flight (see `scheduleOf`).
    schedule: fc.array(fc.tuple(fc.nat(11), fc.nat(RUN_MAX)), { maxLength: 32 }),
    seed: fc.nat(),
    // Drawn last, so that every draw above is the one a world of the same seed always had.
    // Faults placed by what the consumer does rather than by event: at its nth checkpoint,
    // or at a call after its nth effect (see Fault.since), anywhere in a large stream.
    paced: fc.array(fc.record({ at: fc.nat(1), nth: fc.nat(3), since: fc.nat(Math.max(0, size.maxEvents - 1)), call: fc.constantFrom(...PACED_CALLS), kind: fc.nat(1), ticket }), { maxLength: 2 }),
    focus: focusArb(size),
    // Drawn after everything a world of the same seed drew before ids had styles.
    idStyle: fc.nat(3),
    keyStyle: fc.nat(3),
  });
}

/** The calls a fault after the nth effect strikes: the next commit most often, the consumer's next read or effect besides. */
const PACED_CALLS = ['commit', 'commit', 'emit', 'fetch'] as const;

/**
 * Which census cell a world aims at (see `aim`), and the numbers the aim uses. Half the
 * worlds aim at none; the rest at one cell, uniformly. The aim is part of the drawn value,
 * a function of the world's own seed and index: it is never decided from what other worlds
 * did. That is what keeps a printed seed and path replaying this world exactly (fast-check
 * regenerates the one world the path names, without the worlds before it), makes every
 * shard and every parallel job draw the same worlds, and lets shrinking drop the aim (it
 * shrinks towards 0, none) like any other part. A feedback loop that aimed at the cells this
 * run had not reached yet would make world k depend on the executions of worlds 0 to k - 1,
 * which none of those can reproduce; aiming uniformly at the cells still unreached in no
 * world so far costs at most a factor of the number of cells over that loop, and reaches
 * every cell in a few hundred worlds (bench/census.ts --medians).
 */
function focusArb(size: WorldSize) {
  return fc.record({ cell: fc.nat(2 * CELLS.length - 1), event: fc.nat(Math.max(0, size.maxEvents - 1)), nth: fc.nat(3), depth: fc.nat(Math.max(0, size.maxEvents - 1)), kind: fc.nat(1) });
}

/** The cell a drawn focus aims at among those this consumer's worlds can reach; undefined: none. */
function focusCell(cell: number, cells: readonly Cell[]): Cell | undefined {
  if (cells.length === 0 || cell < CELLS.length) return undefined;
  return cells[(cell - CELLS.length) % cells.length];
}

/** The longest run of one schedule choice, less one. */
const RUN_MAX = 24;

/**
 * The schedule as the world reads it: each drawn choice repeated as often as its run says.
 * Choices drawn one by one alternate between workers every call or two, so a worker is
 * rarely kept waiting for long; yet the races that matter most need just that: a worker
 * pausing with a call in flight while its lease lapses, another taking the lease over and
 * working through pages, then the first coming back, taking the lease back and finishing
 * what it started (A, B, A'). A run shrinks towards 0, a single choice, the old schedule.
 */
function scheduleOf(runs: readonly (readonly [number, number])[]): number[] {
  // Pushed in a loop: an array made per run by Array.from over an array-like, then flattened,
  // was a good part of what turning a draw into a plan cost, and a plan is made for every world.
  const out: number[] = [];
  for (const [choice, run] of runs) for (let i = 0; i <= run; i++) out.push(choice);
  return out;
}

/**
 * How generated worlds are drawn: a seed and a path name the same world only under the same
 * version, so a recorded failure's history is held to its hash only when the entry was
 * recorded under this one. 2: event ids and the first ordering field in styles. 3: in a world
 * whose keys run from below zero, a change behind the head may land below zero; a third of
 * the indefinite faults are lost requests (a timeout that did nothing); a fourth key style,
 * epoch milliseconds with a fraction; large worlds (`--events`) a drain budget of a full read
 * for each fault they may hold. 4: a large world's budgets come from its own size
 * (`sizedBudget`), not from the largest asked for; a fault tied to an event strikes up to 13
 * calls in a row, not 4; the second ordering field has two digits now and then; a fourth id
 * style, ids that differ by case alone; keys below zero are halves, not whole numbers. 5:
 * under a replay window or no contract, a change asked to land nowhere behind the head (`back`
 * 0) is a new record past it, and the head moves on; under a consumer's replay window
 * (a profile's `window`) windows and late records stretch onto it.
 */
export const WORLDS_VERSION = 5;

/** A whole world: the swarm, then stream, binding, source, faults, mutations, workers and schedule. */
export function planArb(options: PlanOptions = {}): fc.Arbitrary<Plan> {
  const size = options.size ?? DEFAULT_SIZE;
  const budget = options.budget ?? DEFAULT_BUDGET;
  const forced = options.families ?? [];
  const allowed = options.contracts ?? ALL_CONTRACTS;
  const cells = cellsFor({ ...(options.profile ? { profile: options.profile } : {}), contracts: allowed });
  const worlds = new ShrinkTwice(worldDrawArb(options)).map((w): Plan => {
    const { swarm } = w;
    const ids = idsOf(w.events, size, w.idStyle);
    const profile = options.profile ?? {};
    const events = streamOf(w.events, ids, profile.keyArity ?? w.keyLength);
    const { contract, snapshot } = contractFor(w.binding.upTo, liveContract(w.live), allowed);
    const binding: Binding = {
      scope: 'orders',
      filter: FILTERS[w.binding.filter] as Filter,
      ordering: ['ts', 'shard'].slice(0, profile.keyArity ?? w.keyLength),
      upTo: snapshot ? (w.binding.upTo ?? size.maxKey) : null,
    };
    // Tied to an event: present by its own chance, then let through by its family like any other.
    const tied = w.events.map((d, i) => ({ d, id: ids[i] as string }));
    // In the plan's order, built in one list: untied, tied, paced.
    const drawn: Fault[] = w.faults.flatMap((f) => faultOf(f, swarm, forced));
    for (const { d, id } of tied) if (isPresent(d.fault.ticket, FAULT_ONE_IN)) repeated(faultOf(d.fault, swarm, forced, d.tied.fault === 0 ? undefined : id, 9), d.again, drawn);
    const faults = [
      ...drawn,
      ...w.paced.flatMap((f): Fault[] =>
        admitted(swarm, 'crash', f.ticket, forced) ? [{ call: f.at === 0 ? 'checkpoint' : f.call, nth: f.nth, kind: f.kind === 0 ? 'crash-before' : 'crash-after', ...(f.at === 0 ? {} : { since: f.since }) }] : [],
      ),
      // A quirk the profile's API never shows is drawn and dropped, so the other draws keep their places.
    ].filter((f) => quirkAllowed(options.profile, f.kind));
    // A source whose records never change only gains new ones.
    const kindOf = (kind: MutationSpec['kind']): MutationSpec['kind'] => (profile.mutable === false ? 'insert' : kind);
    // Written out in the draw's key order (see mutationArb), ticket left out: a rest pattern
    // and a spread over every drawn mutation cost more than all the rest of a plan's mapping.
    const change = (m: MutationDraw, after?: string, ticket: number = m.ticket): MutationSpec[] => {
      if (!admitted(swarm, 'mutation', ticket, forced)) return [];
      const kind = kindOf(m.kind);
      return [{ before: { ...claimOnce(m.before), ...(after === undefined ? {} : { after }) }, kind, target: m.target, back: m.back }];
    };
    const mutations = w.mutations.flatMap((m) => change(m));
    for (const { d, id } of tied) if (isPresent(d.change.ticket, CHANGE_ONE_IN)) mutations.push(...change(d.change, d.tied.change === 0 ? undefined : id, 9));
    const anchor = rebindAnchor(w.rebind.anchor, tied.filter((_, i) => isEligible(binding, events[i] as SourceEvent)));
    const rebind =
      swarm.rebind === 0
        ? null
        : { before: { ...w.rebind.before, ...(anchor === undefined ? {} : { after: anchor }) }, binding: otherBinding(binding, FILTERS[w.rebind.filter] as Filter, w.rebind.upTo) };
    const poison = swarm.poison === 0 || profile.refusals === 'never' ? [] : tied.filter(({ d }) => isPresent(d.poison, POISON_ONE_IN)).map(({ id }) => id);
    const plan: Plan = {
      events,
      binding,
      // A newest-first API resumes by token only; the field is absent for ascending sources,
      // so that their plans stay as they were.
      source:
        profile.order === 'newest-first'
          ? { pageSize: w.pageSize, resumes: [], contract, order: 'newest-first' }
          : { pageSize: w.pageSize, resumes: profile.resumes ?? w.resumes, contract, ...(profile.tokens === undefined || profile.tokens === 'continuation' ? {} : { tokens: profile.tokens }) },
      faults,
      schedule: scheduleOf(w.schedule),
      seed: String(w.seed),
      budget: typeof budget === 'function' ? DEFAULT_BUDGET : budget,
      workers: swarm.generations === 0 ? 1 : w.workers,
      leaseTtlSteps: w.leaseTtlSteps,
      mutations,
      rebind,
      poison,
    };
    const cell = focusCell(w.focus.cell, cells);
    const eligible = events.filter((e) => isEligible(binding, e)).map((e) => e.id);
    const whole = toWindow(scaled(cell === undefined ? plan : aim(plan, cell, w.focus, { eligible, contracts: allowed }), keyScale(w.keyStyle, size, profile)), profile.window);
    // Budgets from the world's own size are taken once it is whole: aiming it may change it.
    return typeof budget === 'function' ? { ...whole, budget: budget(whole.events.length + whole.mutations.length, whole.faults.filter((f) => f.kind === 'stale').length) } : whole;
  });
  // Each shrinking step of a large world runs the whole world again: bounded, a failure in
  // a 5,000-event world shrinks in under a minute to one far smaller, if not the smallest.
  return size.maxEvents > DEFAULT_SIZE.maxEvents ? fc.limitShrink(worlds, LARGE_WORLD_SHRINKS) : worlds;
}

/** How many shrinking steps a world larger than the default gets (see sizedWorlds). */
export const LARGE_WORLD_SHRINKS = 300;
