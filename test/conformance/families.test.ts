import { describe, expect, it } from 'vitest';
import { FAMILIES } from '../../scenarios/arbitraries.js';
import { checkProperty } from '../../src/conformance.js';
import { referenceConsumer } from '../../src/consumers/reference.js';
import { SEED } from '../support.js';

/**
 * Swarm testing switches fault families on and off per world; here each family is forced
 * on for 1,000 worlds so that none of them can go quiet by chance.
 */
describe('the reference consumer, 1,000 worlds per fault family', () => {
  it.each(FAMILIES)('%s', async (family) => {
    const outcome = await checkProperty(referenceConsumer(), { runs: 1000, seed: SEED, worlds: { families: [family] } });
    expect({ status: outcome.status, seed: outcome.seed, path: outcome.path }).toEqual({ status: 'pass', seed: SEED, path: null });
  });
});
