// A minimal tidemark protocol client for Node, standard library only (docs/protocol.md;
// every message is described by schema/protocol.schema.json).
// It says hello, waits for start, and gives the consumer a `world` whose methods send calls
// and resolve with the replies. A blackbox consumer answers inspection requests with
// `inspect(message, start)`: what its own store durably holds, read from the `start.store`
// directory. A request that arrives before start waits until start has arrived.
// Protocol 1 allows one call in flight at a time: await each call before the next.
import { createInterface } from 'node:readline';

export function serve({ name, capabilities, kind = 'whitebox', run, inspect }) {
  const pending = new Map();
  let nextId = 1;
  let start = null;
  const early = [];
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const die = (problem) => {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  };
  const call = (method, ...args) =>
    new Promise((resolve, reject) => {
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
      const world = {
        ...message,
        fetch: (request) => call('fetch', request),
        load: () => call('load'),
        completed: (events) => call('completed', events),
        commit: (ops, options) => call('commit', ops, options ?? {}),
        emit: (event, payload) => call('emit', event, payload),
        lease: () => call('lease'),
        caughtUp: () => call('caughtUp'),
        fail: (reason) => call('fail', reason),
      };
      for (const m of early.splice(0)) await answer(m);
      try {
        await run(world);
      } catch (error) {
        process.stderr.write(`${error?.stack ?? error}\n`);
        process.exit(1);
      }
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
    } else {
      die(`an unknown message from the harness: ${line.slice(0, 200)}`);
    }
  });
  send({ type: 'hello', protocol: 1, name, capabilities, kind });
}
