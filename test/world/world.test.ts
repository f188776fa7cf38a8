/**
 * The world as a consumer meets it, through `execute(plan, consumer)` with small
 * hand-written consumers: what each fault does to the call and to the history, which faults
 * outlive the adversity phase, where mutations and a rebind land, and how the schedule picks
 * the next call among competing workers.
 */
import { describe, expect, it } from 'vitest';
import { fingerprint, type Binding } from '../../model/binding.js';
import { positionOf, refOf, type SourceEvent } from '../../model/event.js';
import type { CallStep, History, LifeStep, Page, Resume, Step } from '../../model/history.js';
import { comparePositions, formatPosition, isPosition, type Position } from '../../model/order.js';
import { CALL_FAULTS, type CallFault, type Fault, type Plan } from '../../scenarios/plan.js';
import type { Consumer, WorkerWorld } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { WorldError } from '../../src/world/errors.js';
import { calls, effectsById } from '../support.js';

const ALL: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['ts'], upTo: null };
const REFUNDS: Binding = { ...ALL, filter: { kind: 'equals', attr: 'kind', value: 'refund' } };

function ev(n: number, kind = 'order'): SourceEvent {
  return { id: `e${n}`, version: 1, key: [n], attrs: { kind }, payload: `e${n}:${kind}` };
}

const E41_43 = [ev(41), ev(42), ev(43)];

function plan(over: Partial<Plan> = {}): Plan {
  return {
    events: E41_43,
    binding: ALL,
    source: { pageSize: 10, resumes: ['after'], contract: { kind: 'insertion-stable' } },
    faults: [],
    schedule: [],
    seed: 'world-test',
    budget: { adversity: 200, drain: 200 },
    workers: 1,
    leaseTtlSteps: 8,
    mutations: [],
    rebind: null,
    poison: [],
    ...over,
  };
}

const who = (w: WorkerWorld): string => `${w.worker}#${w.incarnation}`;
const idsOf = (page: Page): string[] => page.events.map((e) => (e.version === 1 ? e.id : `${e.id}@${e.version}`));

/**
 * A plain consumer: it resumes after its own binding's watermark, handles each event of each
 * page in one transaction with a blind watermark, and claims caught-up at the end. On a world
 * error it starts over from durable state. It writes what it heard to `log`.
 */
function simple(log: string[] = [], errors: WorldError[] = []): Consumer {
  return {
    name: 'simple',
    capabilities: { delivery: 'at-least-once' },
    run: async (w) => {
      log.push(`${who(w)} start ${w.fingerprint === fingerprint(REFUNDS) ? 'REFUNDS' : 'ALL'}`);
      for (;;) {
        try {
          const state = await w.load();
          const stored = state.watermark?.binding === w.fingerprint ? state.watermark.value : null;
          let mark: Position | null = isPosition(stored) ? stored : null;
          log.push(`${who(w)} load ${mark === null ? 'none' : formatPosition(mark)}`);
          let resume: Resume = mark === null ? { kind: 'start' } : { kind: 'after', position: mark };
          for (;;) {
            const page = await w.fetch({ resume, limit: w.source.pageSize });
            log.push(`${who(w)} page ${idsOf(page).join(' ')}`);
            for (const e of page.events) {
              if (mark !== null && comparePositions(positionOf(e), mark) <= 0) continue;
              await w.commit([
                { op: 'effect', event: refOf(e), payload: e.payload },
                { op: 'complete', event: refOf(e) },
                { op: 'watermark', binding: w.fingerprint, value: positionOf(e) },
              ]);
              mark = positionOf(e);
            }
            if (page.next === null) return await w.caughtUp();
            resume = { kind: 'token', token: page.next };
          }
        } catch (error) {
          if (!(error instanceof WorldError)) throw error;
          errors.push(error);
          log.push(`${who(w)} ${error.code} ${error.definite ? 'definite' : 'indefinite'}`);
        }
      }
    },
  };
}

