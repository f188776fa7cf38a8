import type { SourceEvent } from '../model/event.js';
import { PAGE_QUIRKS, type Fault, type MutationSpec, type Plan } from '../scenarios/plan.js';

/** How much of everything an adverse world has: so many of each per this many events. */
export const ADVERSITY_EVERY = 100;

export interface LargeWorldOptions {
  readonly pageSize?: number;
  readonly seed?: string;
  /** Faults, page quirks, changes and a competing worker, in proportion to the stream (see largeWorldPlan). */
  readonly adverse?: boolean;
}

/**
 * One world for measuring how a world's cost grows with its stream: `events` events two to a
 * key (ties across page boundaries), a third of them filtered out, a replay-window source
 * that resumes after a position, so that a consumer picks up from its watermark rather than
 * from the start, and a budget large enough for the reference consumer to finish.
 *
 * Calm: one worker, no faults, no changes. Adverse: for every ADVERSITY_EVERY events, a crash
 * before a commit, a crash after an emit, a failed emit, a commit that times out, a page
 * quirk (each kind in turn) and two changes of the source (insert, move, flip in turn); and a
 * second worker that takes the lease over now and then. Every fault is placed after the
 * consumer's nth effect and every change before an eligible event's first emit, so each
 * lands at the same depth into the stream whatever its length: the adversity per event is
 * the same in every size, and a cost per event that grows with the size is the harness's.
 */
export function largeWorldPlan(events: number, options: LargeWorldOptions = {}): Plan {
  const pageSize = options.pageSize ?? 8;
  const adverse = options.adverse ?? false;
  const stream: SourceEvent[] = Array.from({ length: events }, (_, i) => {
    const kind = i % 3 === 0 ? 'refund' : 'order';
    const id = `e${String(i).padStart(6, '0')}`;
    return { id, version: 1, key: [Math.floor(i / 2)], attrs: { kind }, payload: `${id}:${kind}` };
  });
  const blocks = adverse ? Math.floor(events / ADVERSITY_EVERY) : 0;
  const faults: Fault[] = [];
  const mutations: MutationSpec[] = [];
  for (let b = 0; b < blocks; b++) {
    // The effects of the block's events, counted from the start of the run (replays count too,
    // so these drift a little earlier than the block's events: no matter, they stay in proportion).
    const at = (offset: number): number => b * ADVERSITY_EVERY + offset;
    faults.push(
      { call: 'commit', nth: 0, since: at(10), kind: 'crash-before' },
      { call: 'emit', nth: 0, since: at(30), kind: 'crash-after' },
      { call: 'emit', nth: 0, since: at(50), kind: 'error' },
      { call: 'commit', nth: 0, since: at(70), kind: 'timeout' },
      { call: 'fetch', nth: 0, since: at(90), kind: PAGE_QUIRKS[b % PAGE_QUIRKS.length] as Fault['kind'] },
    );
    for (const [j, offset] of [20, 80].entries()) {
      // An eligible event: the first emit about it comes in every run that reaches it.
      const i = at(offset) - (at(offset) % 3 === 0 ? 1 : 0);
      mutations.push({
        before: { call: 'emit', nth: 0, after: stream[i]?.id as string },
        kind: (['insert', 'move', 'flip'] as const)[(2 * b + j) % 3] as MutationSpec['kind'],
        target: (2 * b + j) * 7919,
        back: 3,
      });
    }
  }
  return {
    events: stream,
    binding: { scope: 'orders', filter: { kind: 'equals', attr: 'kind', value: 'order' }, ordering: ['ts'], upTo: null },
    source: { pageSize, resumes: ['after', 'key-gt', 'key-gte', 'offset'], contract: { kind: 'replay-window', window: 4 } },
    faults,
    // Mostly the first worker, the second one call in eight: it takes the lease whenever the
    // first one's lapses, and the first one's fenced commits then fail until it takes it back.
    schedule: adverse ? Array.from({ length: 8 * events }, (_, i) => (i % 8 === 7 ? 1 : 0)) : [],
    seed: options.seed ?? '7',
    budget: { adversity: events * 20, drain: events * 20 },
    workers: adverse ? 2 : 1,
    // A page's worth of calls and more: the holder renews once a page, so the lease lapses
    // only when the holder was kept waiting.
    leaseTtlSteps: adverse ? 4 * pageSize : 10,
    mutations,
    rebind: null,
    poison: [],
  };
}
