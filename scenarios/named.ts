import type { Binding } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import type { RuleId } from '../model/rules.js';
import { DEFAULT_BUDGET } from './arbitraries.js';
import type { Fault, Plan } from './plan.js';

/**
 * The seed's reasoned examples and validation scenarios, written down as plans so they are
 * executed rather than argued. Each names the passage it executes and the rules it covers.
 */
export interface NamedScenario {
  readonly name: string;
  readonly rules: readonly RuleId[];
  /** The seed passage this scenario executes, in the seed's own words. */
  readonly seed: string;
  readonly plan: Plan;
}

/** The whole `orders` scope by timestamp: what the hand-written plans read unless they say otherwise. */
export const ORDERS: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['ts'], upTo: null };

/** Event `e<n>` at timestamp n, an order unless `kind` says otherwise. */
export function ev(n: number, kind = 'order'): SourceEvent {
  return { id: `e${n}`, version: 1, key: [n], attrs: { kind }, payload: `e${n}:${kind}` };
}

/** A calm world around `events` and `faults`: one worker, insertion-stable pages of three; `over` changes the rest. */
export function plan(events: SourceEvent[], faults: Fault[], over: Partial<Plan> = {}): Plan {
  return {
    events,
    binding: ORDERS,
    source: { pageSize: 3, resumes: [], contract: { kind: 'insertion-stable' } },
    faults,
    schedule: [],
    seed: '0',
    budget: DEFAULT_BUDGET,
    workers: 1,
    leaseTtlSteps: 8,
    mutations: [],
    rebind: null,
    poison: [],
    ...over,
  };
}

const E41_43 = [ev(41), ev(42), ev(43)];
/** Two pages: [41 42] [43], so there is a page boundary to crash at. */
const TWO_PAGES = { source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } } } as const;

export const SEED_SCENARIOS: readonly NamedScenario[] = [
  {
    name: 'failed-event-holds-watermark',
    rules: ['R6', 'R7', 'R8'],
    seed: 'The effect for 41 commits, the effect for 42 fails, and 43 is not handled. The durable watermark becomes 41 ... A retry replays from after 41 ... and attempts 42 again.',
    plan: plan(E41_43, [{ call: 'effect', nth: 1, kind: 'error' }]),
  },
  {
    name: 'snapshot-proves-hole',
    rules: ['R2', 'R6', 'R10'],
    seed: 'A stable snapshot contains positions 41, 42, and 43, but the bound filter makes only 41 and 43 eligible ... the eligible prefix can be complete through 43.',
    plan: plan([ev(41), ev(42, 'refund'), ev(43)], [], {
      binding: { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'order' }, upTo: 43 },
      source: { pageSize: 3, resumes: [], contract: { kind: 'snapshot' } },
    }),
  },
  {
    name: 'crash-before-first-effect',
    rules: ['R3', 'R4', 'R6'],
    seed: 'Test the target implementation with failures before the first effect',
    plan: plan(E41_43, [{ call: 'effect', nth: 0, kind: 'crash-before' }], TWO_PAGES),
  },
  {
    name: 'crash-between-effect-and-completion',
    rules: ['R4', 'R5'],
    seed: 'between an effect and its completion record',
    plan: plan(E41_43, [{ call: 'emit', nth: 0, kind: 'crash-after' }], TWO_PAGES),
  },
  {
    name: 'crash-between-completion-and-watermark',
    rules: ['R3', 'R6'],
    seed: 'between completion and watermark advancement',
    // Commits on page one: complete 41, complete 42, then the watermark; crash before the third.
    plan: plan(E41_43, [{ call: 'commit', nth: 2, kind: 'crash-before' }], TWO_PAGES),
  },
  {
    name: 'crash-after-page-before-next-fetch',
    rules: ['R8', 'R9'],
    seed: 'after the final event but before requesting the next page',
    // The watermark commit closing page one takes effect; the worker dies before fetching page two.
    plan: plan(E41_43, [{ call: 'commit', nth: 2, kind: 'crash-after' }], TWO_PAGES),
  },
];

/** Events 41..44 and, far ahead, 60: a head that makes 41..44 settled under a small replay window. */
const WINDOWED = [ev(41), ev(42, 'refund'), ev(43), ev(44)];

/**
 * The adversity scenarios: sources that change, pages that misbehave, workers that compete,
 * bindings that change under the same store.
 */
