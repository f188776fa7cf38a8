import { describe, expect, it } from 'vitest';
import { conformanceCases, defaultReplayFlag, isProcessTarget, resolveTarget, type CaseOptions, type ConformanceCase, type ProcessTarget } from './run/conformance-tests.js';
import type { AnyConsumer } from './adapter/consumer.js';
import { validateConsumer } from './adapter/load.js';
import { validateOptions } from './run/options.js';

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
  checkArguments(target, options);
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

/**
 * Refuses what cannot be a conformance suite before anything is registered, with the words
 * the command line uses for the same option: a `runs` of 0 or NaN would otherwise register a
 * generated-worlds test that runs no world and passes.
 */
function checkArguments(target: unknown, options: unknown): void {
  if (typeof target !== 'object' || target === null) {
    throw new TypeError(`registerConformance takes a consumer (an object with name, capabilities and run(world), see docs/adapters.md) or a process to start ({ command: 'python3 my_consumer.py' }), got ${target === null ? 'null' : typeof target}`);
  }
  const command = (target as { command?: unknown }).command;
  if (command !== undefined && (typeof command !== 'string' || command.trim() === '')) {
    throw new TypeError(`registerConformance: command must be the consumer's command line, such as 'python3 my_consumer.py', got ${JSON.stringify(command) ?? String(command)}`);
  }
  if (command === undefined) {
    try {
      validateConsumer(target, 'registerConformance');
    } catch (error) {
      throw new TypeError(`registerConformance: the consumer given is not usable: ${(error as Error).message.replace(/^adapter '[^']*' is not a usable consumer: /, '')}`);
    }
  } else validateOptions(target, 'registerConformance: ');
  if (typeof options !== 'object' || options === null) throw new TypeError(`registerConformance: options must be an object such as { runs: 200 }, got ${options === null ? 'null' : typeof options}`);
  validateOptions(options, 'registerConformance: ');
}

function register(cases: readonly ConformanceCase[]): void {
  for (const c of cases) {
    if (c.skipped !== null) {
      it.skip(`${c.name} (skipped: ${c.skipped})`, () => {});
      continue;
    }
    // Never retried, whatever the suite's `retry`: a retry of the generated worlds draws a fresh
    // seed, and one that passes would hide a failed or unjudgeable first run (a hung consumer)
    // behind a green test; a retried scenario would hide a consumer that is not deterministic.
    it(
      c.name,
      { retry: 0, ...(c.timeoutMs === undefined ? {} : { timeout: c.timeoutMs }) },
      async (context) => {
        const result = await c.run();
        if (result === null) return;
        if ('failure' in result) expect.fail(result.failure);
        context.skip(`untested: ${result.untested}`);
      },
    );
  }
}
