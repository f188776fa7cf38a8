/**
 * State per binding (one bookmark per stream, as Singer taps keep it): after a rebind the
 * new stream has no bookmark yet, which is "none yet", not a watermark written as null.
 */
import { describe, expect, it } from 'vitest';
import ledger, { openDb, type LedgerDb } from '../examples/blackbox-consumer.js';
import type { BlackboxConsumer, Inspection } from '../src/adapter/consumer.js';
import { execute } from '../src/run/execute.js';
import { findScenario } from '../scenarios/named.js';

/** A store of one ledger per binding fingerprint, sharing the booked effects (an append-only log). */
interface Streams {
  readonly byBinding: Map<string, LedgerDb>;
  readonly shared: LedgerDb;
  current: string | null;
}

function perStream(name: string, inspect: (store: Streams) => Inspection): BlackboxConsumer<Streams> {
  return {
    name,
    kind: 'blackbox',
    capabilities: ledger.capabilities,
    open: () => ({ byBinding: new Map(), shared: openDb(), current: null }),
    run: async (world, store) => {
      store.current = world.fingerprint;
      let db = store.byBinding.get(world.fingerprint);
      if (!db) store.byBinding.set(world.fingerprint, (db = { ...openDb(), completed: store.shared.completed, effects: store.shared.effects }));
      await ledger.run(world, db);
    },
    inspect,
  };
}

const rebound = findScenario('binding-change-same-store')!;

describe('a consumer with state per binding passes a rebind', () => {
  it('reporting every binding`s watermark by fingerprint', async () => {
    const consumer = perStream('streams-by-fingerprint', (store) => ({
      watermark: null,
      watermarks: Object.fromEntries([...store.byBinding].map(([fp, db]) => [fp, db.progress?.position ?? null])),
      effects: [...store.shared.effects],
    }));
    const { history, result } = await execute(rebound.plan, consumer);
    expect(result.verdict).toEqual({ status: 'pass', anomalies: [] });
    // Both bindings got progress of their own, and the checker saw the refunds' watermark move.
    const observed = history.steps.filter((s) => s.kind === 'observed' && s.watermark !== undefined);
    expect(observed.length).toBeGreaterThan(1);
    // The world never sees a blackbox consumer's loads, so nothing shows a watermark of one
    // binding handed to a reader of another: binding confusion is untested, not passed.
    expect(result.results['binding-confusion']).toEqual({ status: 'untested', reason: 'no load handed the consumer a watermark written under another binding' });
  });

  it('reporting only the current binding`s watermark, null right after the rebind', async () => {
    const consumer = perStream('streams-current-only', (store) => ({
      watermark: store.current === null ? null : (store.byBinding.get(store.current)?.progress?.position ?? null),
      effects: [...store.shared.effects],
    }));
    const { history, result } = await execute(rebound.plan, consumer);
    // The rebind shows as the watermark going back to null: none yet for the new stream.
    const rebind = history.steps.find((s) => s.kind === 'rebind')!;
    expect(history.steps.some((s) => s.kind === 'observed' && s.seq > rebind.seq && s.watermark?.value === null)).toBe(true);
    expect(result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });
});

describe('over the process protocol', () => {
  it('a Python tap with one bookmark per stream passes binding-change-same-store', async () => {
    const { cli } = await import('./support.js');
    const { EXIT } = await import('../src/cli.js');
    const r = await cli('check', '--command', 'python3 examples/python/singer_tap.py', '--scenario', 'binding-change-same-store');
    expect(r.code, r.out).toBe(EXIT.pass);
    expect(r.out).toContain('pass     binding-change-same-store (R2)');
  });
});
