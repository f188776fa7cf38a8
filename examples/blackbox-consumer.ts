// blackbox-consumer.ts: a blackbox tidemark adapter. The consumer keeps its own durable
// store (here an in-memory object standing in for a database) and lets the harness look
// inside through inspect(). In your own project, import from 'tidemark' instead.
import { comparePositions } from '../src/index.js';
import type { BlackboxConsumer, EventRef, Page, Position, Resume, SourceEvent, WorkerWorld, WorldError } from '../src/index.js';

/**
 * The consumer's database. Each event is written in one synchronous transaction (effect,
 * completion record and, when it may move, the watermark), so a crash, which in the
 * harness happens only at a call into the world, never leaves half a write.
 */
export interface LedgerDb {
  /** The committed watermark, the binding it belongs to, and a replay anchor tied to it. */
  progress: { binding: string; position: Position; anchor: string | null } | null;
  /** The newest lease generation that wrote here: an older one may not write (a fence). */
  epoch: number;
  /** Completion records: `id@version` of every event whose effect is in `effects`. */
  completed: Set<string>;
  /** The effects themselves, oldest first: what the ledger actually booked. */
  effects: { event: EventRef; payload: string }[];
}

export function openDb(): LedgerDb {
  return { progress: null, epoch: 0, completed: new Set(), effects: [] };
}

/** One transaction: books the event unless already booked, and moves the watermark if asked. */
function book(db: LedgerDb, event: SourceEvent, generation: number, progress: LedgerDb['progress']): void {
  if (generation < db.epoch) return; // a newer owner has written since: write nothing
  const key = `${event.id}@${event.version}`;
  if (!db.completed.has(key)) {
    db.effects.push({ event: { id: event.id, version: event.version }, payload: event.payload });
    db.completed.add(key);
  }
  const current = db.progress?.binding === progress?.binding ? db.progress?.position : undefined;
  // The watermark never decreases: a write that would lower it is dropped.
  if (progress !== null && (current === undefined || comparePositions(progress.position, current) > 0)) db.progress = progress;
  db.epoch = generation;
}

async function run(world: WorkerWorld, db: LedgerDb): Promise<void> {
  for (;;) {
    try {
      const generation = await world.lease();
      if (!(await pass(world, db, generation))) continue;
      if (world.source.contract.kind === 'none') {
        return await world.fail('the source promises no stability (contract none), so the ledger cannot prove it missed nothing');
      }
      return await world.caughtUp();
    } catch (error) {
      if (!isWorldError(error)) throw error;
    }
  }
}

/** One traversal from the durable position to the end. False: start over. */
async function pass(world: WorkerWorld, db: LedgerDb, generation: number): Promise<boolean> {
  const mine = db.progress?.binding === world.fingerprint ? db.progress : null;
  let watermark = mine?.position ?? null;
  let resume = resumeFrom(world, watermark, mine?.anchor ?? null);
  let head = Number.NEGATIVE_INFINITY;
  for (;;) {
    let page: Page;
    try {
      page = await world.fetch({ resume, limit: world.source.pageSize });
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'stale-token')) throw error;
      resume = resumeFrom(world, watermark, null);
      page = await world.fetch({ resume, limit: world.source.pageSize });
    }
    head = Math.max(head, page.head ?? head);
    // Renew the lease, then write without awaiting anything: no other worker runs in
    // between, so a worker that lost the lease never writes.
    if ((await world.lease()) !== generation) return false;
    const events = [...page.events].sort(comparePositions).filter((e) => watermark === null || comparePositions(e, watermark) > 0);
    let passable = true;
    for (const event of events) {
      passable &&= settled(world, event, head);
      const position = { key: [...event.key], id: event.id };
      book(db, event, generation, passable ? { binding: world.fingerprint, position, anchor: resume.kind === 'token' ? resume.token : null } : null);
      if (passable) watermark = position;
    }
    if (page.next === null) return true;
    resume = { kind: 'token', token: page.next };
  }
}

function resumeFrom(world: WorkerWorld, watermark: Position | null, anchor: string | null): Resume {
  if (watermark === null) return { kind: 'start' };
  if (world.source.resumes.includes('after')) return { kind: 'after', position: watermark };
  return anchor === null ? { kind: 'start' } : { kind: 'token', token: anchor };
}

function settled(world: WorkerWorld, event: SourceEvent, head: number): boolean {
  const contract = world.source.contract;
  switch (contract.kind) {
    case 'snapshot':
    case 'insertion-stable':
      return true;
    case 'replay-window':
      return (event.key[0] ?? 0) < head - contract.window;
    case 'none':
      return false;
  }
}

function isWorldError(error: unknown): error is WorldError {
  return error instanceof Error && error.name === 'WorldError';
}

const consumer: BlackboxConsumer<LedgerDb> = {
  name: 'ledger-blackbox',
  kind: 'blackbox',
  // Effect and completion record share one transaction, so the ledger books each event once.
  capabilities: { delivery: 'exactly-once' },
  open: openDb,
  run,
  inspect: (db) => ({ watermark: db.progress?.position ?? null, effects: [...db.effects] }),
};

export default consumer;