const callSteps = (history: History): CallStep[] => calls(history);
const lifeSteps = (history: History): LifeStep[] => history.steps.filter((s: Step): s is LifeStep => s.kind === 'life');
const actorOf = (s: CallStep | LifeStep): string => `${s.actor.worker}#${s.actor.incarnation}`;

describe('call faults', () => {
  it('R6 timeout: the commit is applied, the caller gets an indefinite WorldError, the history says applied and indefinite', async () => {
    const log: string[] = [];
    const errors: WorldError[] = [];
    const { history, result } = await execute(plan({ faults: [{ call: 'commit', nth: 0, kind: 'timeout' }] }), simple(log, errors));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(WorldError);
    expect(errors[0]).toMatchObject({ code: 'timeout', definite: false });
    const commit = callSteps(history).find((s) => s.call.kind === 'commit');
    expect(commit).toMatchObject({ phase: 'adversity', outcome: { kind: 'indefinite', code: 'timeout' }, applied: true });
    expect(commit?.call).toMatchObject({ kind: 'commit', ops: [{ op: 'effect', event: { id: 'e41' } }, { op: 'complete' }, { op: 'watermark' }] });
    // As recorded: a step holds every field, an absent one as undefined, which JSON leaves out.
    expect(JSON.parse(JSON.stringify(commit))).not.toHaveProperty('result');
    // The work was done: the retry reads the watermark the timed-out commit wrote, and e41
    // is not handled twice.
    expect(log.slice(0, 6)).toEqual(['w1#1 start ALL', 'w1#1 load none', 'w1#1 page e41 e42 e43', 'w1#1 timeout indefinite', 'w1#1 load 41#e41', 'w1#1 page e42 e43']);
    expect(Object.fromEntries(effectsById(history))).toEqual({ e41: 1, e42: 1, e43: 1 });
    expect(result.verdict.status).toBe('pass');
  });

  it('R5 timeout on an emit: the effect happened although the caller was told it may not have', async () => {
    const errors: WorldError[] = [];
    const emitter: Consumer = {
      name: 'emitter',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        const page = await w.fetch({ resume: { kind: 'start' }, limit: 10 });
        for (const e of page.events) await w.emit(refOf(e), e.payload).catch((error: WorldError) => errors.push(error));
        await w.caughtUp();
      },
    };
    const { history } = await execute(plan({ faults: [{ call: 'emit', nth: 1, kind: 'timeout' }] }), emitter);
    expect(errors.map((e) => [e.code, e.definite])).toEqual([['timeout', false]]);
    const emits = callSteps(history).filter((s) => s.phase === 'adversity' && s.call.kind === 'emit');
    expect(emits.map((s) => [s.outcome.kind, s.applied])).toEqual([
      ['ok', true],
      ['indefinite', true],
      ['ok', true],
    ]);
  });

  it('crash-after: the history keeps what the call returned, though the caller never saw it and died', async () => {
    const log: string[] = [];
    const { history } = await execute(plan({ faults: [{ call: 'fetch', nth: 0, kind: 'crash-after' }] }), simple(log));
    const fetch = history.steps.find((s): s is CallStep => s.kind === 'call' && s.call.kind === 'fetch');
    expect(fetch).toMatchObject({ actor: { worker: 'w1', incarnation: 1 }, outcome: { kind: 'crash-after' }, applied: true });
    expect(fetch?.result?.kind).toBe('page');
    if (fetch?.result?.kind !== 'page') return;
    expect(idsOf(fetch.result.page)).toEqual(['e41', 'e42', 'e43']);
    expect(fetch.result.page.next).toBeNull();
    // The worker is born again at once, and the dead one never heard the page or settled.
    expect(history.steps[fetch.seq + 1]).toMatchObject({ kind: 'life', actor: { worker: 'w1', incarnation: 2 }, event: { kind: 'start' } });
    expect(log.filter((l) => l.startsWith('w1#1'))).toEqual(['w1#1 start ALL', 'w1#1 load none']);
    expect(lifeSteps(history).filter((s) => s.actor.incarnation === 1).map((s) => s.event.kind)).toEqual(['start']);
    expect(callSteps(history).filter((s) => s.actor.incarnation === 1).map((s) => s.call.kind)).toEqual(['load', 'fetch']);
  });

  it('crash-before: the call is recorded as not applied and without a result', async () => {
    const { history } = await execute(plan({ faults: [{ call: 'commit', nth: 0, kind: 'crash-before' }] }), simple());
    const commit = callSteps(history).find((s) => s.call.kind === 'commit');
    expect(commit).toMatchObject({ outcome: { kind: 'crash-before' }, applied: false });
    expect(JSON.parse(JSON.stringify(commit))).not.toHaveProperty('result');
    expect(Object.fromEntries(effectsById(history))).toEqual({ e41: 1, e42: 1, e43: 1 });
  });
});

