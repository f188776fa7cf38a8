import fc from 'fast-check';

/**
 * The yardsticks: the same kind of test written with fast-check alone, measured in the same
 * process as tidemark and interleaved with it.
 *
 * The fair peer is what a team would write without tidemark: a fast-check property whose
 * world is a small paginated source, a store with completion records and a compare-and-set
 * watermark, and crashes and errors at drawn calls; one or two workers run a consumer of the
 * same design as the reference one against it, and every call goes through `fc.scheduler`,
 * so fast-check decides how concurrent calls interleave, as tidemark's scheduler does. At the
 * end it checks that every event had an effect. It does less than tidemark (no page quirks,
 * no mutations, no rebinds, no history, no independent oracle): the per-call cost is the
 * figure to compare, the per-world one is context.
 */

interface PeerEvent {
  readonly id: string;
  readonly key: number;
}

interface PeerPosition {
  readonly key: number;
  readonly id: string;
}

interface PeerWorld {
  readonly events: readonly PeerEvent[];
  readonly pageSize: number;
  readonly workers: number;
  /** Global call numbers at which a fault fires, and which. */
  readonly faults: readonly { readonly at: number; readonly kind: 'crash-before' | 'crash-after' | 'error' }[];
}

const worldArb: fc.Arbitrary<PeerWorld> = fc
  .record({
    keys: fc.array(fc.nat(40), { maxLength: 60, size: 'medium' }),
    pageSize: fc.integer({ min: 1, max: 8 }),
    workers: fc.integer({ min: 1, max: 2 }),
    faults: fc.array(fc.record({ at: fc.nat(150), kind: fc.constantFrom('crash-before' as const, 'crash-after' as const, 'error' as const) }), { maxLength: 6 }),
  })
  .map(({ keys, pageSize, workers, faults }) => ({ events: keys.map((key, i) => ({ id: `e${i}`, key })), pageSize, workers, faults }));

const before = (a: PeerPosition, b: PeerPosition): boolean => a.key < b.key || (a.key === b.key && a.id < b.id);

/** The incarnation died at this call: nothing it holds in memory survives. */
class Crash extends Error {}
/** The call failed definitely, or a guard did not hold: go back to durable state. */
class Refused extends Error {}

/** Counts the calls the peer's consumers made, across all runs, for per-call figures. */
export interface PeerCounter {
  calls: number;
}

export function peerProperty(counter: PeerCounter): fc.IAsyncPropertyWithHooks<[fc.Scheduler, PeerWorld]> {
  return fc.asyncProperty(fc.scheduler(), worldArb, async (s, world) => {
    const stream = [...world.events].sort((a, b) => (before(a, b) ? -1 : a.id === b.id ? 0 : 1));
    const faults = new Map(world.faults.map((f) => [f.at, f.kind]));
    const completed = new Set<string>();
    const effects = new Map<string, number>();
    let watermark: PeerPosition | null = null;
    let claims = 0;
    let n = 0;
    // One world call: it waits for the scheduler to pick it, as tidemark's calls do, and
    // only then takes effect, faulted as drawn; so fast-check decides the interleaving.
    const call =
      <A extends unknown[], T>(work: (...args: A) => T) =>
      async (...args: A): Promise<T> => {
        await s.schedule(Promise.resolve());
        counter.calls++;
        const fault = faults.get(n++);
        if (fault === 'crash-before') throw new Crash();
        if (fault === 'error') throw new Refused();
        const value = work(...args);
        if (fault === 'crash-after') throw new Crash();
        return value;
      };
    const api = {
      load: call(() => watermark),
      fetch: call((after: PeerPosition | null, limit: number) => {
        const start = after === null ? 0 : stream.findIndex((e) => before(after, e));
        const from = start === -1 ? stream.length : start;
        const events = stream.slice(from, from + limit);
        return { events, more: from + events.length < stream.length };
      }),
      completed: call((ids: readonly string[]) => ids.map((id) => completed.has(id))),
      emit: call((id: string) => void effects.set(id, (effects.get(id) ?? 0) + 1)),
      complete: call((id: string) => void completed.add(id)),
      advance: call((to: PeerPosition, expect: PeerPosition | null) => {
        if (watermark !== expect) throw new Refused();
        if (watermark !== null && before(to, watermark)) throw new Error('the peer consumer moved its watermark back');
        watermark = to;
      }),
      claim: call(() => void claims++),
    };
    // One incarnation: the reference consumer's design, at-least-once.
    const incarnation = async (): Promise<void> => {
      for (;;) {
        try {
          let stored = await api.load();
          let after = stored;
          for (;;) {
            const page = await api.fetch(after, world.pageSize);
            const done = await api.completed(page.events.map((e) => e.id));
            for (const [i, e] of page.events.entries()) {
              if (done[i]) continue;
              await api.emit(e.id);
              await api.complete(e.id);
            }
            const last = page.events.at(-1);
            if (last !== undefined) {
              const to = { key: last.key, id: last.id };
              await api.advance(to, stored);
              stored = to;
              after = to;
            }
            if (!page.more) return await api.claim();
          }
        } catch (error) {
          if (!(error instanceof Refused)) throw error;
        }
      }
    };
    // A worker whose incarnation crashed is born again with nothing in memory.
    const worker = async (): Promise<void> => {
      for (;;) {
        try {
          return await incarnation();
        } catch (error) {
          if (!(error instanceof Crash)) throw error;
        }
      }
    };
    await s.waitFor(Promise.all(Array.from({ length: world.workers }, worker)));
    return claims > 0 && stream.every((e) => (effects.get(e.id) ?? 0) > 0);
  });
}

/** Runs the fair peer; throws if its own consumer ever failed, which would make it no yardstick. */
export async function runPeer(runs: number, seed: number, counter: PeerCounter): Promise<void> {
  await fc.assert(peerProperty(counter), { numRuns: runs, seed });
}

/**
 * Plain fast-check, for context: a counter behind an async API checked by fast-check's own
 * model runner, the cheapest honest stateful test. Counts its commands.
 */
export async function runPlain(runs: number, seed: number, counter: { commands: number }): Promise<void> {
  class Real {
    value = 0;
    async inc(): Promise<void> {
      this.value++;
    }
  }
  class Inc implements fc.AsyncCommand<{ value: number }, Real> {
    check = () => true;
    async run(model: { value: number }, real: Real): Promise<void> {
      counter.commands++;
      model.value++;
      await real.inc();
      if (real.value !== model.value) throw new Error('diverged');
    }
    toString = () => 'inc';
  }
  const property = fc.asyncProperty(fc.commands([fc.constant(new Inc())], { maxCommands: 100, size: 'max' }), (cmds) =>
    fc.asyncModelRun(() => ({ model: { value: 0 }, real: new Real() }), cmds),
  );
  await fc.assert(property, { numRuns: runs, seed });
}
