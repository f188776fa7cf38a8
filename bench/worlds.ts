import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { positionOf, refOf, type SourceEvent } from '../model/event.js';
import type { Resume } from '../model/history.js';
import { ev, plan } from '../scenarios/named.js';
import type { Plan } from '../scenarios/plan.js';
import type { AnyConsumer, Consumer, WorkerWorld } from '../src/adapter/consumer.js';
import { checkProperty } from '../src/run/conformance.js';

/** The repository's root: the bench runs from bench/ under tsx and from dist/bench/ when built. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('the bench cannot find the repository root (no package.json above it)');
    dir = up;
  }
  return dir;
}

/** Page size of the large worlds: the largest a generated world draws, so pages stay small against the stream. */
export const LARGE_PAGE_SIZE = 8;

/**
 * One calm world of `events` events: no faults, no mutations, one worker, an
 * insertion-stable source paging by opaque tokens, and a budget no run of the reference
 * consumer comes near (it makes about 2.5 calls per event in pages of 8).
 */
export function largePlan(events: number): Plan {
  return plan(
    Array.from({ length: events }, (_, i) => ev(i)),
    [],
    {
      source: { pageSize: LARGE_PAGE_SIZE, resumes: [], contract: { kind: 'insertion-stable' } },
      budget: { adversity: 10 * events + 100, drain: 10 * events + 100 },
      seed: 'bench',
    },
  );
}

/**
 * A world for the pending-calls row: `events` events in pages of 1,000, one worker, no
 * faults. Its consumer issues one emit per event all at once, so that many calls are
 * pending together.
 */
export function pendingPlan(events: number): Plan {
  return plan(
    Array.from({ length: events }, (_, i) => ev(i)),
    [],
    {
      source: { pageSize: 1000, resumes: [], contract: { kind: 'insertion-stable' } },
      budget: { adversity: 2 * events + 1000, drain: 2 * events + 1000 },
      seed: 'bench',
    },
  );
}

export interface PendingProbe {
  /** Emits issued and not yet answered, at most. */
  issued: number;
  answered: number;
  /** The heap after a full collection, taken right after every emit was issued and none answered. */
  heapWithAllPendingMiB: number | null;
}

/**
 * A correct at-least-once consumer that does not wait: it reads the whole stream, issues an
 * emit for every event without awaiting any, then waits for them all, records the
 * completions and the watermark in one commit each, and claims caught-up. A later
 * incarnation that finds the watermark already there claims at once. `probe` says how far it
 * got and, through `onAllIssued`, lets the bench look at memory while every call is pending.
 */
export function manyPendingConsumer(probe: PendingProbe, onAllIssued: () => void): Consumer {
  return {
    name: 'many-pending',
    capabilities: { delivery: 'at-least-once' },
    run: async (world: WorkerWorld) => {
      const state = await world.load();
      if (state.watermark?.binding === world.fingerprint) return world.caughtUp();
      const events: SourceEvent[] = [];
      let resume: Resume = { kind: 'start' };
      for (;;) {
        const page = await world.fetch({ resume, limit: world.source.pageSize });
        events.push(...page.events);
        if (page.next === null) break;
        resume = { kind: 'token', token: page.next };
      }
      const emits = events.map((e) => {
        probe.issued++;
        return world.emit(refOf(e), e.payload).then(() => {
          probe.answered++;
        });
      });
      onAllIssued();
      await Promise.all(emits);
      await world.commit(events.map((e) => ({ op: 'complete', event: refOf(e) })));
      const last = events.at(-1);
      if (last !== undefined) {
        const value = { key: [...positionOf(last).key], id: last.id };
        await world.commit([{ op: 'watermark', binding: world.fingerprint, value, expect: null }]);
      }
      return world.caughtUp();
    },
  };
}

/** The example consumer the process bridge row runs, relative to the repository root. */
export const NODE_EXAMPLE = 'examples/node/consumer.mjs';

/** The ledger that examples/node/consumer.mjs serves, relative to the repository root. */
export const NODE_LEDGER = 'examples/node/ledger.mjs';

/**
 * The very code of examples/node/consumer.mjs, run in this process: the ledger object it
 * serves over stdio (examples/node/ledger.mjs, which examples/node/in-process.mjs also hands to
 * the harness directly). Comparing this with the process example through the bridge
 * compares the bridge alone, not two implementations.
 */
export async function nodeExampleInProcess(): Promise<Consumer> {
  type Served = { name: string; capabilities: Consumer['capabilities']; run: (world: WorkerWorld) => Promise<void> };
  const { ledger } = (await import(pathToFileURL(join(repoRoot(), NODE_LEDGER)).href)) as { ledger?: Served };
  if (!ledger) throw new Error(`${NODE_LEDGER} exports no ledger: the bench cannot load the node example in process`);
  return { name: `${ledger.name} (in process)`, capabilities: ledger.capabilities, run: (world) => ledger.run(world) };
}

/**
 * The world calls (call steps) of the worlds checkProperty executes for this seed, counted in
 * a run of their own with `consumer` (in process, so that counting costs little): the round
 * trips a process consumer makes in those worlds, at one round trip a call. Life, mutation
 * and rebind steps are not calls, and a floor counts none of them.
 */
export async function callSteps(consumer: AnyConsumer, runs: number, seed: number): Promise<number> {
  let calls = 0;
  const outcome = await checkProperty(consumer, { runs, seed, onWorld: (x) => void (calls += x.history.steps.filter((s) => s.kind === 'call').length) });
  if (outcome.status !== 'pass') throw new Error(`${consumer.name} did not pass the worlds whose calls were counted: ${outcome.status}`);
  return calls;
}