describe('errors a consumer can act on', () => {
  it('a rejected effect names the refused event version, in emit and in commit; the history records only the code', async () => {
    const errors: WorldError[] = [];
    const refuser: Consumer = {
      name: 'refuser',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        const page = await w.fetch({ resume: { kind: 'start' }, limit: 10 });
        const e42 = page.events.find((e) => e.id === 'e42') as SourceEvent;
        await w.emit(refOf(e42), e42.payload).catch((error: WorldError) => errors.push(error));
        await w.commit([{ op: 'effect', event: refOf(e42), payload: e42.payload }]).catch((error: WorldError) => errors.push(error));
        await w.fail('stopped for an operator');
      },
    };
    const { history } = await execute(plan({ poison: ['e42'] }), refuser);
    // Two refusals in each phase: the drain phase runs the consumer once more.
    expect(errors).toHaveLength(4);
    expect(errors.slice(0, 2).map((e) => [e.code, e.definite, e.ref, e.cause])).toEqual([
      ['rejected', true, { id: 'e42', version: 1 }, undefined],
      ['rejected', true, { id: 'e42', version: 1 }, undefined],
    ]);
    // The message is unchanged: consumers put it into dead letters, which the history records.
    expect(errors[0]?.message).toBe('the effect for e42 is refused: it is a poison event');
    const refused = callSteps(history).filter((s) => s.phase === 'adversity' && s.outcome.kind === 'error');
    expect(refused.map((s) => s.outcome)).toEqual([
      { kind: 'error', code: 'rejected' },
      { kind: 'error', code: 'rejected' },
    ]);
  });

  it('a conflict says which guard refused: the lease held by another worker, a fence, a compare-and-set, unless-completed', async () => {
    const causes: string[] = [];
    const note = (error: unknown): void => {
      if (!(error instanceof WorldError)) throw error;
      causes.push(`${error.code}:${String(error.cause)}`);
    };
    const guarded: Consumer = {
      name: 'guarded',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        const generation = await w.lease().catch((error: unknown) => (note(error), 0));
        if (w.worker === 'w2') {
          // w1 holds an unexpired lease: w2 is refused, and its fenced commit too.
          await w.commit([{ op: 'complete', event: { id: 'e41', version: 1 } }], { fence: 7 }).catch(note);
          return await w.fail('w2 stops');
        }
        await w.commit([{ op: 'complete', event: { id: 'e41', version: 1 } }], { fence: generation });
        await w.commit([{ op: 'watermark', binding: w.fingerprint, value: { key: [41], id: 'e41' }, expect: { key: [1], id: 'x' } }]).catch(note);
        await w.commit([{ op: 'unless-completed', event: { id: 'e41', version: 1 } }]).catch(note);
        await w.caughtUp();
      },
    };
    // w1 goes first (lease, then its first commit); then w2 runs both its calls.
    await execute(plan({ workers: 2, schedule: [0, 0, 1, 1] }), guarded);
    expect(causes.slice(0, 4).sort()).toEqual(['conflict:expect', 'conflict:fence', 'conflict:lease-held', 'conflict:unless-completed']);
  });

  it("the lease's time to live and its unit are part of the world, as the plan sets them", async () => {
    const seen: unknown[] = [];
    const reader: Consumer = {
      name: 'reader',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        seen.push(w.leaseTtl);
        await w.caughtUp();
      },
    };
    await execute(plan({ leaseTtlSteps: 5 }), reader);
    expect(seen[0]).toEqual({ value: 5, unit: 'steps' });
  });
});

