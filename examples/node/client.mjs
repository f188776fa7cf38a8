// A minimal tidemark protocol client for Node, standard library only (docs/protocol.md).
// It says hello, waits for start, and gives the consumer a `world` whose methods send calls
// and resolve with the replies. Inspection requests are answered with `inspect()`.
import { createInterface } from 'node:readline';

export function serve({ name, capabilities, kind = 'whitebox', run, inspect }) {
  const pending = new Map();
  let nextId = 1;
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const call = (method, ...args) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ type: 'call', id, method, args });
    });
  const lines = createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    const message = JSON.parse(line);
    if (message.type === 'start') {
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
      try {
        await run(world);
      } catch (error) {
        process.stderr.write(`${error?.stack ?? error}\n`);
        process.exit(1);
      }
    } else if (message.type === 'reply') {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(Object.assign(new Error(message.error.message), { name: 'WorldError', code: message.error.code, definite: message.error.definite }));
    } else if (message.type === 'inspect') {
      send({ type: 'inspection', id: message.id, ...(await inspect(message)) });
    }
  });
  send({ type: 'hello', protocol: 1, name, capabilities, kind });
}
