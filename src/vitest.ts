import { describe, expect, it } from 'vitest';
import { ALL_SCENARIOS } from '../scenarios/named.js';
import { applicableChecks, checkProperty, whyNot } from './conformance.js';
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
 * per named scenario, named with its rule ids, one for the generated worlds, and the model's
 * checks that do not apply to this consumer as skipped tests whose names say why. A failing
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
    for (const scenario of ALL_SCENARIOS) {
      const name = `${scenario.rules.join(' ')} ${scenario.name}`;
      const skipped = whyNot(consumer, scenario);
      if (skipped !== null) {
        it.skip(`${name} (skipped: ${skipped})`, () => {});
        continue;
      }
      it(name, async () => {
        const execution = await execute(scenario.plan, consumer);
        if (execution.result.verdict.status !== 'pass') {
          expect.fail(renderFailure({ consumer: consumer.name, execution, replay: `npx tidemark replay ${flag} --scenario ${scenario.name}` }));
        }
      });
    }
    it('R1-R10 generated worlds', async () => {
      const seed = options.seed ?? Math.floor(Math.random() * 0x7fffffff);
      const outcome = await checkProperty(consumer, { runs: options.runs ?? 200, seed });
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
    for (const c of applicableChecks(consumer)) if (c.skipped !== null) it.skip(`check ${c.anomaly} (skipped: ${c.skipped})`, () => {});
  });
}
