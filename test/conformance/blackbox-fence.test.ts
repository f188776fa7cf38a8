import { describe, expect, it } from 'vitest';
import { checkProperty } from '../../src/run/conformance.js';
import { blindLedger, epochFenced } from '../fixtures/blackbox-epoch-fenced.js';
import { SEED } from '../support.js';

/**
 * R6 for a blackbox consumer: "a compare-and-set, lease generation, or ownership epoch so a
 * stale attempt cannot advance shared progress". Its store is its own, so its guard cannot be
 * seen: its writes are judged by what they overwrote. A ledger fenced by an ownership-epoch
 * column, which renews no lease before it writes, passes worlds of competing workers; the
 * same ledger without the fence overwrites a newer generation's progress, and fails.
 */
describe('stale-generation-commit in a blackbox store', () => {
  const worlds = { families: ['generations' as const] };

  it('a ledger whose store keeps an ownership epoch passes worlds of competing workers', async () => {
    const outcome = await checkProperty(epochFenced, { runs: 400, seed: SEED, worlds });
    expect(outcome.status, outcome.counterexample ? JSON.stringify(outcome.counterexample.result.verdict.anomalies[0]) : '').toBe('pass');
  });

  it('the same ledger without its fence fails them: a stale worker overwrites a newer generation\'s progress', async () => {
    const outcome = await checkProperty(blindLedger, { runs: 400, seed: SEED, worlds });
    expect(outcome.status).toBe('fail');
    expect(outcome.counterexample?.result.verdict.anomalies.map((a) => a.kind)).toContain('stale-generation-commit');
  });
});
