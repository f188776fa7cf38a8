import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/**
 * The floor under any process consumer: `n` round trips over a pipe between this process and
 * a child in the consumer's language, each a JSON line each way, read and written as the
 * example clients do, and nothing else: no world, no scheduler, no schema, no consumer logic.
 * The child answers every reply with a call; this side answers every call with a reply
 * carrying a page of eight events, about the size of the bridge's largest messages.
 *
 * Protocol 1 has one call in flight at a time, so a world of c calls costs at least c of
 * these round trips through the bridge. What the bridge and forks rows show above this floor
 * is the harness's cost and the consumer's own work (and, under real kills, the processes'
 * starts or forks and their kills); the floor itself is the machine's (its pipes, its
 * scheduler, its cores) and the language's (reading, parsing and writing a line).
 */
const NODE_CHILD = `
const lines = require('node:readline').createInterface({ input: process.stdin });
let id = 0;
lines.on('line', () => process.stdout.write(JSON.stringify({ type: 'call', id: ++id, method: 'fetch', args: [{ resume: { kind: 'start' }, limit: 8 }] }) + '\\n'));
`;

/** The same in Python, as examples/python/tidemark_client.py reads and writes: readline, json.loads, one shared encoder, a flush. */
const PYTHON_CHILD = `
import json, sys
encode = json.JSONEncoder(separators=(",", ":")).encode
n = 0
while True:
    line = sys.stdin.readline()
    if line == "":
        break
    json.loads(line)
    n += 1
    sys.stdout.write(encode({"type": "call", "id": n, "method": "fetch", "args": [{"resume": {"kind": "start"}, "limit": 8}]}) + "\\n")
    sys.stdout.flush()
`;

/**
 * Under the JSON floor, the machine's own: a Python child that answers each line with a line
 * of two bytes, read and written with os.read and os.write, nothing parsed, nothing encoded.
 * What is left is the pipe, the two processes' wake-ups and the interpreter's loop: no
 * consumer in any language, with any framing, makes a round trip for less.
 */
const PYTHON_RAW_CHILD = `
import os
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    os.write(1, b"x\\n" * chunk.count(b"\\n"))
`;

/** Whose child answers: Node's (this process's own executable), or the Python interpreter at this path, with JSON lines as the client reads and writes them, or `raw` bytes. */
export type FloorChild = { readonly language: 'node' } | { readonly language: 'python'; readonly interpreter: string; readonly raw?: boolean };

const PAGE = {
  events: Array.from({ length: 8 }, (_, i) => ({ id: `e${i}`, version: 1, key: [i], attrs: { kind: 'order' }, payload: `e${i}:order` })),
  next: 't8',
  head: 40,
};

/** A child ready to answer: `roundTrips(n)` is what a caller times; the child's start-up is not in it. */
export interface Pipe {
  roundTrips(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function openPipe(who: FloorChild = { language: 'node' }): Promise<Pipe> {
  const [file, argv] = who.language === 'node' ? [process.execPath, ['-e', NODE_CHILD]] : [who.interpreter, ['-c', who.raw === true ? PYTHON_RAW_CHILD : PYTHON_CHILD]];
  const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let waiting: { left: number; done: () => void; fail: (error: Error) => void } | null = null;
  // Why the child can answer no more: it exited, could not be started, or its stdin broke.
  // Whoever waits is told at once, and every later round trip fails with it: never a hang.
  let gone: Error | null = null;
  const lost = (error: Error): void => {
    gone ??= error;
    const w = waiting;
    waiting = null;
    w?.fail(gone);
  };
  child.once('exit', (code, signal) => lost(new Error(`the pipe-floor child (${file}) exited with ${signal ?? `code ${code}`}`)));
  child.once('error', (error) => lost(new Error(`the pipe-floor child (${file}) could not run: ${error.message}`)));
  child.stdin.on('error', (error) => lost(new Error(`the pipe-floor child's stdin: ${error.message}`)));
  const raw = who.language === 'python' && who.raw === true;
  lines.on('line', (line) => {
    const id = raw ? 0 : (JSON.parse(line) as { id: number }).id;
    if (waiting === null) return;
    if (--waiting.left <= 0) {
      const { done } = waiting;
      waiting = null;
      return done();
    }
    child.stdin.write(raw ? 'y\n' : `${JSON.stringify({ type: 'reply', id, ok: true, value: PAGE })}\n`);
  });
  const roundTrips = (n: number): Promise<void> =>
    new Promise<void>((done, fail) => {
      if (gone !== null) return fail(gone);
      if (n <= 0) return done();
      waiting = { left: n, done, fail };
      child.stdin.write(raw ? 'y\n' : `${JSON.stringify({ type: 'reply', id: 0, ok: true, value: PAGE })}\n`);
    });
  try {
    await roundTrips(1);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    roundTrips,
    async close() {
      lines.close();
      const exited = child.exitCode !== null || child.signalCode !== null;
      child.kill('SIGKILL');
      if (!exited && child.pid !== undefined) await once(child, 'exit');
    },
  };
}
