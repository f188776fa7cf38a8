/**
 * The paginated source twice, written apart: the world's (src/world/source.ts), which a
 * consumer calls, and ground truth's replica (model/source-replica.ts), written from the
 * rules of docs/design.md and PAGE_QUIRK_MEANINGS. Over generated streams, bindings,
 * requests of every resume form, page quirks and changes within each contract, they must
 * refuse the same requests with the same code and serve the same pages: the same event
 * versions in the same order, the same end, the same head, a quirk firing on both or on
 * neither. The replica learns the world's tokens only from the pages served, as ground truth
 * does from a history.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Binding } from '../../model/binding.js';
import type { SourceEvent } from '../../model/event.js';
import { HISTORY_VERSION, PAGE_QUIRKS, type Contract, type HistoryHeader, type Page, type PageQuirk, type Resume, type ResumeStyle } from '../../model/history.js';
import { ownHoldings, SourceReplica } from '../../model/source-replica.js';
import type { MutationSpec } from '../../scenarios/plan.js';
import { WorldError } from '../../src/world/errors.js';
import { Source } from '../../src/world/source.js';
import { SEED } from '../support.js';

const ALL: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['seq'], upTo: null };
const ORDERS: Binding = { ...ALL, filter: { kind: 'equals', attr: 'kind', value: 'order' } };

const eventsArb = fc
  .uniqueArray(fc.record({ id: fc.constantFrom('a', 'B', 'b', 'c', 'd', 'e', 'm0', 'm2', 'x', 'y'), key: fc.integer({ min: 0, max: 6 }), order: fc.boolean() }), { selector: (e) => e.id, maxLength: 9 })
  .map((draws) => draws.map(({ id, key, order }): SourceEvent => ({ id, version: 1, key: [key], attrs: { kind: order ? 'order' : 'refund' }, payload: `${id}:v1` })));

const bindingArb = fc.record({ filtered: fc.boolean(), upTo: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }) }).map(({ filtered, upTo }): Binding => ({ ...(filtered ? ORDERS : ALL), upTo }));

const contractArb = fc.constantFrom<Contract>({ kind: 'snapshot' }, { kind: 'insertion-stable' }, { kind: 'replay-window', window: 2 }, { kind: 'none' });

/** A resume form; `token` picks one of the tokens served so far (or one never minted), `after` a position or something that is not one. */
const resumeArb = fc.oneof(
  fc.constant({ kind: 'start' as const }),
  fc.record({ kind: fc.constant('token' as const), pick: fc.nat(12) }),
  fc.record({ kind: fc.constant('after' as const), key: fc.integer({ min: -1, max: 7 }), id: fc.constantFrom('', 'a', 'b', 'c', 'z'), junk: fc.boolean() }),
  // A skip past the key (page N of a key query) a third of the time, now and then one that is no count.
  fc.record({ kind: fc.constantFrom('key-gt' as const, 'key-gte' as const), key: fc.integer({ min: -1, max: 8 }), skip: fc.option(fc.oneof(fc.integer({ min: -1, max: 6 }), fc.constant(1.5)), { nil: undefined, freq: 2 }) }),
  fc.record({ kind: fc.constant('offset' as const), offset: fc.integer({ min: -1, max: 12 }) }),
);

const actionArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ act: fc.constant('fetch' as const), resume: resumeArb, limit: fc.integer({ min: 0, max: 5 }), quirk: fc.option(fc.constantFrom(...PAGE_QUIRKS), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ act: fc.constant('mutate' as const), kind: fc.constantFrom<MutationSpec['kind']>('insert', 'move', 'flip'), target: fc.nat(12), back: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ act: fc.constant('rebind' as const), binding: bindingArb }) },
);

type Action = typeof actionArb extends fc.Arbitrary<infer A> ? A : never;

const versions = (events: readonly SourceEvent[]): string[] => events.map((e) => `${e.id}@${e.version}`);

function header(initial: readonly SourceEvent[], binding: Binding, contract: Contract, pageSize: number, resumes: readonly ResumeStyle[], newestFirst: boolean): HistoryHeader {
  return {
    version: HISTORY_VERSION,
    initial,
    binding,
    contract,
    delivery: 'at-least-once',
    poison: [],
    pageSize,
    leaseTtlSteps: 1,
    resumes,
    faults: [],
    mutations: [],
    rebind: null,
    workers: 1,
    consumer: 'whitebox',
    ...(newestFirst ? { order: 'newest-first' as const } : {}),
  };
}

