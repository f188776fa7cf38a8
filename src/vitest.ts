import { describe, expect, it } from 'vitest';
import { conformanceCases, defaultReplayFlag, isProcessTarget, resolveTarget, type CaseOptions, type ConformanceCase, type ProcessTarget } from './run/conformance-tests.js';
import type { AnyConsumer } from './adapter/consumer.js';

export type { ProcessTarget } from './run/conformance-tests.js';

export interface ConformanceOptions extends CaseOptions {
  /** Generated worlds (default 200: a test suite runs often; `tidemark check` runs 1,000). */
  readonly runs?: number;
  /** fast-check seed; a fresh one by default, printed with any failure. */
  readonly seed?: number;
  /**
   * How replay commands name this consumer, e.g. `--adapter ./src/consumer.adapter.ts`.
   * For a process, `--command '<its command>'` by default.
   */
  readonly replayFlag?: string;
}

/**
 * Registers the conformance suite as ordinary vitest tests inside a `describe`: one test
 * per named scenario, named with its rule ids, one for the generated worlds, and the model's
 * checks that do not apply to this consumer as skipped tests whose names say why. A failing
 * test's message is the failure text: the rule, the timeline and the replay command.
 *
 * The consumer is an in-process consumer object, or a process in any language speaking
 * docs/protocol.md, given by its command (as `tidemark check --command` takes it):
 *
 * ```ts
 * import { registerConformance } from 'tidemark/vitest';
 * import { myConsumer } from './my-consumer.js';
 * registerConformance(myConsumer);
 * registerConformance({ command: 'python3 my_consumer.py' });
 * ```
 *
 * A process is started once while vitest collects the tests, to read its hello (name and
 * capabilities decide what is skipped); a process that cannot say hello is one failing test,
 * `the consumer process starts and says hello`, with the reason.
 */
export function registerConformance(target: AnyConsumer | ProcessTarget, options: ConformanceOptions = {}): void {
  const replayFlag = options.replayFlag ?? defaultReplayFlag(target);
  if (!isProcessTarget(target)) {
    describe(`tidemark conformance: ${target.name}`, () => register(conformanceCases(target, { ...options, replayFlag })));
    return;
  }
  // vitest awaits an async describe while it collects, so the hello is read before any test is registered.
  describe(`tidemark conformance: ${target.command}`, async () => {
    let consumer: AnyConsumer;
    try {
      consumer = await resolveTarget(target);
    } catch (error) {
      // One failing test with the reason, rather than a file that fails to collect: the
      // rest of the file still runs, and the report names what went wrong.
      it('the consumer process starts and says hello', () => {
        throw error;
      });
      return;
    }
    register(conformanceCases(consumer, { ...options, replayFlag, process: true }));
  });
}

function register(cases: readonly ConformanceCase[]): void {
  for (const c of cases) {
    if (c.skipped !== null) {
      it.skip(`${c.name} (skipped: ${c.skipped})`, () => {});
      continue;
    }
    it(
      c.name,
      async (context) => {
        const result = await c.run();
        if (result === null) return;
        if ('failure' in result) expect.fail(result.failure);
        context.skip(`untested: ${result.untested}`);
      },
      c.timeoutMs,
    );
  }
}
