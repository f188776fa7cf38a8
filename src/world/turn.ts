/**
 * One turn: it ends once every microtask queued before it (every promise continuation of
 * every worker) has run, which is the point where the scheduler may pick. A world takes one
 * for every call it runs, so what a turn costs is a good part of what a call costs.
 *
 * A turn is a drain: a microtask that queues a tick. Node runs its tick queue only once the
 * microtask queue is empty, so the tick runs after every microtask queued before the turn,
 * and every one those queued in turn, without a trip through the event loop. The microtask
 * comes first so that a turn taken outside a microtask (in someone else's tick) still waits
 * for the microtasks already queued. Ticks run first come, first served, so waiters are
 * woken in the order they asked, however many worlds take turns at once.
 *
 * A turn was a message the process posted to itself. That ended at the same point, but cost
 * more (a message to copy, an event to dispatch) and still did not let the event loop run:
 * a port handles up to a thousand messages in one go, and each turn's message was posted
 * while the port was handling the one before.
 *
 * A drain never lets the event loop run: no timer fires and no I/O is read during one. So
 * every MACRO_EVERY-th turn is an immediate instead, which lets the loop run once: a long
 * run still hears its signals, its supervisor and its peers. For a consumer that waits only
 * on promises and world calls, both end at the same point: which kind a turn is changes no
 * history. A consumer that waits on I/O of its own is given real waits by the world when it
 * finds nothing to pick (src/world/world.ts).
 */
export function turn(): Promise<void> {
  // Taken while a turn waits for the loop: after it, so that waiters stay first come, first served.
  if (yielding !== null) return yielding.then(drained);
  if (++sinceYield < MACRO_EVERY) return new Promise<void>(drain);
  sinceYield = 0;
  const y = new Promise<void>(yieldOnce);
  yielding = y;
  void y.then(() => {
    if (yielding === y) yielding = null;
  });
  return y;
}

/** Turns between two that let the event loop run. */
export const MACRO_EVERY = 256;
let sinceYield = 0;
/** The turn now waiting for the event loop, if one is. */
let yielding: Promise<void> | null = null;

/** The executor of every drain's promise: one function, where a closure per turn was an allocation per call. */
function drain(resolve: () => void): void {
  queueMicrotask(() => process.nextTick(resolve));
}

function drained(): Promise<void> {
  return new Promise<void>(drain);
}

/** An immediate runs after the microtasks queued before it, and after the loop's I/O and timers. */
function yieldOnce(resolve: () => void): void {
  setImmediate(resolve);
}
