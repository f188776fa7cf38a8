import { describe, expect, it } from 'vitest';
import { conformanceCases, defaultReplayFlag, resolveTarget } from '../src/run/conformance-tests.js';
import { EXIT } from '../src/cli.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { registerConformance } from '../src/vitest.js';
import { argvOf, cli } from './support.js';

/**
 * `registerConformance` takes a process consumer by its command, as `tidemark check
 * --command` does, so a team with a consumer in another language can keep the suite in its
 * own vitest run. The examples written from docs/protocol.md stand in for such consumers.
 */
describe('registerConformance on a command: the plain Node example, as a user registers it', () => {
  registerConformance({ command: 'node examples/node/consumer.mjs' }, { runs: 3, seed: 7 });
});

describe('the conformance cases of a process consumer', () => {
  it('are named as for an in-process consumer, with the replay flag naming the command', async () => {
    const target = { command: 'node examples/node/consumer.mjs' };
    const consumer = await resolveTarget(target);
    expect(consumer.name).toBe('node-ledger');
    expect(defaultReplayFlag(target)).toBe("--command 'node examples/node/consumer.mjs'");
    const cases = conformanceCases(consumer, { replayFlag: defaultReplayFlag(target), process: true });
    expect(cases.map((c) => c.name)).toContain('R6 R7 R8 failed-event-holds-watermark');
    expect(cases.map((c) => c.name)).toContain('R1-R10 generated worlds');
    // An at-least-once consumer: the exactly-once check does not apply, and says why.
    // Checks are judged last, over every world the suite ran; none has run yet.
    expect(cases.slice(-10).map((c) => c.name)).toContain('check duplicate-effect');
    // Each process start costs real time: a scenario gets far more than vitest's default 5 s.
    expect(cases.find((c) => c.name === 'R6 R7 R8 failed-event-holds-watermark')?.timeoutMs).toBe(60_000);
  });

  it('fail for the buggy Python example, with a replay command that replays the same history', async () => {
    const target = { command: 'python3 examples/python/ledger_consumer_buggy.py' };
    const consumer = await resolveTarget(target);
    const cases = conformanceCases(consumer, { replayFlag: defaultReplayFlag(target), process: true });
    const result = await cases.find((c) => c.name === 'R6 R7 R8 failed-event-holds-watermark')!.run();
    const failure = result !== null && 'failure' in result ? result.failure : null;
    expect(failure).toContain('FAIL  python-ledger-buggy: premature-watermark');
    const replay = /^Replay: (.*)$/m.exec(failure ?? '')?.[1];
    expect(replay).toBe("npx tidemark replay --command 'python3 examples/python/ledger_consumer_buggy.py' --scenario failed-event-holds-watermark");
    const again = await cli(...argvOf(replay!));
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(/^History sha256 (\w+)$/m.exec(failure!)![0]);
  });

  it('pass for the correct Python example on the same scenario', async () => {
    const consumer = await resolveTarget({ command: 'python3 examples/python/ledger_consumer.py' });
    const cases = conformanceCases(consumer, { process: true });
    expect(await cases.find((c) => c.name === 'R6 R7 R8 failed-event-holds-watermark')!.run()).toBeNull();
  });

  it('cannot be made for a command that never says hello: the reason, quoting its stderr', async () => {
    // The limit leaves a loaded machine time to start the interpreter and write the stderr line
    // the message must quote (1 s was not always enough at a load average of 16).
    await expect(resolveTarget({ command: 'python3 test/fixtures/process/no-hello.py', helloMs: 5000 })).rejects.toThrow(
      /cannot start consumer process `python3 test\/fixtures\/process\/no-hello\.py`: no hello within 5000 ms; stderr tail: no-hello: listening on port 8080/,
    );
  });
});

/**
 * A suite that retries its failing tests (vitest's `retry`) must not retry the conformance
 * tests: a retry of the generated worlds draws a fresh seed, and its pass hid a first run that
 * failed or could not be judged (a consumer that hung: no anomaly for a check test to show).
 */
describe('registerConformance in a suite that retries', { retry: 3 }, () => {
  registerConformance(referenceConsumer(), { runs: 2, seed: 1 });
  it('registers tests that are never retried', (context) => {
    const suite = context.task.suite?.tasks.find((t) => t.type === 'suite' && t.name.startsWith('tidemark conformance'));
    const tests = suite?.type === 'suite' ? suite.tasks : [];
    expect(tests.length).toBeGreaterThan(10);
    for (const t of tests) expect({ name: t.name, retry: t.retry }).toEqual({ name: t.name, retry: 0 });
    // The suite's own tests keep its retry.
    expect(context.task.retry).toBe(3);
  });
});