describe('faults in the drain phase', () => {
  /** Fetches from the start every time, follows tokens, records effects without a watermark, claims. */
  function fromStart(pages: string[][]): Consumer {
    return {
      name: 'from-start',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        for (;;) {
          try {
            let resume: Resume = { kind: 'start' };
            for (;;) {
              const page = await w.fetch({ resume, limit: 10 });
              pages.push(idsOf(page));
              if (page.events.length > 0) await w.commit(page.events.map((e) => ({ op: 'effect' as const, event: refOf(e), payload: e.payload })));
              if (page.next === null) return await w.caughtUp();
              resume = { kind: 'token', token: page.next };
            }
          } catch (error) {
            if (!(error instanceof WorldError)) throw error;
          }
        }
      },
    };
  }

  /** The first fetch of the drain phase. The adversity phase fetches once (nth 0), so the drain's first is nth 1. */
  async function drainFetch(fault: Fault): Promise<{ step: CallStep; pages: string[][]; history: History }> {
    const pages: string[][] = [];
    const { history } = await execute(plan({ faults: [fault] }), fromStart(pages));
    const step = callSteps(history).find((s) => s.phase === 'drain' && s.call.kind === 'fetch');
    if (step === undefined) throw new Error('no drain fetch');
    return { step, pages, history };
  }

  it.each([
    ['empty', []],
    ['short', ['e41']],
    ['reorder', ['e42', 'e43', 'e41']],
  ] as const)('R9 the page quirk %s still fires in the drain phase', async (quirk, expected) => {
    const { step, pages } = await drainFetch({ call: 'fetch', nth: 1, kind: quirk });
    expect(step).toMatchObject({ outcome: { kind: 'ok' }, applied: true, result: { kind: 'page' } });
    if (step.result?.kind !== 'page') return;
    expect(idsOf(step.result.page)).toEqual([...expected]);
    expect(pages[0]).toEqual(['e41', 'e42', 'e43']);
    expect(pages[1]).toEqual([...expected]);
  });

  it('R9 the page quirk stale still fires in the drain phase', async () => {
    // Pages of one event: the adversity fetches nth 0..2, the drain starts at nth 3 and
    // follows its token at nth 4, which the quirk rejects.
    const pages: string[][] = [];
    const { history } = await execute(plan({ source: { pageSize: 1, resumes: [], contract: { kind: 'insertion-stable' } }, faults: [{ call: 'fetch', nth: 4, kind: 'stale' }] }), fromStart(pages));
    const drain = callSteps(history).filter((s) => s.phase === 'drain' && s.call.kind === 'fetch');
    expect(drain.map((s) => (s.outcome.kind === 'error' ? s.outcome.code : s.outcome.kind))).toEqual(['ok', 'stale-token', 'ok', 'ok', 'ok']);
  });

  it.each(CALL_FAULTS)('%s does not fire in the drain phase, though it would at the same call in the adversity phase', async (kind: CallFault) => {
    const drain = await drainFetch({ call: 'fetch', nth: 1, kind });
    expect(drain.step).toMatchObject({ outcome: { kind: 'ok' }, applied: true, result: { kind: 'page' } });
    expect(drain.pages.slice(0, 2)).toEqual([
      ['e41', 'e42', 'e43'],
      ['e41', 'e42', 'e43'],
    ]);
    expect(callSteps(drain.history).filter((s) => s.phase === 'drain').every((s) => s.outcome.kind === 'ok')).toBe(true);
    // The control: at nth 0 the adversity phase's fetch takes the fault.
    const { history } = await execute(plan({ faults: [{ call: 'fetch', nth: 0, kind }] }), fromStart([]));
    const first = callSteps(history)[0];
    const expected = { 'crash-before': 'crash-before', 'crash-after': 'crash-after', error: 'error', timeout: 'indefinite', lost: 'indefinite' }[kind];
    expect(first).toMatchObject({ phase: 'adversity', call: { kind: 'fetch' }, outcome: { kind: expected } });
  });
});

