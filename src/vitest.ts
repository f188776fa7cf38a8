import { describe, expect, it } from 'vitest';
import { ALL_SCENARIOS } from '../scenarios/named.js';
import { ANOMALIES } from '../model/anomalies.js';
import { CheckTally, checkProperty, whyNot } from './conformance.js';
import { missedAdversity } from './exercised.js';
import type { AnyConsumer } from './consumer.js';
import { execute } from './execute.js';
import { renderFailure } from './report/failure.js';

export interface ConformanceOptions {
  /** Generated worlds (default 200: a test suite runs often; `tidemark check` runs 1,000). */
  readonly runs?: number;
  /** fast-check seed; a fresh one by default, printed with any failure. */
  readonly seed?: number;
  /** How replay commands name this consumer, e.g. `--adapter ./src/consumer.adapter.ts`. */
  readonly replayFlag?: string;
}

/**
 * Registers the conformance suite as ordinary vitest tests inside a `describe`: one test
 * per named scenario, named with its rule ids (skipped at run time, with the reason, when its
 * adversity never fired), one for the generated worlds, and one per check of the model, last:
 * failed when its anomaly was found, skipped with the reason when no world exercised it. A failing
 * test's message is the failure text: the rule, the timeline and the replay command.
 *
 * ```ts
 * import { registerConformance } from 'tidemark/vitest';
 * import { myConsumer } from './my-consumer.js';
 * registerConformance(myConsumer);
 * ```
 */
export function registerConformance(consumer: AnyConsumer, options: ConformanceOptions = {}): void {
  const flag = options.replayFlag ?? `--adapter <your adapter module>`;
  describe(`tidemark conformance: ${consumer.name}`, () => {
    const tally = new CheckTally();
    for (const scenario of ALL_SCENARIOS) {
      const name = `${scenario.rules.join(' ')} ${scenario.name}`;
      const skipped = whyNot(consumer, scenario);
      if (skipped !== null) {
        it.skip(`${name} (skipped: ${skipped})`, () => {});
        continue;
      }
      it(name, async (context) => {
        const execution = await execute(scenario.plan, consumer);
        tally.add(execution.result);
        if (execution.result.verdict.status !== 'pass') {
          expect.fail(renderFailure({ consumer: consumer.name, execution, replay: `npx tidemark replay ${flag} --scenario ${scenario.name}` }));
        }
        // Nothing broke, but the adversity the scenario exists for never fired: no pass.
        const missed = missedAdversity(scenario.plan, execution.history);
        if (missed.length > 0) context.skip(`untested: ${missed.join('; ')}`);
      });
    }
    it('R1-R10 generated worlds', async () => {
      const seed = options.seed ?? Math.floor(Math.random() * 0x7fffffff);
      const outcome = await checkProperty(consumer, { runs: options.runs ?? 200, seed, tally });
      if (outcome.counterexample) {
        expect.fail(
          renderFailure({
            consumer: consumer.name,
            execution: outcome.counterexample,
            replay: `npx tidemark replay ${flag} --seed ${outcome.seed} --path "${outcome.path}"`,
            provenance: `minimal world, found after ${outcome.runs} worlds; the smallest of ${outcome.searches} shrunk failures`,
          }),
        );
      }
    }, 600_000);
    // Tests in a describe run in order: by now every world of this suite has been judged.
    for (const [i, anomaly] of Object.keys(ANOMALIES).entries()) {
      it(`check ${anomaly}`, (context) => {
        const c = tally.summary()[i];
        if (c?.status === 'untested') context.skip(`untested: ${c.reason ?? ''}`);
        expect(c?.status, `${anomaly} was found in this suite; see the failing test above`).toBe('pass');
      });
    }
  });
}
