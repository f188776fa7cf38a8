/**
 * The store's transactions and the lease's generations on their own: a commit applies whole
 * or not at all, blind writes are taken as they are, the outbox holds entries until they are
 * marked delivered; the lease refuses a second holder until expiry and numbers generations.
 */
import { describe, expect, it } from 'vitest';
import type { EventRef } from '../../model/event.js';
import type { DurableState, StoreOp } from '../../model/history.js';
import { pos, worldError } from '../support.js';
import type { ConflictCause } from '../../src/world/errors.js';
import { Lease } from '../../src/world/lease.js';
import { Store } from '../../src/world/store.js';

const A: EventRef = { id: 'a', version: 1 };
const B: EventRef = { id: 'b', version: 1 };
const B2: EventRef = { id: 'b', version: 2 };
const C: EventRef = { id: 'c', version: 1 };
const ORDERS = 'b:orders';
const REFUNDS = 'b:refunds';


/** A store that has handled a: completion, watermark 1#a under ORDERS, an anchor and one pending outbox entry. */
function seeded(): Store {
  const store = new Store();
  store.commit(
    [
      { op: 'effect', event: A, payload: 'a' },
      { op: 'complete', event: A },
      { op: 'outbox', event: A, payload: 'a!' },
      { op: 'watermark', binding: ORDERS, value: pos(1, 'a') },
      { op: 'anchor', binding: ORDERS, token: 'tok1', watermark: pos(1, 'a') },
    ],
    null,
    0,
  );
  return store;
}

const SEEDED_STATE: DurableState = {
  watermark: { binding: ORDERS, value: pos(1, 'a') },
  anchor: { binding: ORDERS, token: 'tok1', watermark: pos(1, 'a') },
  outbox: [{ event: A, payload: 'a!' }],
};

/** Every kind of write, so that a transaction that applied any part of itself would show it. */
const WRITES: readonly StoreOp[] = [
  { op: 'effect', event: B, payload: 'b' },
  { op: 'complete', event: B },
  { op: 'outbox', event: B, payload: 'b!' },
  { op: 'outbox-done', event: A },
  { op: 'anchor', binding: ORDERS, token: 'tok2', watermark: pos(2, 'b') },
];

