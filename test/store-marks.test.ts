import { describe, expect, it } from 'vitest';
import { checkProperty } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';
import { SEED } from './support.js';

/**
 * A store that marks an event done tells every later reader to skip it. An omission is judged
 * from the store too, not only from a caught-up claim: a run that ends failing visibly, as
 * every run on a source that promises nothing (`none`) must, judges no claim at all.
 */
describe('the store is judged, however the run ended', () => {
  it("completion-before-effect, declaring only `none` sources (so every run ends failing visibly), is failed for the completion record of an event whose effect never came", async () => {
    const mutant = findMutant('completion-before-effect')!.consumer;
    const onNone = { ...mutant, name: 'completion-before-effect-on-none', capabilities: { ...mutant.capabilities, contracts: ['none' as const] } };
    const outcome = await checkProperty(onNone, { runs: 1000, seed: SEED, shrink: false });
    expect(outcome.status, `seed ${SEED}`).toBe('fail');
    const anomaly = outcome.counterexample?.result.verdict.anomalies[0];
    expect(anomaly?.kind).toBe('omission');
    expect(anomaly?.explanation).toContain('the store marks it done (a completion record)');
  });
});
