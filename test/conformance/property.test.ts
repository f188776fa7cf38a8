import { describe, expect, it } from 'vitest';
import { checkProperty } from '../../src/run/conformance.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { SEED } from '../support.js';

describe('the reference consumer over generated worlds', () => {
  it.each([
    referenceConsumer({ name: 'at-least-once' }),
    referenceConsumer({ name: 'exactly-once', delivery: 'exactly-once' }),
    referenceConsumer({ name: 'concurrent', concurrency: 3 }),
    referenceConsumer({ name: 'outbox', delivery: 'outbox' }),
    // A cursor-value bookmark, { key, id: '' }, re-read inclusively and deduplicated: a point
    // of the order that covers what is done, though no event ever held it.
    referenceConsumer({ name: 'cursor bookmark', bookmark: 'cursor' }),
  ])('R1-R10 $name passes 1,000 generated worlds', async (consumer) => {
    const outcome = await checkProperty(consumer, { runs: 1000, seed: SEED });
    expect({ status: outcome.status, seed: outcome.seed, path: outcome.path }).toEqual({ status: 'pass', seed: SEED, path: null });
    expect(outcome.runs).toBe(1000);
  });
});