export const ADVERSITY_SCENARIOS: readonly NamedScenario[] = [
  {
    name: 'stale-generation-cannot-advance',
    rules: ['R3', 'R6'],
    seed: 'with two attempts using different ownership generations ... so a stale attempt cannot advance shared progress',
    // w1 handles page one, then pauses before its watermark commit; its lease expires, w2
    // takes generation 2 and commits past it; then w1 resumes and tries its stale commit.
    plan: plan([ev(41), ev(42), ev(43), ev(44)], [], {
      ...TWO_PAGES,
      workers: 2,
      leaseTtlSteps: 3,
      schedule: [...Array<number>(8).fill(0), ...Array<number>(9).fill(1), ...Array<number>(4).fill(0)],
    }),
  },
  {
    name: 'membership-flip-within-replay-window',
    rules: ['R10'],
    seed: 'a mutable-membership case where the same position becomes eligible later',
    // 42 is a refund, outside the filter; after 43 is handled (before the completion of 44,
    // the third commit) it flips to an order in place. The replay window (3) means the
    // consumer never passed 42 and re-reads it.
    plan: plan(WINDOWED, [], {
      binding: { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'order' } },
      source: { pageSize: 4, resumes: [], contract: { kind: 'replay-window', window: 3 } },
      mutations: [{ before: { call: 'commit', nth: 2 }, kind: 'flip', target: 1, back: 0 }],
    }),
  },
  {
    name: 'membership-flip-without-contract',
    rules: ['R10'],
    seed: 'It needs an insertion-stable boundary, versioned snapshot, or replay window before advancing',
    // The same flip on a source that promises nothing: no watermark may pass the hole. A
    // consumer reads from the start again instead, and fails visibly or claims a read that
    // holds every event the source kept still while it ran (docs/adapters.md, Contracts).
    plan: plan(WINDOWED, [], {
      binding: { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'order' } },
      source: { pageSize: 4, resumes: [], contract: { kind: 'none' } },
      mutations: [{ before: { call: 'commit', nth: 2 }, kind: 'flip', target: 1, back: 0 }],
    }),
  },
  {
    name: 'late-insert-within-replay-window',
    rules: ['R10'],
    seed: 'when position 42 can be inserted behind the watermark',
    // The head is 50 and the window 4: a late event lands at 46, behind 47, once a consumer
    // that ignores the window has already passed 47. The window keeps a correct one below 46.
    plan: plan([41, 42, 43, 44, 46, 47, 49, 50].map((n) => ev(n)), [], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'replay-window', window: 4 } },
      // Before the fourth lease renewal: three pages are done.
      mutations: [{ before: { call: 'lease', nth: 3 }, kind: 'insert', target: 0, back: 4 }],
    }),
  },
  {
    name: 'late-insert-without-contract',
    rules: ['R10'],
    seed: 'a monotonic consumer watermark alone cannot guarantee no skips',
    // On a source that promises nothing, a late event lands far behind the head.
    plan: plan([ev(41), ev(43), ev(45), ev(50)], [], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'none' } },
      // Before the effect for 50: 41 and 43 are done, and past them a careless watermark.
      mutations: [{ before: { call: 'effect', nth: 3 }, kind: 'insert', target: 0, back: 8 }],
    }),
  },
  {
    name: 'ordering-field-change',
    rules: ['R1', 'R10'],
    seed: 'or when its ordering fields can change',
    // A new version of e45 moves 3 behind the head, inside the window of 4.
    plan: plan([ev(41), ev(43), ev(45), ev(50)], [], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'replay-window', window: 4 } },
      mutations: [{ before: { call: 'effect', nth: 3 }, kind: 'move', target: 2, back: 3 }],
    }),
  },
  {
    name: 'empty-page-with-token',
    rules: ['R9'],
    seed: 'On an empty, repeated, or stale page, do not infer processing progress from the token alone',
    // The source answers the second and third fetches with no events and a token: a page
    // boundary, not the end of the stream.
    plan: plan(E41_43, [1, 2].map((nth) => ({ call: 'fetch', nth, kind: 'empty' }) as const), { ...TWO_PAGES }),
  },
  {
    name: 'repeated-page',
    rules: ['R4', 'R9'],
    seed: 'Overlap is expected replay, not evidence that progress regressed',
    plan: plan([ev(41), ev(42), ev(43), ev(44), ev(45)], [{ call: 'fetch', nth: 1, kind: 'repeat' }], { ...TWO_PAGES }),
  },
  {
    name: 'stale-token',
    rules: ['R8', 'R9'],
    seed: 'otherwise restart from the durable replay anchor or fail visibly',
    // The second page's token has expired by the time it is used: restart from durable state.
    plan: plan([ev(41), ev(42), ev(43), ev(44), ev(45)], [{ call: 'fetch', nth: 1, kind: 'stale' }], { ...TWO_PAGES }),
  },
  {
    name: 'ties-across-page-boundary',
    rules: ['R1', 'R6'],
    seed: 'otherwise use the complete ordering tuple plus a unique immutable event identifier',
    // Four events share ts 42 across the page boundary; the worker dies after page one's
    // watermark commit, and the source offers key > k as well as key >= k.
    plan: plan(
      [ev(41), { ...ev(42), id: 'e42a' }, { ...ev(42), id: 'e42b' }, { ...ev(42), id: 'e42c' }, { ...ev(42), id: 'e42d' }, ev(43)],
      [{ call: 'commit', nth: 2, kind: 'crash-after' }],
      { source: { pageSize: 2, resumes: ['key-gt', 'key-gte'], contract: { kind: 'insertion-stable' } } },
    ),
  },
  {
    name: 'binding-change-same-store',
    rules: ['R2'],
    seed: 'Bind the consumer state to the stream scope, filters, ordering definition, and snapshot or upper bound',
    // Orders are handled up to 45; then the consumer is rebound to refunds on the same store.
    plan: plan([ev(41, 'refund'), ev(42), ev(43, 'refund'), ev(44), ev(45)], [], {
      binding: { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'order' } },
      source: { pageSize: 3, resumes: ['after'], contract: { kind: 'insertion-stable' } },
      // Rebound just before the orders consumer would claim it caught up.
      rebind: { before: { call: 'claim', nth: 0 }, binding: { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: 'refund' } } },
    }),
  },
];

export const ALL_SCENARIOS: readonly NamedScenario[] = [...SEED_SCENARIOS, ...ADVERSITY_SCENARIOS];

export function findScenario(name: string): NamedScenario | undefined {
  return ALL_SCENARIOS.find((s) => s.name === name);
}
