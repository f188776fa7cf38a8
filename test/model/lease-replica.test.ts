/**
 * The lease twice, written apart: the world's (src/world/lease.ts) and ground truth's replica
 * (model/lease-replica.ts), written from the rule the documents state ("a lease granted at
 * step s is held through step s + value - 1"; renewing keeps the generation, taking it over
 * starts a new one). Over generated requests by several incarnations, at increasing steps,
 * they must refuse the same requests and grant the same generations.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaseReplica } from '../../model/lease-replica.js';
import { WorldError } from '../../src/world/errors.js';
import { Lease } from '../../src/world/lease.js';
import { SEED } from '../support.js';

/** Who asks (an incarnation: w1#2 is another holder than w1#1), and how many steps after the previous request. */
const requestArb = fc.record({ who: fc.constantFrom('w1#1', 'w1#2', 'w2#1', 'w3#1'), gap: fc.integer({ min: 1, max: 5 }) });

function worldRequest(lease: Lease, who: string, step: number): number | 'conflict' {
  try {
    return lease.acquire(who, step);
  } catch (error) {
    if (!(error instanceof WorldError) || error.code !== 'conflict' || error.cause !== 'lease-held') throw error;
    return 'conflict';
  }
}

describe('the lease replica and the world lease, over generated requests', () => {
  it('refuse the same requests and grant the same generations', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 3 }), fc.array(requestArb, { maxLength: 16 }), (ttlSteps, first, requests) => {
        const world = new Lease(ttlSteps);
        const replica = new LeaseReplica(ttlSteps);
        let step = first;
        for (const [i, { who, gap }] of requests.entries()) {
          step += gap;
          expect(replica.request(who, step), `request ${i} by ${who} at step ${step}`).toBe(worldRequest(world, who, step));
          expect(replica.generation).toBe(world.generation);
        }
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('is held through step s + ttl - 1 and free at s + ttl; a holder renewing late keeps its generation', () => {
    const lease = new LeaseReplica(3);
    expect(lease.request('w1#1', 10)).toBe(1);
    expect(lease.request('w2#1', 12)).toBe('conflict');
    expect(lease.request('w2#1', 13)).toBe(2);
    expect(lease.request('w2#1', 40)).toBe(2);
    expect(lease.request('w1#1', 41)).toBe('conflict');
    expect(lease.request('w2#2', 43)).toBe(3);
  });
});
