import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEligible } from '../../model/binding.js';
import { FAMILIES, planArb } from '../../scenarios/arbitraries.js';
import { checkProperty } from '../../src/run/conformance.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute } from '../../src/run/execute.js';
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

/**
 * A rebind is tied to the end of the stream, to a landmark in mid-stream, or to nothing. The
 * first is what lets shrinking drop events around it; the others keep mid-stream rebinds in
 * the mix. Each must happen, not only be planned, in a fair share of worlds.
 */
describe('rebinds in generated worlds', () => {
  it('fire at the end of the stream, in mid-stream and untied', async () => {
    const plans = fc.sample(planArb({ families: ['rebind'] }), { numRuns: 300, seed: SEED });
    const fired = { end: 0, landmark: 0, untied: 0 };
    for (const plan of plans) {
      const history = (await execute(plan, referenceConsumer())).history;
      if (plan.rebind === null || !history.steps.some((s) => s.kind === 'rebind')) continue;
      const eligible = plan.events.filter((e) => isEligible(plan.binding, e));
      const after = plan.rebind.before.after;
      fired[after === undefined ? 'untied' : after === eligible.at(-1)?.id ? 'end' : 'landmark'] += 1;
    }
    for (const count of Object.values(fired)) expect(count).toBeGreaterThan(plans.length / 20);
  });
});
