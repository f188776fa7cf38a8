import { describe, expect, it } from 'vitest';
import type { CallStep } from '../../model/history.js';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer, WorkerWorld } from '../../src/adapter/consumer.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute } from '../../src/run/execute.js';

/**
 * Arguments no world can record (docs/adapters.md: the world takes JSON data): each is the
 * call's bad-request naming the field, recorded as MALFORMED, and the run goes on. Before,
 * each one crashed the harness ("harness error", exit 3) without naming the call.
 */
const base = findScenario('failed-event-holds-watermark')!.plan;

const cyclic = (): Record<string, unknown> => {
  const o: Record<string, unknown> = { key: [1], id: 'e41' };
  o.self = o;
  return o;
};

const CASES: [string, (world: WorkerWorld) => Promise<unknown>, string, string][] = [
  // The first page of a real adapter: `{ kind: 'key-gt', key: watermark?.key }` before any watermark.
  ['key-gt without a key', (w) => w.fetch({ resume: { kind: 'key-gt', key: undefined as never }, limit: 3 }), 'fetch', 'resume.key must be an array of finite numbers for key-gt, got undefined'],
  ['key-gte with a null key', (w) => w.fetch({ resume: { kind: 'key-gte', key: null as never }, limit: 3 }), 'fetch', 'resume.key must be an array of finite numbers for key-gte, got null'],
  ['key-gt with a string key', (w) => w.fetch({ resume: { kind: 'key-gt', key: '41' as never }, limit: 3 }), 'fetch', 'resume.key must be an array of finite numbers for key-gt, got "41"'],
  ['a BigInt key', (w) => w.fetch({ resume: { kind: 'key-gt', key: [41n] as never }, limit: 3 }), 'fetch', 'request.resume.key[0] is a BigInt (41n); the world takes plain numbers'],
  ['a cyclic resume position', (w) => w.fetch({ resume: { kind: 'after', position: cyclic() }, limit: 3 }), 'fetch', 'request.resume.position.self is cyclic: it contains itself'],
  ['a cyclic watermark', (w) => w.commit([{ op: 'watermark', binding: w.fingerprint, value: cyclic() }]), 'commit', 'ops[0].value.self is cyclic: it contains itself'],
  ['a BigInt in an expected watermark', (w) => w.commit([{ op: 'watermark', binding: w.fingerprint, value: null, expect: { key: [1n] } }]), 'commit', 'ops[0].expect.key[0] is a BigInt (1n); the world takes plain numbers'],
  ['a function in commit options', (w) => w.commit([], { fence: 1, then: () => 0 } as never), 'commit', 'options.then is a function; the world takes JSON data'],
  ['a BigInt version', (w) => w.emit({ id: 'e41', version: 1n } as never, 'e41:order'), 'emit', 'event.version is a BigInt (1n); the world takes plain numbers'],
  ['an emit whose key is a string', (w) => w.emit({ id: 'e41', version: 1 }, 'e41:order', '41' as never), 'emit', 'expects its key as an array of finite numbers, or null'],
  ['an emit whose key holds NaN', (w) => w.emit({ id: 'e41', version: 1 }, 'e41:order', [Number.NaN]), 'emit', 'key[0] is NaN, which JSON cannot carry'],
  ['a cyclic event ref', (w) => w.completed([{ id: 'e41', version: 1, self: cyclic() } as never]), 'completed', 'events[0].self.self is cyclic: it contains itself'],
  ['NaN in a key', (w) => w.fetch({ resume: { kind: 'key-gte', key: [Number.NaN] }, limit: 3 }), 'fetch', 'request.resume.key[0] is NaN, which JSON cannot carry'],
  // JSON has no holes: before, a sparse array was refused by accident, with the text of the checker's own TypeError.
  ['a hole in the events asked about', (w) => w.completed([, { id: 'e41', version: 1 }] as never), 'completed', 'events[0] is a hole in an array; the world takes JSON data, which has none'],
];

