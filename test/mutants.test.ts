import { describe, expect, it } from 'vitest';
import { ANOMALIES } from '../model/anomalies.js';
import { checkProperty } from '../src/run/conformance.js';
import { MUTANT_BUDGET } from '../src/selftest/kill-matrix.js';
import { MUTANTS } from '../src/selftest/mutants.js';
import { renderFailure } from '../src/report/failure.js';
import { SEED } from './support.js';

/**
 * A check that cannot fail is a defect: every mutant must be caught, with the anomaly it
 * is built to produce (the Reactive Streams TCK's shouldFailBy), and its failure text must
 * be one a person can act on.
 */
describe('broken consumers are caught', () => {
  it.each(MUTANTS.map((m) => [m.name, m] as const))('%s: its anomaly points at the rule it breaks', (_, mutant) => {
    // Otherwise the failure's hints would send the reader to the wrong rule.
    expect(ANOMALIES[mutant.expect].rules).toContain(mutant.rule);
  });

  it.each(MUTANTS.map((m) => [`${m.rule} ${m.expect}: ${m.name}`, m] as const))('%s', async (_, mutant) => {
    // The first failing world, unshrunk: what this test proves (caught, with its anomaly, a
    // failure text a person can act on, a replay that gives the same history) holds of any
    // failing world. Shrinking is the report's and test/conformance/shrinking.test.ts's
    // business, and its cost here depended on the fresh seed: empty-page-as-end shrank within
    // 0.12 s at half of 340 seeds and took 35 s at one (4,594 steps), several minutes on a
    // loaded machine with coverage on.
    const outcome = await checkProperty(mutant.consumer, { runs: MUTANT_BUDGET, seed: SEED, shrink: false });
    expect([outcome.searches, outcome.shrinks]).toEqual([1, 0]);
    // The seed is fresh unless TIDEMARK_SEED is set: a failure says it, to be run again.
    const again = `TIDEMARK_SEED=${SEED} to run this again`;
    expect(outcome.status, again).toBe('fail');
    const x = outcome.counterexample!;
    const anomalies = x.result.verdict.anomalies;
    const wanted = [mutant.expect, ...mutant.also];
    const found = anomalies.find((a) => wanted.includes(a.kind));
    expect(found, `expected ${wanted.join(' or ')}, found ${anomalies.map((a) => a.kind).join(', ')}; ${again}`).toBeDefined();

    // Usefulness: the rule and its explanation, the timeline with the witness, a hint, and a
    // replay command that reproduces the very same history.
    const replay = `npx tidemark replay --consumer ${mutant.name} --seed ${outcome.seed} --path "${outcome.path}"`;
    const text = renderFailure({ consumer: mutant.name, execution: x, replay });
    const headline = anomalies[0]!;
    expect(text).toContain(`${headline.kind} (${headline.rules.join(' ')})`);
    expect(text).toContain(headline.explanation);
    expect(text).toMatch(/^» +\d+(-\d+)? +w\d#\d+ /m);
    expect(text).toContain(`If this fails, check ${headline.rules[0]}`);
    expect(text.split('\n').at(-1)).toBe(`Replay: ${replay}`);
    const replayed = await checkProperty(mutant.consumer, { seed: outcome.seed, path: outcome.path! });
    expect(replayed.counterexample?.hash).toBe(x.hash);
  });

  it('R8 token-as-watermark shrinks to at most 3 events and 1 fault, like the seed 41/42/43 example', async () => {
    const mutant = MUTANTS.find((m) => m.name === 'token-as-watermark')!;
    const outcome = await checkProperty(mutant.consumer, { runs: 1000, seed: SEED });
    const plan = outcome.counterexample!.plan;
    expect(plan.events.length).toBeLessThanOrEqual(3);
    expect(plan.faults.length).toBeLessThanOrEqual(1);
  });
});