describe('mutations', () => {
  it('R10 are applied before the planned call of their kind, in plan order, and recorded as mutation steps', async () => {
    const log: string[] = [];
    const { history } = await execute(
      plan({
        mutations: [
          { before: { call: 'fetch', nth: 0 }, kind: 'insert', target: 0, back: 0 },
          { before: { call: 'fetch', nth: 0 }, kind: 'move', target: 0, back: 0 },
          // Past every adversity call this consumer makes: never applied, and never in the drain.
          { before: { call: 'commit', nth: 500 }, kind: 'insert', target: 1, back: 0 },
        ],
      }),
      simple(log),
    );
    expect(history.steps.slice(0, 5).map((s) => (s.kind === 'call' ? s.call.kind : s.kind))).toEqual(['life', 'load', 'mutation', 'mutation', 'fetch']);
    const mutations = history.steps.filter((s) => s.kind === 'mutation');
    expect(mutations).toEqual([
      { kind: 'mutation', seq: 2, phase: 'adversity', mutation: 'insert', event: { id: 'm0', version: 1, key: [44], attrs: { kind: 'order' }, payload: 'm0:order' } },
      { kind: 'mutation', seq: 3, phase: 'adversity', mutation: 'move', event: { id: 'e41', version: 2, key: [45], attrs: { kind: 'order' }, payload: 'e41:v2:order' } },
    ]);
    // The fetch right after them sees the new stream: e41@1 is gone, e41@2 is at the end.
    expect(log[2]).toBe('w1#1 page e42 e43 m0 e41@2');
  });
});

describe('addresses tied to an event', () => {
  it('an emit, completion check or commit counts only the calls about that event', async () => {
    // One page carries all three; the first commit about e43 is the third commit of the run.
    const { history } = await execute(plan({ faults: [{ call: 'commit', nth: 0, kind: 'crash-before', after: 'e43' }] }), simple());
    const crashed = callSteps(history).filter((s) => s.outcome.kind === 'crash-before');
    expect(crashed.map((s) => s.call)).toMatchObject([{ kind: 'commit', ops: [{ op: 'effect', event: { id: 'e43' } }, { op: 'complete' }, { op: 'watermark' }] }]);
    expect(callSteps(history).filter((s) => s.call.kind === 'commit' && s.seq < (crashed[0]?.seq ?? 0))).toHaveLength(2);
  });

  it('any other call counts from the first fetch that returned the event; an event never delivered never arms it', async () => {
    const log: string[] = [];
    const { history } = await execute(
      plan({
        source: { pageSize: 1, resumes: ['after'], contract: { kind: 'insertion-stable' } },
        // e44 is filtered out, never delivered, so this never fires.
        faults: [{ call: 'fetch', nth: 0, kind: 'crash-before', after: 'e44' }],
        events: [...E41_43, ev(44, 'refund')],
        binding: { ...ALL, filter: { kind: 'equals', attr: 'kind', value: 'order' } },
        mutations: [{ before: { call: 'claim', nth: 0, after: 'e43' }, kind: 'insert', target: 0, back: 0 }],
      }),
      simple(log),
    );
    expect(callSteps(history).filter((s) => s.outcome.kind === 'crash-before')).toEqual([]);
    // The insert lands just before the claim that follows e43's first delivery.
    const at = history.steps.findIndex((s) => s.kind === 'mutation');
    const fetched = callSteps(history).filter((s) => s.seq < at && s.call.kind === 'fetch');
    expect(fetched.at(-1)?.result).toMatchObject({ kind: 'page', page: { events: [{ id: 'e43' }] } });
    expect(history.steps[at + 1]).toMatchObject({ kind: 'call', call: { kind: 'claim' } });
    expect(log.at(-1)).toBe('w1#2 page m0');
  });
});