describe('arguments the world cannot record are a bad-request naming the call and the field', () => {
  it.each(CASES)('%s', async (_, call, method, problem) => {
    let error: { code?: string; message?: string } | null = null;
    const consumer: Consumer = {
      name: 'careless',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        if (world.incarnation === 1) error = await call(world).then(() => null, (e: unknown) => e as { code: string });
        return referenceConsumer().run(world);
      },
    };
    const run = await execute(base, consumer);
    expect(error).toMatchObject({ code: 'bad-request', message: `${method}: ${problem}` });
    const first = run.history.steps.find((s): s is CallStep => s.kind === 'call');
    expect(first?.call).toEqual({ kind: 'malformed', method, problem });
    expect(first?.outcome).toEqual({ kind: 'error', code: 'bad-request' });
    // The run went on, and its history is JSON (it was hashed).
    expect(run.result.verdict.status).toBe('pass');
    expect(run.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("an emit's key is recorded when given, as a copy, and only then", async () => {
    const given = [41];
    const consumer: Consumer = {
      name: 'keyed',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        if (world.incarnation === 1) {
          await world.emit({ id: 'e41', version: 1 }, 'e41:order', given);
          given[0] = 99;
          await world.emit({ id: 'e41', version: 1 }, 'e41:order', null);
          await world.emit({ id: 'e41', version: 1 }, 'e41:order');
        }
        return referenceConsumer().run(world);
      },
    };
    const run = await execute(base, consumer);
    const emits = run.history.steps.flatMap((s) => (s.kind === 'call' && s.call.kind === 'emit' ? [s.call] : [])).slice(0, 3);
    expect(emits).toEqual([
      { kind: 'emit', event: { id: 'e41', version: 1 }, payload: 'e41:order', key: [41] },
      { kind: 'emit', event: { id: 'e41', version: 1 }, payload: 'e41:order', key: null },
      { kind: 'emit', event: { id: 'e41', version: 1 }, payload: 'e41:order' },
    ]);
    expect(Object.hasOwn(emits[2] as object, 'key')).toBe(false);
  });

  it("an emit's event: what was judged is what is recorded, whatever a getter says next", async () => {
    // A getter answering JSON data at first and a function after: the history holds what was judged.
    const fickle = (good: number): { reads: number; event: object } => {
      const box = { reads: 0, event: {} };
      box.event = { get id(): unknown { return box.reads++ < good ? 'e41' : () => 'e41'; }, version: 1 };
      return box;
    };
    const emits = async (good: number): Promise<{ reads: number; steps: CallStep[]; hash: string }> => {
      const box = fickle(good);
      const consumer: Consumer = {
        name: 'fickle-event',
        capabilities: { delivery: 'at-least-once' },
        run: async (world) => {
          if (world.incarnation === 1) await world.emit(box.event as never, 'e41:order').catch(() => undefined);
          return referenceConsumer().run(world);
        },
      };
      const run = await execute(base, consumer);
      const steps = run.history.steps.filter((s): s is CallStep => s.kind === 'call' && (s.call.kind === 'emit' || s.call.kind === 'malformed'));
      return { reads: box.reads, steps, hash: run.hash };
    };
    // Good for the check and for the ref: recorded as read.
    const twice = await emits(2);
    expect(twice.steps[0]?.call).toEqual({ kind: 'emit', event: { id: 'e41', version: 1 }, payload: 'e41:order' });
    expect(twice.reads).toBe(2);
    // Good for the check, not for the ref: a malformed call, not a function in the history.
    const once = await emits(1);
    expect(once.steps[0]?.call).toEqual({ kind: 'malformed', method: 'emit', problem: 'expects ({ id, version }, payload string)' });
    for (const run of [twice, once]) expect(run.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a claim whose reason is not a string is recorded as readable text, cyclic or BigInt', async () => {
    for (const reason of [cyclic(), 7n, Symbol('why')]) {
      const consumer: Consumer = { name: 'odd-reason', capabilities: { delivery: 'at-least-once' }, run: (world) => world.fail(reason as never) };
      const run = await execute(base, consumer);
      const claim = run.history.steps.find((s): s is CallStep => s.kind === 'call' && s.call.kind === 'claim');
      expect(claim?.call.kind === 'claim' && claim.call.claim.kind === 'failed' && typeof claim.call.claim.reason).toBe('string');
    }
  });
});
