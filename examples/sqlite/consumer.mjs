// A blackbox consumer with a real database: it books each event of the stream in a SQLite
// ledger (better-sqlite3), speaking the tidemark protocol over stdio (docs/protocol.md).
//
//   tidemark check --command "node examples/sqlite/consumer.mjs"
//
// Everything durable lives in ONE SQLite file in the `store` directory the start message
// names: the watermark (with the binding it belongs to), the completion records, and an
// append-only log of effects. Each event is booked in ONE transaction: its effect row, its
// completion record and, when it may move, the new watermark. So an effect is never booked
// twice and never without its completion record (exactly-once, R5), and a SIGKILL at any
// moment leaves either the whole transaction or none of it. Between events the consumer
// renews its lease (a heartbeat); a transaction from an older lease generation than the
// ledger has seen writes nothing (the fence, R6).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { serve } from '../node/client.mjs';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS progress (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    binding  TEXT NOT NULL,
    position TEXT NOT NULL            -- JSON { key, id }: the committed watermark
  );
  CREATE TABLE IF NOT EXISTS fence (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL            -- the newest lease generation that wrote here
  );
  CREATE TABLE IF NOT EXISTS completed (
    event   TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (event, version)
  );
  CREATE TABLE IF NOT EXISTS effects (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    event   TEXT NOT NULL,
    version INTEGER NOT NULL,
    payload TEXT NOT NULL
  );
  INSERT OR IGNORE INTO fence (id, epoch) VALUES (1, 0);
`;

/** The stable total order (R1): ordering tuple field by field, then the id as tie-break. */
function compare(a, b) {
  for (let i = 0; i < Math.min(a.key.length, b.key.length); i++) if (a.key[i] !== b.key[i]) return a.key[i] < b.key[i] ? -1 : 1;
  if (a.key.length !== b.key.length) return a.key.length < b.key.length ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

const positionOf = (e) => ({ key: [...e.key], id: e.id });

/** The ledger: one SQLite file, opened once per process. */
class Ledger {
  constructor(dir) {
    // Two workers may open the file at once; the busy timeout makes them take turns.
    this.db = new Database(join(dir, 'ledger.db'), { timeout: 10_000 });
    this.db.exec(SCHEMA);
    this.readProgress = this.db.prepare('SELECT binding, position FROM progress WHERE id = 1');
    this.readEpoch = this.db.prepare('SELECT epoch FROM fence WHERE id = 1').pluck();
    this.isCompleted = this.db.prepare('SELECT 1 FROM completed WHERE event = ? AND version = ?').pluck();
    this.insertEffect = this.db.prepare('INSERT INTO effects (event, version, payload) VALUES (?, ?, ?)');
    this.insertCompleted = this.db.prepare('INSERT INTO completed (event, version) VALUES (?, ?)');
    this.writeProgress = this.db.prepare('INSERT INTO progress (id, binding, position) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET binding = excluded.binding, position = excluded.position');
    this.writeEpoch = this.db.prepare('UPDATE fence SET epoch = ? WHERE id = 1');
    this.readEffects = this.db.prepare('SELECT event, version, payload FROM effects ORDER BY seq');
    // BEGIN IMMEDIATE: the write lock is taken up front, so the guards read what the write sees.
    this.bookTx = this.db.transaction((event, generation, binding, advance) => this.bookNow(event, generation, binding, advance));
  }

  /** The committed watermark under this binding, or null. */
  watermark(binding) {
    const row = this.readProgress.get();
    return row && row.binding === binding ? JSON.parse(row.position) : null;
  }

  /**
   * One transaction: the effect and its completion record unless the event is already
   * booked, and the watermark if `advance` (never lowered). Returns false, writing nothing,
   * when a newer lease generation has written here since: this worker is stale.
   */
  book(event, generation, binding, advance) {
    return this.bookTx.immediate(event, generation, binding, advance);
  }

  bookNow(event, generation, binding, advance) {
    if (generation < this.readEpoch.get()) return false;
    if (!this.isCompleted.get(event.id, event.version)) {
      this.insertEffect.run(event.id, event.version, event.payload);
      this.insertCompleted.run(event.id, event.version);
    }
    if (advance) this.advance(binding, positionOf(event));
    this.writeEpoch.run(generation);
    return true;
  }

  advance(binding, position) {
    const current = this.watermark(binding);
    // The watermark never decreases (R3); another binding's progress says nothing about ours.
    if (current === null || compare(position, current) > 0) this.writeProgress.run(binding, JSON.stringify(position));
  }

  /** What the harness's inspection sees: the watermark as stored, and every effect, oldest first. */
  inspect() {
    const row = this.readProgress.get();
    return {
      watermark: row ? JSON.parse(row.position) : null,
      effects: this.readEffects.all().map((r) => ({ event: { id: r.event, version: r.version }, payload: r.payload })),
    };
  }
}

let ledger = null;
const open = (dir) => (ledger ??= new Ledger(dir));

/** Whether the source's contract says nothing can still appear at or before this event. */
function settled(contract, event, head) {
  switch (contract.kind) {
    case 'snapshot':
    case 'insertion-stable':
      return true;
    case 'replay-window':
      return head !== null && event.key[0] < head - contract.window;
    default:
      return false;
  }
}

class Stale extends Error {}

/** One traversal from the ledger's watermark to the end of the bound stream. */
async function pass(world, db, generation) {
  let watermark = db.watermark(world.fingerprint);
  let resume = watermark && world.source.resumes.includes('after') ? { kind: 'after', position: watermark } : { kind: 'start' };
  let head = null;
  for (;;) {
    const page = await world.fetch({ resume, limit: world.source.pageSize });
    if (page.head !== null) head = Math.max(head ?? page.head, page.head);
    // Pages may overlap, repeat or arrive out of order: sort, and drop what is committed.
    const events = [...page.events].sort(compare).filter((e) => watermark === null || compare(e, watermark) > 0);
    let passable = true;
    for (const event of events) {
      // The heartbeat: still the lease holder? Nothing else runs between its reply and the
      // transaction below, so a worker that lost the lease never books.
      if ((await world.lease()) !== generation) throw new Stale();
      passable &&= settled(world.source.contract, event, head);
      if (!db.book(event, generation, world.fingerprint, passable)) throw new Stale();
      if (passable) watermark = positionOf(event);
    }
    if (page.next === null) return;
    // The token only continues this traversal; it is never the watermark (R8).
    resume = { kind: 'token', token: page.next };
  }
}

serve({
  name: 'sqlite-ledger',
  kind: 'blackbox',
  // Effect and completion record share one SQLite transaction: each event is booked once.
  capabilities: { delivery: 'exactly-once' },
  inspect: (_message, start) => open(start.store).inspect(),
  async run(world) {
    const db = open(world.store);
    for (;;) {
      try {
        const generation = await world.lease();
        await pass(world, db, generation);
        if (world.source.contract.kind === 'none') {
          return await world.fail('the source promises no stability (contract none): the ledger cannot prove it missed nothing');
        }
        return await world.caughtUp();
      } catch (error) {
        // A world error or a lost lease: start over from what the ledger holds.
        if (error.name !== 'WorldError' && !(error instanceof Stale)) throw error;
      }
    }
  },
});
