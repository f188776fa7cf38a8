/**
 * A turn is where the world's scheduler may pick: it must end only once every promise
 * continuation queued before it, and every one those queue, has run (src/world/turn.ts).
 * Most turns are drains that never enter the event loop; these tests hold a drain to that
 * point however it is taken, and a run of turns to the ones that let timers and I/O in.
 */
import { describe, expect, it } from 'vitest';
import { MACRO_EVERY, turn } from '../../src/world/turn.js';

/** A chain of `depth` promise continuations, each queued by the one before: `done` once the last ran. */
function chain(depth: number): { readonly done: () => boolean } {
  let ran = 0;
  let p: Promise<void> = Promise.resolve();
  for (let i = 0; i < depth; i++) p = p.then(() => void ran++);
  return { done: () => ran === depth };
}

/** A chain in which each continuation queues the next itself, with `await`, not up front. */
function nested(depth: number): { readonly done: () => boolean } {
  let ran = 0;
  const step = async (left: number): Promise<void> => {
    ran++;
    if (left > 1) await step(left - 1);
  };
  void Promise.resolve().then(() => step(depth));
  return { done: () => ran === depth };
}

describe('turn', () => {
  it('ends after every continuation queued before it, and every one they queued', async () => {
    for (let round = 0; round < 200; round++) {
      const a = chain(50);
      const b = nested(50);
      await turn();
      expect(a.done() && b.done(), `round ${round}`).toBe(true);
    }
  });

  it('taken in a tick, still waits for the continuations already queued', async () => {
    // A tick queued now runs before the microtasks queued after it; a turn taken there must
    // not end before them.
    const seen = await new Promise<boolean>((resolve) => {
      process.nextTick(() => {
        const a = chain(20);
        void turn().then(() => resolve(a.done()));
      });
    });
    expect(seen).toBe(true);
  });

  it('wakes its waiters first come, first served', async () => {
    const order: number[] = [];
    // Enough turns that one of them lets the event loop run, and the order still holds across it.
    await Promise.all(Array.from({ length: MACRO_EVERY + 2 }, (_, i) => turn().then(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: MACRO_EVERY + 2 }, (_, i) => i));
  });

  it('lets the event loop run within a bounded number of turns: a run of turns still hears its timers and I/O', async () => {
    let fired = false;
    setImmediate(() => (fired = true));
    let turns = 0;
    // A drain alone never lets an immediate run; one turn in MACRO_EVERY does.
    while (!fired && turns < 10 * MACRO_EVERY) {
      await turn();
      turns++;
    }
    expect(fired).toBe(true);
    expect(turns).toBeLessThanOrEqual(MACRO_EVERY);
  });
});
