/**
 * The store twice, written apart: the world's (src/world/store.ts), which a consumer calls,
 * and ground truth's replica (model/store-replica.ts), written from the rule the documents
 * state. Over generated transactions they must refuse the same commits for the same guard,
 * answer the same `load` and the same completion records: a misreading of the rule on
 * either side shows here as a disagreement, not as a verdict that agrees with itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../model/binding.js';
import type { EventRef } from '../../model/event.js';
import type { StoreOp } from '../../model/history.js';
import { StoreReplica } from '../../model/store-replica.js';
import { WorldError } from '../../src/world/errors.js';
import { Store } from '../../src/world/store.js';
import { SEED } from '../support.js';

const refArb: fc.Arbitrary<EventRef> = fc.record({ id: fc.constantFrom('a', 'b', 'c'), version: fc.integer({ min: 1, max: 2 }) });
const bindingArb = fc.constantFrom('b:orders', 'b:refunds');
/** Watermark values, some equal as JSON with their keys in another order: the compare-and-set compares values, not spellings. */
const valueArb = fc.constantFrom<unknown>(null, 41, 42, { key: [41], id: 'a' }, { id: 'a', key: [41] }, { key: [42], id: '' }, 'q8Zx1c');

const opArb: fc.Arbitrary<StoreOp> = fc.oneof(
  fc.record({ op: fc.constant('effect' as const), event: refArb, payload: fc.constantFrom('p', 'q') }),
  fc.record({ op: fc.constant('complete' as const), event: refArb }),
  fc.record({ op: fc.constant('unless-completed' as const), event: refArb }),
  fc.record({ op: fc.constant('watermark' as const), binding: bindingArb, value: valueArb }),
  fc.record({ op: fc.constant('watermark' as const), binding: bindingArb, value: valueArb, expect: valueArb }),
  fc.record({ op: fc.constant('anchor' as const), binding: bindingArb, token: fc.constantFrom(null, 't1', 't2'), watermark: valueArb }),
  fc.record({ op: fc.constant('outbox' as const), event: refArb, payload: fc.constantFrom('p', 'q') }),
  fc.record({ op: fc.constant('outbox-done' as const), event: refArb }),
  fc.record({ op: fc.constant('dead-letter' as const), event: refArb, reason: fc.constant('refused') }),
);

/** A commit: its operations, its fence (none, or a generation), and the newest generation the lease has granted when it is made. */
const commitArb = fc.record({
  ops: fc.array(opArb, { maxLength: 4 }),
  fence: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
  newest: fc.integer({ min: 0, max: 3 }),
});

const EVERY_REF: readonly EventRef[] = ['a', 'b', 'c'].flatMap((id) => [1, 2].map((version) => ({ id, version })));

/** What the world's store did with a commit: null when it applied, else the guard that refused it. */
function worldCommit(store: Store, ops: readonly StoreOp[], fence: number | null, newest: number): string | null {
  try {
    store.commit(ops, fence, newest);
    return null;
  } catch (error) {
    if (!(error instanceof WorldError) || error.code !== 'conflict' || error.definite !== true) throw error;
    return String(error.cause);
  }
}

describe('the store replica and the world store, over generated transactions', () => {
  it('refuse the same commits for the same guard, and hold the same durable state after each', () => {
    fc.assert(
      fc.property(fc.array(commitArb, { maxLength: 12 }), (commits) => {
        const world = new Store();
        const replica = new StoreReplica();
        for (const [i, { ops, fence, newest }] of commits.entries()) {
          const refused = worldCommit(world, ops, fence, newest);
          // No poison here: the world refuses a poison event's effect before its store sees the commit.
          const decided = replica.refusal(ops, fence, newest, new Set());
          expect(decided, `commit ${i}`).toBe(refused);
          if (decided === null) replica.apply(ops, 'writer');
          expect(canonicalJson(replica.state()), `load after commit ${i}`).toBe(canonicalJson(world.state()));
          expect(EVERY_REF.map((r) => replica.isCompleted(r)), `completed after commit ${i}`).toEqual(world.completed(EVERY_REF));
        }
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('a poison event\u2019s effect or handoff is rejected before any guard is read', () => {
    const replica = new StoreReplica();
    const poison = new Set(['a']);
    expect(replica.refusal([{ op: 'unless-completed', event: { id: 'b', version: 1 } }, { op: 'outbox', event: { id: 'a', version: 1 }, payload: 'p' }], 7, 1, poison)).toBe('rejected');
    expect(replica.refusal([{ op: 'dead-letter', event: { id: 'a', version: 1 }, reason: 'refused' }], null, 0, poison)).toBeNull();
  });
});
