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

const ORDERS: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['ts'], upTo: null };

function ev(n: number, kind = 'order'): SourceEvent {
  return { id: `e${n}`, version: 1, key: [n], attrs: { kind }, payload: `e${n}:${kind}` };
}

function plan(events: SourceEvent[], faults: Fault[], over: Partial<Plan> = {}): Plan {
  return {
    events,
    binding: ORDERS,
    source: { pageSize: 3, resumes: [], contract: { kind: 'insertion-stable' } },
    faults,
    schedule: [],
    seed: '0',
    budget: DEFAULT_BUDGET,
    workers: 1,
    leaseTtl: 8,
    mutations: [],
    rebind: null,
    ...over,
  };
}

const E41_43 = [ev(41), ev(42), ev(43)];
/** Two pages: [41 42] [43], so there is a page boundary to crash at. */
const TWO_PAGES = { source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } } } as const;

export const NAMED_SCENARIOS: readonly NamedScenario[] = [
  {
    name: 'failed-event-holds-watermark',
    rules: ['R6', 'R7', 'R8'],
    seed: 'The effect for 41 commits, the effect for 42 fails, and 43 is not handled. The durable watermark becomes 41 ... A retry replays from after 41 ... and attempts 42 again.',
    plan: plan(E41_43, [{ call: 'emit', nth: 1, kind: 'error' }]),
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
    plan: plan(E41_43, [{ call: 'emit', nth: 0, kind: 'crash-before' }], TWO_PAGES),
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

export function findScenario(name: string): NamedScenario | undefined {
  return NAMED_SCENARIOS.find((s) => s.name === name);
}
