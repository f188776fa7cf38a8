import type { Binding } from '../model/binding.js';
import type { SourceEvent } from '../model/event.js';
import { ev, ORDERS, plan } from './named.js';
import type { Plan, SourceSpec } from './plan.js';

function onePerPage(): SourceSpec {
  return { pageSize: 1, resumes: [], contract: { kind: 'insertion-stable' } };
}

/** A second event at ts `n`, told apart from `ev(n)` only by its id. */
function tied(n: number, suffix: string): SourceEvent {
  const id = `e${n}${suffix}`;
  return { ...ev(n), id, payload: `${id}:order` };
}

function byKind(kind: string): Binding {
  return { ...ORDERS, filter: { kind: 'equals', attr: 'kind', value: kind } };
}

/** Two workers and a three-step lease, so one can lose it to the other within a few calls. */
function race(schedule: readonly number[]): Partial<Plan> {
  return { workers: 2, leaseTtlSteps: 3, schedule };
}

/** w2 makes its first five calls (lease, load, fetch, completed, its first write), then waits. */
const STALL_AFTER_FIRST_WRITE = [1, 1, 1, 1, 1];
/** w1 takes the lease; w2 asks three times and takes generation 2 once it has lapsed. */
const LOSE_LEASE_UNAWARE = [0, 1, 1, 1];

/**
 * Each mutant's smallest counterexample, written by hand and executed by its test: the
 * yardstick a shrunk counterexample is measured against. Size is what the kill matrix
 * measures: the plan's events, and the adversity that actually happened (faults and page
 * quirks that fired, source mutations, rebinds). Extra workers, schedules, lease expiry and
 * poison are not adversity, so a world may use them to stay small.
 *
 * Smallest means the fewest events and adversity together; on a tie, the calmer world. A
 * source mutation can always stand in for a listed event, so preferring fewer events on a
 * tie would only trade events for adversity without showing the mistake any better.
 */