/** Runs one sequence of actions on both sources and compares every answer. */
function compare(initial: readonly SourceEvent[], binding0: Binding, contract: Contract, pageSize: number, resumes: readonly ResumeStyle[], newestFirst: boolean, actions: readonly Action[]): void {
  const world = new Source(initial, { pageSize, resumes, contract, ...(newestFirst ? { order: 'newest-first' as const } : {}) }, 'differential');
  const contradictions: string[] = [];
  const replica = new SourceReplica(header(initial, binding0, contract, pageSize, resumes, newestFirst), (what) => contradictions.push(what), ownHoldings());
  let binding = binding0;
  const tokens: string[] = [];
  for (const [i, action] of actions.entries()) {
    const at = `action ${i} (${JSON.stringify(action)})`;
    if (action.act === 'rebind') {
      binding = action.binding;
      replica.rebind(binding);
      continue;
    }
    if (action.act === 'mutate') {
      const { event, mutation } = world.mutate({ before: { call: 'fetch', nth: 0 }, kind: action.kind, target: action.target, back: action.back }, binding);
      replica.mutate(event, mutation);
      expect(contradictions, `${at}: the world's change is one the replica's contract allows`).toEqual([]);
      expect(replica.head, at).toBe(world.head());
      continue;
    }
    const r = action.resume;
    const resume: Resume =
      r.kind === 'token'
        ? { kind: 'token', token: tokens[r.pick % (tokens.length + 1)] ?? 'never-minted' }
        : r.kind === 'after'
          ? { kind: 'after', position: r.junk ? `${r.key}` : { key: [r.key], id: r.id } }
          : r.kind === 'offset'
            ? { kind: 'offset', offset: r.offset }
            : r.kind === 'start'
              ? { kind: 'start' }
              : { kind: r.kind, key: [r.key], ...(r.skip === undefined ? {} : { skip: r.skip }) };
    let page: Page | null = null;
    let refused: string | null = null;
    try {
      page = world.fetch(binding, { resume, limit: action.limit }, action.quirk as PageQuirk | undefined);
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      refused = error.code;
    }
    const serving = replica.serve(resume, action.limit, action.quirk as PageQuirk | undefined);
    if ('refused' in serving) {
      expect(refused, `${at}: refused by the replica with ${serving.refused}`).toBe(serving.refused);
      expect(serving.fired === 'stale', `${at}: a stale quirk fired on one side only`).toBe(world.quirked);
      if (serving.fired === 'stale' && resume.kind === 'token') replica.expire(resume.token);
      continue;
    }
    expect(refused, `${at}: the replica serves a page`).toBeNull();
    const served = page as Page;
    expect(versions(served.events), `${at}: the page's events`).toEqual(versions(serving.repeat?.events ?? serving.events));
    if (serving.repeat === undefined) expect(served.next === null, `${at}: whether the page ends the stream`).toBe(serving.ends);
    else expect(served, `${at}: a repeat is the previous page itself`).toEqual(serving.repeat);
    expect(serving.fired !== undefined, `${at}: the quirk fired on one side only (replica: ${String(serving.fired)})`).toBe(world.quirked);
    expect(served.head, `${at}: the head`).toBe(replica.head);
    expect(replica.served(resume, served, serving), at).toBeNull();
    if (served.next !== null) tokens.push(served.next);
  }
}

describe('the source replica and the world source, over generated streams, requests and changes', () => {
  it('ascending: the same refusals and the same pages, every resume form offered or not, every quirk, under changes and rebinds', () => {
    fc.assert(
      fc.property(
        eventsArb,
        bindingArb,
        contractArb,
        fc.integer({ min: 1, max: 4 }),
        fc.subarray<ResumeStyle>(['after', 'key-gt', 'key-gte', 'offset']),
        fc.array(actionArb, { maxLength: 24 }),
        (initial, binding, contract, pageSize, resumes, actions) => compare(initial, binding, contract, pageSize, resumes, false, actions),
      ),
      { seed: SEED, numRuns: 600 },
    );
  });

  it('newest first: the same refusals and the same pages, downwards', () => {
    fc.assert(
      fc.property(eventsArb, bindingArb, fc.constantFrom<Contract>({ kind: 'insertion-stable' }, { kind: 'none' }), fc.integer({ min: 1, max: 4 }), fc.array(actionArb, { maxLength: 24 }), (initial, binding, contract, pageSize, actions) =>
        compare(initial, binding, contract, pageSize, [], true, actions),
      ),
      { seed: SEED, numRuns: 400 },
    );
  });
});
