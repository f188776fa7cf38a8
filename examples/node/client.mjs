// A minimal tidemark protocol client for Node, standard library only (docs/protocol.md;
// every message is described by schema/protocol.schema.json).
// It says hello, waits for start, and gives the consumer a `world` whose methods send calls
// and resolve with the replies. A blackbox consumer answers inspection requests with
// `inspect(message, start)`: what its own store durably holds, read from the `start.store`
// directory. A request that arrives before start waits until start has arrived.
// Protocol 1 allows one call in flight at a time: await each call before the next.
//
// Sessions: with `sessions: true` the process offers to serve successive incarnations. On
// `crash` the client forgets the incarnation: its pending calls never settle, its world
// object sends nothing any more, and the next `start` runs `run` afresh. Offer it only if
// everything your consumer keeps lives inside `run` (module-level caches, open handles and
// buffers would survive a session crash, where a real kill would lose them).
//
// No fork server: Node has no fork(2) (child_process.fork starts a new Node, the very start-up
// a fork server saves), so the hello never offers `forks` and every real kill starts a new
// process (docs/protocol.md, Fork servers, says what a Node consumer can do instead).
import { createInterface } from 'node:readline';

export function serve({ name, capabilities, kind = 'whitebox', run, inspect, sessions = false }) {
  const pending = new Map();
  let nextId = 1;
  let start = null;
  let early = [];
  // Which incarnation is current: a world object of an older one sends nothing.
  let epoch = 0;
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const die = (problem) => {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  };
  const call = (mine, method, ...args) =>
    new Promise((resolve, reject) => {
      // A crashed incarnation's call: never sent, never settled, as if its process were gone.
      if (mine !== epoch) return;
      // Refused here, in the caller's stack, rather than left for the harness to see or miss.
      if (pending.size > 0) return reject(new Error('protocol 1 has one call in flight: await each world call before making the next'));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ type: 'call', id, method, args });
    });
  const answer = async (message) => {
    if (!inspect) die('the harness asked for an inspection, but this consumer has no inspect()');
    send({ type: 'inspection', id: message.id, ...(await inspect(message, start)) });
  };
  const lines = createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    if (line.trim() === '') return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      die(`not JSON from the harness: ${line.slice(0, 200)}`);
    }
    if (message.type === 'start') {
      if (message.protocol !== 1) die(`the harness speaks protocol ${message.protocol}; this client speaks protocol 1`);
      start = message;
      const mine = epoch;
      const world = {
        ...message,
        fetch: (request) => call(mine, 'fetch', request),
        load: () => call(mine, 'load'),
        completed: (events) => call(mine, 'completed', events),
        commit: (ops, options) => call(mine, 'commit', ops, options ?? {}),
        emit: (event, payload) => call(mine, 'emit', event, payload),
        lease: () => call(mine, 'lease'),
        caughtUp: () => call(mine, 'caughtUp'),
        fail: (reason) => call(mine, 'fail', reason),
      };
      for (const m of early.splice(0)) await answer(m);
      try {
        await run(world);
      } catch (error) {
        // An incarnation crashed meanwhile is gone: what it throws belongs to nobody.
        if (mine !== epoch) return;
        // The stack, then the error once more: the harness quotes the end of stderr, and the
        // end of a stack says where, not what. The exit waits for the write to be flushed.
        const said = error instanceof Error ? String(error) : (JSON.stringify(error) ?? String(error));
        process.stderr.write(`${error?.stack ?? said}\nrun threw: ${said}\n`, () => process.exit(1));
        return;
      }
      // A run that returns ends the process, sessions or not (docs/protocol.md): the open
      // stdin would keep it waiting for a message that never comes. It ends once what it
      // wrote last has been flushed.
      if (mine === epoch) process.stdout.write('', () => process.exit(0));
    } else if (message.type === 'reply') {
      const waiter = pending.get(message.id);
      if (!waiter) die(`a reply for unknown call id ${JSON.stringify(message.id)}`);
      pending.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else {
        // A conflict names its guard (`cause`), a rejection its event (`ref`): only when present.
        const { code, definite, cause, ref } = message.error;
        waiter.reject(Object.assign(new Error(message.error.message), { name: 'WorldError', code, definite }, cause === undefined ? {} : { cause }, ref === undefined ? {} : { ref }));
      }
    } else if (message.type === 'inspect') {
      if (start === null) early.push(message);
      else await answer(message);
    } else if (message.type === 'crash' && sessions) {
      // Everything of the incarnation goes: its calls, its start, its world.
      epoch++;
      pending.clear();
      start = null;
      early = [];
      send({ type: 'crashed' });
    } else {
      die(`an unknown message from the harness: ${line.slice(0, 200)}`);
    }
  });
  send({ type: 'hello', protocol: 1, name, capabilities, kind, ...(sessions ? { sessions: true } : {}) });
}
