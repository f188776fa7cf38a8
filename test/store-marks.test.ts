import { describe, expect, it } from 'vitest';
import { checkProperty } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';
import { SEED } from './support.js';
import blackbox from '../examples/blackbox-consumer.js';
import { plan } from '../scenarios/named.js';
import { execute } from '../src/run/execute.js';

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

  it("a blackbox consumer's run that ends failing visibly leaves omission untested, saying its store's marks are not seen", async () => {
    const none = plan([0, 1, 2].map((k) => ({ id: `e${k}`, version: 1, key: [k], attrs: {}, payload: `e${k}` })), [], { source: { pageSize: 2, resumes: [], contract: { kind: 'none' } } });
    const run = await execute(none, blackbox);
    expect(run.result.verdict.status).toBe('pass');
    expect(run.result.results.omission).toEqual({ status: 'untested', reason: "the consumer never claimed caught-up, and what a blackbox consumer's own store marks done is not seen" });
  });
});
