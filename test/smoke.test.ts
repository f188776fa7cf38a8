import { test, expect } from 'vitest';
import fc from 'fast-check';
import { NAMED_SCENARIOS } from '../scenarios/named.js';
import { planArb } from '../scenarios/arbitraries.js';
import { execute } from '../src/execute.js';
import { referenceConsumer } from '../src/consumers/reference.js';

test('smoke', async () => {
  for (const s of NAMED_SCENARIOS) {
    const x = await execute(s.plan, referenceConsumer());
    console.log(s.name, x.result.verdict.status, x.result.stats, JSON.stringify(x.result.verdict.anomalies).slice(0, 300));
  }
  const t0 = Date.now();
  let n = 0; let steps = 0;
  await fc.assert(fc.asyncProperty(planArb(), async (plan) => {
    const x = await execute(plan, referenceConsumer());
    n++; steps += x.history.steps.length;
    if (x.result.verdict.status !== 'pass') { console.log(JSON.stringify(x.result.verdict).slice(0, 600)); }
    return x.result.verdict.status === 'pass';
  }), { numRuns: 300, seed: 1 });
  console.log('worlds', n, 'steps', steps, 'ms', Date.now() - t0);
});