describe('Store: a commit applies whole or not at all', () => {
  it('a commit that holds applies every op', () => {
    const store = seeded();
    expect(store.state()).toEqual(SEEDED_STATE);
    store.commit([...WRITES, { op: 'watermark', binding: ORDERS, value: pos(2, 'b'), expect: pos(1, 'a') }], null, 0);
    expect(store.state()).toEqual({
      watermark: { binding: ORDERS, value: pos(2, 'b') },
      anchor: { binding: ORDERS, token: 'tok2', watermark: pos(2, 'b') },
      outbox: [{ event: B, payload: 'b!' }],
    });
    expect(store.completed([A, B, C])).toEqual([true, true, false]);
  });

  it.each<[string, StoreOp, number | null, number, ConflictCause]>([
    ['R6 a compare-and-set on a watermark that moved', { op: 'watermark', binding: ORDERS, value: pos(3, 'c'), expect: pos(0, 'z') }, null, 0, 'expect'],
    ['R6 a compare-and-set that expects no watermark', { op: 'watermark', binding: ORDERS, value: pos(3, 'c'), expect: null }, null, 0, 'expect'],
    ['R5 unless-completed on a completed event', { op: 'unless-completed', event: A }, null, 0, 'unless-completed'],
    ['R6 a fence from an older generation', { op: 'watermark', binding: ORDERS, value: pos(3, 'c') }, 1, 2, 'fence'],
    ['R6 a fence from a generation that does not exist yet', { op: 'complete', event: C }, 3, 2, 'fence'],
  ])('%s fails definitely, names its guard as the cause, and leaves nothing applied, wherever the guard sits', (_, guard, fence, generation, cause) => {
    for (const ops of [
      [guard, ...WRITES],
      [...WRITES, guard],
    ]) {
      const store = seeded();
      const error = worldError(() => store.commit(ops, fence, generation));
      expect([error.code, error.definite, error.cause]).toEqual(['conflict', true, cause]);
      expect(error.ref).toBeUndefined();
      expect(store.state()).toEqual(SEEDED_STATE);
      expect(store.completed([A, B, C])).toEqual([true, false, false]);
    }
  });

  it('R6 a compare-and-set reads the watermark of its own binding only', () => {
    const store = seeded();
    // ORDERS holds the slot, so for REFUNDS there is no watermark yet.
    expect(worldError(() => store.commit([{ op: 'watermark', binding: REFUNDS, value: pos(2, 'b'), expect: pos(1, 'a') }], null, 0)).code).toBe('conflict');
    store.commit([{ op: 'watermark', binding: REFUNDS, value: pos(2, 'b'), expect: null }], null, 0);
    expect(store.state().watermark).toEqual({ binding: REFUNDS, value: pos(2, 'b') });
  });

  it('R6 a compare-and-set compares the canonical JSON of the values, however each was built', () => {
    // Each case: the value stored, what a compare-and-set expects, and whether it holds.
    const cases: [unknown, unknown, boolean][] = [
      [{ key: [1], id: 'a' }, { id: 'a', key: [1] }, true], // keys in another order
      [{ key: [1], id: 'a', note: undefined }, { key: [1], id: 'a', note: null }, true], // undefined prints as null
      [[1, 2], [1, 2], true],
      [[1, 2], [1, 2, undefined], false], // an array prints every index
      [[1, undefined], [1, null], true],
      [{ key: [1], id: 'a' }, { key: [1], id: 'a', more: 1 }, false],
      [{ key: [1], id: 'a' }, { key: [2], id: 'a' }, false],
      [{ n: 0 }, { n: -0 }, true],
      ['q8Zx1c', 'q8Zx1c', true],
      [{ key: [1] }, [1], false],
    ];
    for (const [stored, expected, holds] of cases) {
      const store = new Store();
      store.commit([{ op: 'watermark', binding: ORDERS, value: stored }], null, 0);
      const ops: StoreOp[] = [{ op: 'watermark', binding: ORDERS, value: pos(9, 'z'), expect: expected }];
      if (holds) store.commit(ops, null, 0);
      else expect(worldError(() => store.commit(ops, null, 0)).code).toBe('conflict');
    }
  });

  it('R6 a fence of the current generation, or none at all, passes', () => {
    const store = seeded();
    store.commit([{ op: 'complete', event: B }], 4, 4);
    store.commit([{ op: 'complete', event: C }], null, 4);
    expect(store.completed([B, C])).toEqual([true, true]);
  });

  it('R5 unless-completed is judged per version, and passes for an event not yet completed', () => {
    const store = seeded();
    store.commit([{ op: 'complete', event: B }], null, 0);
    store.commit([{ op: 'unless-completed', event: B2 }, { op: 'complete', event: B2 }], null, 0);
    expect(store.completed([B, B2, { id: 'b', version: 3 }])).toEqual([true, true, false]);
  });

  it('R3 blind watermark writes are accepted as they are: lower, foreign, or no position at all', () => {
    const store = seeded();
    store.commit([{ op: 'watermark', binding: ORDERS, value: pos(0, 'z') }], null, 7);
    expect(store.state().watermark).toEqual({ binding: ORDERS, value: pos(0, 'z') });
    store.commit([{ op: 'watermark', binding: REFUNDS, value: 'q8Zx1c' }], null, 7);
    expect(store.state().watermark).toEqual({ binding: REFUNDS, value: 'q8Zx1c' });
  });

  it('R5 outbox entries appear in state() in the order written until outbox-done drops them', () => {
    const store = new Store();
    store.commit([{ op: 'outbox', event: B, payload: 'b!' }, { op: 'outbox', event: A, payload: 'a!' }], null, 0);
    store.commit([{ op: 'outbox', event: C, payload: 'c!' }], null, 0);
    expect(store.state().outbox).toEqual([
      { event: B, payload: 'b!' },
      { event: A, payload: 'a!' },
      { event: C, payload: 'c!' },
    ]);
    store.commit([{ op: 'outbox-done', event: A }], null, 0);
    expect(store.state().outbox).toEqual([
      { event: B, payload: 'b!' },
      { event: C, payload: 'c!' },
    ]);
    // Done for another version of b drops nothing.
    store.commit([{ op: 'outbox-done', event: B2 }], null, 0);
    expect(store.state().outbox.map((o) => o.event)).toEqual([B, C]);
    store.commit([{ op: 'outbox-done', event: B }, { op: 'outbox-done', event: C }], null, 0);
    expect(store.state().outbox).toEqual([]);
  });

  it('state() is a snapshot: a later commit does not change what was read', () => {
    const store = seeded();
    const read = store.state();
    store.commit([...WRITES, { op: 'watermark', binding: ORDERS, value: pos(2, 'b') }], null, 0);
    expect(read).toEqual(SEEDED_STATE);
  });
});

describe('Lease', () => {
  it('R6 a second holder is refused, definitely, until the lease expires', () => {
    const lease = new Lease(8);
    expect(lease.acquire('w1#1', 0)).toBe(1);
    for (const now of [1, 7]) {
      const error = worldError(() => lease.acquire('w2#1', now));
      expect([error.code, error.definite, error.cause]).toEqual(['conflict', true, 'lease-held']);
      expect(error.message).toContain('w1#1');
    }
    expect(lease.generation).toBe(1);
    expect(lease.acquire('w2#1', 8)).toBe(2);
    expect(lease.generation).toBe(2);
  });

  it('R6 the holder renewing keeps its generation, and the renewal extends the lease', () => {
    const lease = new Lease(8);
    expect(lease.acquire('w1#1', 0)).toBe(1);
    expect(lease.acquire('w1#1', 6)).toBe(1);
    expect(worldError(() => lease.acquire('w2#1', 13)).code).toBe('conflict');
    expect(lease.acquire('w2#1', 14)).toBe(2);
  });

  it('R6 the holder renewing after expiry keeps its generation when nobody took the lease', () => {
    const lease = new Lease(3);
    expect(lease.acquire('w1#1', 0)).toBe(1);
    expect(lease.acquire('w1#1', 100)).toBe(1);
    expect(lease.generation).toBe(1);
  });

  it('R6 a new holder after expiry gets a new generation, and so does the old holder taking it back', () => {
    const lease = new Lease(3);
    expect(lease.acquire('w1#1', 0)).toBe(1);
    expect(lease.acquire('w2#1', 3)).toBe(2);
    // w1 is a stale holder now: refused while w2 holds the lease, a new generation after.
    expect(worldError(() => lease.acquire('w1#1', 4)).code).toBe('conflict');
    expect(lease.acquire('w1#1', 6)).toBe(3);
    // A new incarnation of the same worker is another holder.
    expect(lease.acquire('w1#2', 9)).toBe(4);
  });
});
