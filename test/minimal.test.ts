import { describe, expect, it } from 'vitest';
import { MINIMAL_WORLDS } from '../scenarios/minimal.js';
import type { Consumer } from '../src/adapter/consumer.js';
import { MUTANTS, type Mutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { adversityOf } from '../src/selftest/shrunk-size.js';

/** Mutants built with pages in flight at once; their fair comparison is the concurrent reference. */
const CONCURRENT = new Set(['max-completed-concurrent']);

/** The reference consumer the mutant is a variation of: same delivery claim, same concurrency. */
function referenceFor(mutant: Mutant): Consumer {
  return referenceConsumer({
    delivery: mutant.consumer.capabilities.delivery,
    ...(CONCURRENT.has(mutant.name) ? { concurrency: 3 } : {}),
  });
}

/**
 * A mutant's declared minimum is the yardstick its shrunk counterexamples are judged by, so
 * it is executed, not argued: its world must kill the mutant with the anomaly it names, must
 * pass the reference consumer it varies (else the world, not the mistake, is at fault), and
 * must be exactly the size the mutant declares, measured as the kill matrix measures.
 */
describe('each mutant declares the size of a world that kills it', () => {
  it('there is one minimal world per mutant, and none for anything else', () => {
    expect(Object.keys(MINIMAL_WORLDS).sort()).toEqual(MUTANTS.map((m) => m.name).sort());
  });

  it.each(MUTANTS.map((m) => [m.name, m] as const))('%s', async (name, mutant) => {
    const plan = MINIMAL_WORLDS[name];
    expect(plan, `no minimal world for ${name}`).toBeDefined();
    if (plan === undefined) return;

    const run = await execute(plan, mutant.consumer);
    const anomalies = run.result.verdict.anomalies;
    const wanted = [mutant.expect, ...mutant.also];
    expect(run.result.verdict.status).toBe('fail');
    expect(
      anomalies.find((a) => wanted.includes(a.kind)),
      `expected ${wanted.join(' or ')}, found ${anomalies.map((a) => a.kind).join(', ') || 'none'}`,
    ).toBeDefined();

    const fair = await execute(plan, referenceFor(mutant));
    expect(fair.result.verdict, 'the reference consumer must pass the same world').toEqual({ status: 'pass', anomalies: [] });

    expect(mutant.minimal).toEqual({ events: plan.events.length, faults: adversityOf(run.history) });
  });
});
