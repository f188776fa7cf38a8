import { describe, expect, it } from 'vitest';
import { processConsumer } from '../src/adapter/process/bridge.js';
import { EXIT } from '../src/cli.js';
import { checkProperty } from '../src/run/conformance.js';
import { conformanceCases } from '../src/run/conformance-tests.js';
import { UsageError, validateOptions, validateShard } from '../src/run/options.js';
import { findMutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { registerConformance } from '../src/vitest.js';
import { cli } from './support.js';

/**
 * Every front door takes its options by the command line's rules (src/run/options.ts): a
 * `runs` of 0, of NaN (`Number(process.env.X)` with X unset) or below 0 is refused by
 * `registerConformance` and `checkProperty` as `--runs 0` is by the CLI, in the same words.
 * Taken unchecked, it made "R1-R10 generated worlds" a pass that ran no world.
 */
const consumer = referenceConsumer({ name: 'reference' });

/** A message with the option's name and the value as given cut away: what every front door must say alike. */
const sentence = (message: string, name: string): string => message.slice(message.indexOf(name) + name.length).replace(/, got .*$/, '');

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error('it did not throw');
}

describe('registerConformance refuses bad options with the CLI`s words, before registering anything', () => {
  it.each([
    [0, 'got 0'],
    [Number(process.env.TIDEMARK_SURELY_UNSET_VARIABLE), 'got NaN'],
    [-5, 'got -5'],
    [2.5, 'got 2.5'],
    ['200', 'got "200"'],
  ])('runs: %s', async (runs, got) => {
    const error = thrown(() => registerConformance(consumer, { runs: runs as number }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(`registerConformance: runs must be an integer of at least 1 and at most 1,000,000, ${got}`);
    const r = await cli('check', '--consumer', 'reference', '--runs', '0');
    expect(r.code).toBe(EXIT.usage);
    expect(sentence(error.message, 'runs')).toBe(sentence(r.err.split('\n')[0]!, '--runs'));
  });

  it('a seed outside 32 bits, as the CLI refuses it', async () => {
    const error = thrown(() => registerConformance(consumer, { seed: 2 ** 33 }));
    const r = await cli('check', '--consumer', 'reference', '--seed', String(2 ** 33));
    expect(error.message).toBe('registerConformance: seed must be an integer from -2147483648 to 4294967295 (a 32-bit seed), got 8589934592');
    expect(sentence(error.message, 'seed')).toBe(sentence(r.err.split('\n')[0]!, '--seed'));
  });

  it("a process target's limits, as --stall-ms and --kills are refused", () => {
    expect(() => registerConformance({ command: 'python3 c.py', stallMs: 0 })).toThrow('registerConformance: stallMs must be an integer of at least 1 and at most 2,147,483,647, got 0');
    expect(() => registerConformance({ command: 'python3 c.py', kills: 'sometimes' as 'real' })).toThrow('registerConformance: kills must be real or sampled, got "sometimes"');
  });

  it('null, or something that is no consumer, is a clear error naming what it takes', () => {
    const none = thrown(() => registerConformance(null as never));
    expect(none).toBeInstanceOf(TypeError);
    expect(none.message).toBe(
      "registerConformance takes a consumer (an object with name, capabilities and run(world), see docs/adapters.md) or a process to start ({ command: 'python3 my_consumer.py' }), got null",
    );
    expect(() => registerConformance({ name: 'x' } as never)).toThrow("registerConformance: the consumer given is not usable: capabilities must be an object such as { delivery: 'at-least-once' }");
    expect(() => registerConformance({ command: 42 } as never)).toThrow("registerConformance: command must be the consumer's command line, such as 'python3 my_consumer.py', got 42");
    expect(() => registerConformance(consumer, null as never)).toThrow('registerConformance: options must be an object such as { runs: 200 }, got null');
  });
});

describe('the generated worlds cannot pass without running a world', () => {
  it('a mutant registered with runs: 0 fails the generated-worlds case instead of passing it', async () => {
    // Before, this case ran no world and passed: six mutants then passed the whole suite.
    const mutant = findMutant('token-as-watermark')!.consumer;
    const worlds = conformanceCases(mutant, { runs: 0, seed: 1 }).find((c) => c.name === 'R1-R10 generated worlds')!;
    await expect(worlds.run()).rejects.toThrow('checkProperty: runs must be an integer of at least 1 and at most 1,000,000, got 0');
  });

  it('checkProperty, the package API, takes runs, searches, time limits and shards by the same bounds', async () => {
    await expect(checkProperty(consumer, { runs: Number.NaN, seed: 1 })).rejects.toThrow('checkProperty: runs must be an integer of at least 1 and at most 1,000,000, got NaN');
    await expect(checkProperty(consumer, { runs: 1, seed: 1, searches: 0 })).rejects.toThrow('checkProperty: searches must be an integer of at least 1 and at most 100, got 0');
    await expect(checkProperty(consumer, { runs: 1, seed: 1, timeLimitMs: 0 })).rejects.toThrow('checkProperty: timeLimitMs must be a number of milliseconds of at least 1, got 0');
    await expect(checkProperty(consumer, { runs: 1, seed: 1, shard: { index: 3, count: 2 } })).rejects.toThrow(
      'checkProperty: shard 3/2: I must be from 1 to 2, the number of shards (shards are numbered from 1)',
    );
    await expect(checkProperty(consumer, { runs: 1 } as never)).rejects.toThrow('checkProperty: seed is required');
  });

  it('processConsumer takes its limits by the bounds of --stall-ms and --hello-ms', async () => {
    await expect(processConsumer('true', { helloMs: -1 })).rejects.toThrow('processConsumer: helloMs must be an integer of at least 1 and at most 2,147,483,647, got -1');
    await expect(processConsumer('true', { helloMs: 2 ** 31 })).rejects.toThrow('processConsumer: helloMs must be an integer of at least 1 and at most 2,147,483,647, got 2147483648');
  });
});

describe('validateOptions and validateShard, for any input that carries run options (a shard file, say)', () => {
  it('accept what the CLI accepts and refuse what it refuses, naming where', () => {
    expect(() => validateOptions({ runs: 1000, seed: -1, searches: 3, timeLimit: 0.5, jobs: 2, kills: 'real', other: 'not mine' })).not.toThrow();
    expect(() => validateOptions({ runs: 1_000_001 }, 'shard-1.json: ')).toThrow('shard-1.json: runs must be an integer of at least 1 and at most 1,000,000, got 1000001');
    expect(() => validateOptions({ timeLimit: 0 })).toThrow('timeLimit must be a number of seconds of at least 0.001, got 0');
    expect(validateShard({ index: 2, count: 3 })).toEqual({ index: 2, count: 3 });
    expect(validateShard('1/1')).toEqual({ index: 1, count: 1 });
    expect(() => validateShard({ index: 1, count: 1001 }, 'a.json: ')).toThrow('a.json: shard 1/1001: N must be from 1 to 1000');
    expect(() => validateShard('half')).toThrow(`shard must be { index: I, count: N } (or 'I/N'): the Ith of N shards, I from 1, got "half"`);
  });
});