export const MINIMAL_WORLDS: Readonly<Record<string, Plan>> = {
  // Page one of two carries a next token, which the mutant commits as its watermark.
  // (One event and an empty page with a token also shows it: same total, one more fault.)
  'token-as-watermark': plan([ev(1), ev(2)], [], { source: onePerPage() }),
  // The only effect fails, yet the watermark moves to the largest position fetched: e1 itself.
  'max-position-fetched': plan([ev(1)], [{ call: 'emit', nth: 0, kind: 'error' }]),
  // The only effect fails definitely; the mutant logs it and commits a watermark past it.
  'skips-failed-event': plan([ev(1)], [{ call: 'emit', nth: 0, kind: 'error' }]),
  // No crash needed: the checkpoint past e1 is committed before e1's effect exists.
  'checkpoint-before-flush': plan([ev(1)], []),
  // w2 writes e1's completion record, then stalls before the effect until its lease lapses;
  // w1 takes over, trusts the record and commits a watermark past an event never applied.
  'completion-before-effect': plan([ev(1)], [], race(STALL_AFTER_FIRST_WRITE)),
  // Two events tied at ts 1 on one-event pages: resuming with key > 1 skips the second.
  'strict-key-resume': plan([ev(1), tied(1, 'b')], [], { source: { ...onePerPage(), resumes: ['key-gt'] } }),
  // The drain phase's restart replays from the start and commits e1 below the stored e2.
  'lowers-watermark-on-retry': plan([ev(1), ev(2)], [], { source: onePerPage() }),
  // w2 takes generation 2 once w1's lease lapses; w1 never renews on a one-page stream
  // and writes its watermark blind, from generation 1.
  'blind-watermark-write': plan([ev(1)], [], race(LOSE_LEASE_UNAWARE)),
  // The same race: the fence refuses w1's stale commit, and it writes again unfenced.
  'zombie-after-lease-loss': plan([ev(1)], [], race(LOSE_LEASE_UNAWARE)),
  // e1 sits at the head, inside the replay window, so no watermark is ever committed and the
  // drain phase replays it; without a completion check the effect is applied twice.
  'no-dedup-exactly-once': plan([ev(1)], [], { source: { pageSize: 3, resumes: [], contract: { kind: 'replay-window', window: 1 } } }),
  // w2 commits e1's effect, then stalls before its completion record until its lease lapses;
  // w1 finds no record and commits the effect again.
  'split-effect-completion': plan([ev(1)], [], race(STALL_AFTER_FIRST_WRITE)),
  // The refund e1 sorts after the order e2; e1's effect fails, and the "prefix" [e2] moves
  // the watermark past it.
  'sorts-by-mutable-field': plan([ev(1, 'refund'), ev(2)], [{ call: 'emit', nth: 1, kind: 'error' }]),
  // The first page comes back empty with a token, and the mutant calls that the end.
  'empty-page-as-end': plan([ev(1)], [{ call: 'fetch', nth: 0, kind: 'empty' }]),
  // An empty page is as short as a page gets: one event and one quirk, where the `short`
  // quirk would need a second event.
  'short-page-as-end': plan([ev(1)], [{ call: 'fetch', nth: 0, kind: 'empty' }]),
  // w2 handles page one and stalls until its lease lapses; w1 resumes with key >= 1, gets
  // only e1 back, nothing new, and calls it the end. (One event and an empty page also
  // shows it: same total, one more fault.)
  'filtered-page-as-end': plan([ev(1), ev(2)], [], {
    source: { ...onePerPage(), resumes: ['key-gte'] },
    ...race([1, 1, 1, 1, 1, 1, 1]),
  }),
  // Two events tied at the head's ts 1: seeing the first, the mutant thinks it is caught up.
  'early-caught-up': plan([ev(1), tied(1, 'b')], [], { source: onePerPage() }),
  // The snapshot's bound is inclusive, and the only event sits on it.
  'snapshot-bound-exclusive': plan([ev(1)], [], { binding: { ...ORDERS, upTo: 1 }, source: { pageSize: 3, resumes: [], contract: { kind: 'snapshot' } } }),
  // The source promises nothing, yet the mutant commits a watermark at e5; a late event
  // lands behind it at ts 4, and the mutant claims caught-up instead of failing visibly.
  'trusts-numeric-hole': plan([ev(5)], [], {
    source: { pageSize: 3, resumes: [], contract: { kind: 'none' } },
    mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 1 }],
  }),
  // e4 puts the head at 4; half the window of 4 settles e1, the whole window would not. A
  // late event then lands at 0, inside the window but behind the mutant's watermark.
  'narrow-replay-window': plan([ev(1), ev(4)], [], {
    source: { pageSize: 3, resumes: [], contract: { kind: 'replay-window', window: 4 } },
    mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 4 }],
  }),
  // Orders are handled through e2; rebound to refunds, the mutant resumes from that same
  // watermark and skips the refund e1 behind it.
  'watermark-across-bindings': plan([ev(1, 'refund'), ev(2)], [], {
    binding: byKind('order'),
    rebind: { before: { call: 'claim', nth: 0 }, binding: byKind('refund') },
  }),
  // Every effect for e1 is refused; retrying forever, the mutant never catches up.
  'poison-retry-forever': plan([ev(1)], [], { poison: ['e1'] }),
  // Handled together, e1's effect fails and e2's lands; the watermark moves to e2, the
  // largest completed, past e1.
  'max-completed-concurrent': plan([ev(1), ev(2)], [{ call: 'emit', nth: 0, kind: 'error' }]),
  // Any repeat of its effect carries a stamp the source never served: w2 emits e1 and stalls
  // before its completion record until its lease lapses, and w1 emits e1 again.
  'effect-stamped-per-attempt': plan([ev(1)], [], race(STALL_AFTER_FIRST_WRITE)),
  // The mutant reads e1 to the end and bookmarks ts 1; before its claim a new row lands at
  // the same ts 1 with a larger id (m0). Resuming strictly after ts 1, the drain skips it.
  'cursor-value-exclusive': plan([ev(1)], [], {
    mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 1 }],
  }),
  // e1's first two deliveries fail: the retry in place fails too, and the mutant parks a good event.
  'one-retry-per-event': plan(
    [ev(1)],
    [
      { call: 'emit', nth: 0, kind: 'error' },
      { call: 'emit', nth: 1, kind: 'error' },
    ],
  ),
  // A, B, A': w1 takes the lease, reads e1 and waits with its work in flight while the lease
  // lapses; w2 takes it over, handles e1 and e2 and bookmarks e2; w1 comes back, takes the
  // lease back for its commit and writes its stale bookmark e1 under the new generation.
  'work-survives-lease-retake': plan([ev(1), ev(2)], [], {
    source: onePerPage(),
    ...race([0, 0, 0, 0, ...Array.from({ length: 15 }, () => 1)]),
  }),
  // A newest-first source, one event a page: the first page is e2, and the mutant saves it as
  // its bookmark before reading e1 below it.
  'checkpoints-mid-newest-first-read': plan([ev(1), ev(2)], [], { source: { ...onePerPage(), order: 'newest-first' } }),
  // e1 and E1 tied at ts 1 on one page: the stable order puts E1 first (capitals come first in
  // code units), a locale's collation e1. E1's effect fails; the mutant's prefix, e1, passes it.
  'sorts-ids-by-locale': plan([ev(1), { ...ev(1), id: 'E1', payload: 'E1:order' }], [{ call: 'emit', nth: 1, kind: 'error' }]),
  // Two events in the same second, at 1.5 and 1.75, on pages of one: the bookmark after the
  // first page, e1's rounded to 2, passes e2 before it is read.
  'rounds-bookmark': plan([{ ...ev(1), key: [1.5] }, { ...ev(2), key: [1.75] }], [], { source: onePerPage() }),
  // e1's delivery is lost on its way and times out; the mutant records e1 done and passes it.
  'timeout-taken-as-done': plan([ev(1)], [{ call: 'emit', nth: 0, kind: 'lost' }]),
  // A scroll of one event a page: its second request (the scroll's token) is served e2 but
  // times out, and the retry gets what follows e2: nothing, the end.
  'retries-served-scroll-request': plan([ev(1), ev(2)], [{ call: 'fetch', nth: 1, kind: 'timeout' }], { source: { ...onePerPage(), resumes: ['key-gte'], tokens: 'scroll' } }),
  // An iterator chain of one event a page: the batch for e1's token comes back empty, and
  // that token, sent again, serves it again; the drain starts from the anchor, that token.
  'retries-empty-iterator-batch': plan([ev(1), ev(2)], [{ call: 'fetch', nth: 1, kind: 'empty' }], { source: { ...onePerPage(), tokens: 'iterator' } }),
};
