import { MessageChannel } from 'node:worker_threads';

/**
 * One macrotask turn: it ends once every microtask queued before it (every promise
 * continuation of every worker) has run, which is the point where the scheduler may pick.
 *
 * The turn is a message the process posts to itself. A message is a macrotask like
 * setImmediate, so nothing about what a turn drains changes, but it costs a third of what an
 * immediate does (measured: about 1.5 µs against 4 µs), and a world takes a turn for every
 * call it runs. Messages on one channel arrive in the order they were posted, so the waiters
 * are woken first come, first served, however many worlds share the channel.
 *
 * The channel holds the process open only while someone waits on it: a process whose worlds
 * are done exits as it did with setImmediate.
 */
let channel: MessageChannel | null = null;
/**
 * The waiters, first come first served, in slots head to tail. Emptied by moving both back
 * to 0, never by setting the array's length: that gave up its room, and the next turn (one
 * a call) allocated it again. A slot is cleared as it is woken, so nothing is held past it.
 */
const waiting: ((() => void) | undefined)[] = [];
let head = 0;
let tail = 0;

function open(): MessageChannel {
  const c = new MessageChannel();
  c.port1.on('message', () => {
    const wake = waiting[head] as () => void;
    waiting[head++] = undefined;
    if (head === tail) {
      head = 0;
      tail = 0;
      c.port1.unref();
    }
    wake();
  });
  c.port1.unref();
  return c;
}

export function turn(): Promise<void> {
  const c = (channel ??= open());
  if (tail === head) c.port1.ref();
  const promise = new Promise<void>(enqueue);
  c.port2.postMessage(null);
  return promise;
}

/** The executor of every turn's promise: one function, where a closure per turn was an allocation per call. */
function enqueue(resolve: () => void): void {
  waiting[tail++] = resolve;
}