describe('rebind', () => {
  it('R2 kills every live worker, records a rebind step and restarts them all under the new binding', async () => {
    const log: string[] = [];
    const { history, result } = await execute(
      plan({ events: [...E41_43, ev(44, 'refund')], workers: 2, rebind: { before: { call: 'commit', nth: 0 }, binding: REFUNDS } }),
      simple(log),
    );
    // Calls 0 and 1 ran (w1's load and fetch); the call picked third died with its worker.
    expect(history.steps.slice(0, 7)).toMatchObject([
      { kind: 'life', actor: { worker: 'w1', incarnation: 1 }, event: { kind: 'start' } },
      { kind: 'life', actor: { worker: 'w2', incarnation: 1 }, event: { kind: 'start' } },
      { kind: 'call', actor: { worker: 'w1', incarnation: 1 }, call: { kind: 'load' } },
      { kind: 'call', actor: { worker: 'w1', incarnation: 1 }, call: { kind: 'fetch' } },
      { kind: 'rebind', seq: 4, phase: 'adversity', binding: REFUNDS },
      { kind: 'life', actor: { worker: 'w1', incarnation: 2 }, event: { kind: 'start' } },
      { kind: 'life', actor: { worker: 'w2', incarnation: 2 }, event: { kind: 'start' } },
    ]);
    expect(history.steps.filter((s) => s.kind === 'rebind')).toHaveLength(1);
    const after = history.steps.slice(5).filter((s): s is CallStep | LifeStep => s.kind === 'call' || s.kind === 'life');
    expect(after.filter((s) => s.actor.incarnation === 1)).toEqual([]);
    // No incarnation of the first binding ever ended visibly: they were killed.
    expect(lifeSteps(history).filter((s) => s.actor.incarnation === 1).map((s) => s.event.kind)).toEqual(['start', 'start']);
    // Every incarnation after the rebind, the drain's included, reads REFUNDS.
    expect(log.filter((l) => l.includes(' start '))).toEqual(['w1#1 start ALL', 'w2#1 start ALL', 'w1#2 start REFUNDS', 'w2#2 start REFUNDS', 'w1#3 start REFUNDS']);
    const pages = callSteps(history).flatMap((s) => (s.seq > 4 && s.result?.kind === 'page' ? [idsOf(s.result.page)] : []));
    expect(pages.length).toBeGreaterThan(0);
    for (const page of pages) expect(page.every((id) => id === 'e44')).toBe(true);
    // w1#1 never committed: its commit for e41 was the call the rebind dropped.
    expect(effectsById(history).get('e41')).toBeUndefined();
    expect(result.verdict.status).toBe('pass');
  });
});

describe('the schedule', () => {
  /** Three loads and a claim per incarnation. */
  const loader: Consumer = {
    name: 'loader',
    capabilities: { delivery: 'at-least-once' },
    run: async (w) => {
      for (let i = 0; i < 3; i++) await w.load();
      await w.caughtUp();
    },
  };

  it.each([
    // With nothing left in the schedule the choice is 0: w1, the first worker with a pending call.
    [[], ['w1', 'w1', 'w1', 'w1']],
    [[1, 1], ['w2', 'w2', 'w1', 'w1', 'w1', 'w1']],
    // 3 mod 2 = 1 picks w2, 2 mod 2 = 0 picks w1, 5 mod 2 = 1 picks w2 again.
    [[3, 2, 5], ['w2', 'w1', 'w2', 'w1', 'w1', 'w1']],
  ])('with 2 workers, the choice c picks worker c mod (workers with pending calls): %j', async (schedule, expected) => {
    const { history } = await execute(plan({ workers: 2, schedule }), loader);
    const adversity = callSteps(history).filter((s) => s.phase === 'adversity');
    expect(adversity.map((s) => s.actor.worker)).toEqual(expected);
    expect(adversity.at(-1)?.call.kind).toBe('claim');
  });

  it('c div (workers) picks among one worker\'s concurrent calls, oldest first', async () => {
    const concurrent: Consumer = {
      name: 'concurrent',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        await Promise.all([w.load(), w.completed([{ id: 'e41', version: 1 }])]);
        await w.caughtUp();
      },
    };
    // Pending: w1 load, w1 completed, w2 load, w2 completed. c = 2 is w1's second call,
    // c = 3 is w2's second; then 0 takes w1's load, and w1's claim ends the phase.
    const { history } = await execute(plan({ workers: 2, schedule: [2, 3] }), concurrent);
    const adversity = callSteps(history).filter((s) => s.phase === 'adversity');
    expect(adversity.map((s) => `${actorOf(s)} ${s.call.kind}`)).toEqual(['w1#1 completed', 'w2#1 completed', 'w1#1 load', 'w1#1 claim']);
  });
});

