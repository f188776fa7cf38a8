/**
 * An incarnation's `signal` and an execution's `hash` are accessors, made on first read. Each
 * is one getter shared by every object that has it, not a getter written in an object
 * literal: a literal's getter is a new function for every object, and such objects kept their
 * whole world alive through young-generation collections (about ten times the bytes promoted,
 * and three times the scavenging, over the reference consumer's worlds). These tests hold
 * both the sharing and what the accessors mean to a consumer.
 */
import { describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer, WorkerWorld } from '../../src/adapter/consumer.js';
import { execute, hashHistory } from '../../src/run/execute.js';
import { referenceConsumer } from '../../src/selftest/reference.js';

const plan = findScenario('failed-event-holds-watermark')!.plan;

/** The reference consumer, keeping every incarnation's world as it was handed over. */
function keeping(worlds: WorkerWorld[]): Consumer {
  const inner = referenceConsumer();
  return { ...inner, run: (world) => (worlds.push(world), inner.run(world)) };
}

describe("an incarnation's signal", () => {
  it('is one getter for every incarnation of every world', async () => {
    const worlds: WorkerWorld[] = [];
    await execute(plan, keeping(worlds));
    await execute(plan, keeping(worlds));
    expect(worlds.length).toBeGreaterThanOrEqual(4);
    const getters = new Set(worlds.map((w) => Object.getOwnPropertyDescriptor(w, 'signal')?.get));
    expect(getters.size).toBe(1);
    expect([...getters][0]).toBeTypeOf('function');
    // An own, enumerable accessor, as a literal's was: a spread of the world reads it.
    expect(Object.keys(worlds[0] as WorkerWorld)).toContain('signal');
  });

  it('is the same signal read from the world, a spread of it, an object made from it, or a proxy of it, and it aborts when the incarnation dies', async () => {
    const seen: { readonly ways: AbortSignal[]; readonly abortedWhileAlive: boolean }[] = [];
    const consumer: Consumer = {
      name: 'reads its signal four ways',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        const through = new Proxy(world, { get: (target, p, receiver) => Reflect.get(target, p, receiver) });
        const ways = [world.signal, { ...world }.signal, (Object.create(world) as WorkerWorld).signal, through.signal];
        seen.push({ ways, abortedWhileAlive: world.signal.aborted });
        await world.load();
        await world.caughtUp();
      },
    };
    await execute(plan, consumer);
    expect(seen.length).toBeGreaterThan(1);
    for (const { ways, abortedWhileAlive } of seen) {
      expect(abortedWhileAlive).toBe(false);
      expect(new Set(ways).size).toBe(1);
      expect(ways[0]?.aborted).toBe(true);
    }
  });

  it('read for the first time after its incarnation died, is already aborted', async () => {
    const worlds: WorkerWorld[] = [];
    await execute(plan, keeping(worlds));
    expect(worlds.length).toBeGreaterThan(1);
    for (const world of worlds) expect(world.signal.aborted).toBe(true);
  });

  it('read through a wrapper that passes on only string keys, says to read it from the world', async () => {
    const errors: unknown[] = [];
    const consumer: Consumer = {
      name: 'reads its signal through wrappers that drop symbols',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        const allowList = new Proxy(world, { get: (target, p, receiver) => (typeof p === 'string' ? Reflect.get(target, p, receiver) : undefined) });
        const copy = Object.defineProperties({}, Object.fromEntries(Object.keys(world).map((k) => [k, Object.getOwnPropertyDescriptor(world, k) as PropertyDescriptor]))) as WorkerWorld;
        const get = Object.getOwnPropertyDescriptor(world, 'signal')?.get as () => unknown;
        for (const read of [() => allowList.signal, () => copy.signal, () => get.call({})]) {
          try {
            read();
          } catch (e) {
            errors.push(e);
          }
        }
        await world.caughtUp();
      },
    };
    await execute(plan, consumer);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    for (const error of errors) {
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toMatch(/signal is read from the world an incarnation was given/);
    }
  });

  it('cannot be changed for another incarnation by a consumer that finds the ref the world carries', async () => {
    let refs = 0;
    let tampered = 0;
    const honest: WorkerWorld[] = [];
    const hostile: Consumer = {
      name: 'tampers with the ref under every symbol of its world',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        for (const symbol of Object.getOwnPropertySymbols(world)) {
          const ref = (world as unknown as Record<symbol, object>)[symbol] as object;
          refs++;
          const attempts = [
            () => Object.defineProperty(ref.constructor, 'signal', { value: () => new AbortController().signal }),
            () => Object.defineProperty(ref.constructor.prototype, 'signal', { value: 1 }),
            () => Object.defineProperty(ref.constructor, Symbol.hasInstance, { value: () => true }),
            () => Object.defineProperty(ref, 'life', { value: {} }),
          ];
          for (const attempt of attempts) {
            try {
              attempt();
              tampered++;
            } catch {
              // Frozen: refused.
            }
          }
        }
        await world.caughtUp();
      },
    };
    await execute(plan, hostile);
    await execute(plan, keeping(honest));
    expect(refs).toBeGreaterThan(0);
    expect(tampered).toBe(0);
    for (const world of honest) expect(world.signal.aborted).toBe(true);
  });
});

describe("an execution's hash", () => {
  it('is one getter for every execution, the sha256 of its history as first read, and the same when read again', async () => {
    const a = await execute(plan, referenceConsumer());
    const b = await execute(findScenario('crash-before-first-effect')!.plan, referenceConsumer());
    const getter = (e: object): unknown => Object.getOwnPropertyDescriptor(e, 'hash')?.get;
    expect(getter(a)).toBeTypeOf('function');
    expect(getter(a)).toBe(getter(b));
    expect(a.hash).toBe(hashHistory(a.history));
    expect(b.hash).not.toBe(a.hash);
    // Remembered once read: a caller that changes the history afterwards changes nothing.
    const first = a.hash;
    (a.history.steps as unknown[]).push({ kind: 'life' });
    expect(a.hash).toBe(first);
    expect(JSON.parse(JSON.stringify(b)).hash).toBe(b.hash);
  });
});