describe('lease generations in the history', () => {
  /**
   * Two workers lease, fetch, and commit each event with a blind (unfenced) watermark. With a
   * lease of one step, w1's lease has expired when w2 asks, so w2 is granted generation 2 at
   * the second call; the fault decides whether w2 hears it. w1 then runs ahead and commits
   * from generation 1.
   */
  async function blindAfterNewerLease(kind: CallFault): Promise<{ history: History; kinds: string[] }> {
    const blind: Consumer = {
      name: 'blind',
      capabilities: { delivery: 'at-least-once' },
      run: async (w) => {
        try {
          await w.lease();
        } catch {
          return; // w2 gives up; the schedule keeps its next life waiting
        }
        const state = await w.load();
        const stored = state.watermark?.value;
        const page = await w.fetch({ resume: isPosition(stored) ? { kind: 'after', position: stored } : { kind: 'start' }, limit: 10 });
        for (const e of page.events) {
          await w.commit([
            { op: 'effect', event: refOf(e), payload: e.payload },
            { op: 'watermark', binding: w.fingerprint, value: positionOf(e) },
          ]);
        }
        await w.caughtUp();
      },
    };
    const { history, result } = await execute(
      plan({ workers: 2, leaseTtlSteps: 1, schedule: [0, 1], faults: [{ call: 'lease', nth: 1, kind }] }),
      blind,
    );
    const leases = callSteps(history).filter((s) => s.call.kind === 'lease');
    expect(leases.slice(0, 2).map((s) => [actorOf(s), s.applied])).toEqual([
      ['w1#1', true],
      ['w2#1', true],
    ]);
    const w1Commits = callSteps(history).filter((s) => s.phase === 'adversity' && s.call.kind === 'commit');
    expect(w1Commits.map(actorOf)).toEqual(['w1#1', 'w1#1', 'w1#1']);
    expect(w1Commits.every((s) => s.applied && s.seq > (leases[1]?.seq ?? Infinity))).toBe(true);
    return { history, kinds: result.verdict.anomalies.map((a) => a.kind) };
  }

  it('R6 a timed-out lease took effect: the world granted generation 2 before w1 committed', async () => {
    const { history } = await blindAfterNewerLease('timeout');
    const w2 = callSteps(history).find((s) => actorOf(s) === 'w2#1');
    expect(w2).toMatchObject({ call: { kind: 'lease' }, outcome: { kind: 'indefinite', code: 'timeout' }, applied: true });
    // The drain's lease is a new holder's, generation 3: so 2 was granted in between.
    const drain = callSteps(history).find((s) => s.phase === 'drain' && s.call.kind === 'lease');
    expect(drain?.result).toEqual({ kind: 'generation', generation: 3 });
  });

  it('R6 stale-generation-commit: w2 died right after it was granted generation 2 (crash-after)', async () => {
    const { history, kinds } = await blindAfterNewerLease('crash-after');
    expect(callSteps(history).find((s) => actorOf(s) === 'w2#1')?.result).toEqual({ kind: 'generation', generation: 2 });
    expect(kinds).toEqual(['stale-generation-commit', 'stale-generation-commit', 'stale-generation-commit']);
  });

  // A timeout records what the call did, like crash-after: the checker learns the granted
  // generation from it, so w1's blind commits from generation 1 are stale.
  it('R6 stale-generation-commit: w2 was granted generation 2 but only heard a timeout', async () => {
    const { kinds } = await blindAfterNewerLease('timeout');
    expect(kinds).toEqual(['stale-generation-commit', 'stale-generation-commit', 'stale-generation-commit']);
  });
});
