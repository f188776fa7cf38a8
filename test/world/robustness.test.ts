import { describe, expect, it } from 'vitest';
import type { Plan } from '../../scenarios/plan.js';
import { findScenario } from '../../scenarios/named.js';
import { PlanError, validatePlan } from '../../scenarios/validate.js';
import type { Consumer } from '../../src/adapter/consumer.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute } from '../../src/run/execute.js';
import { renderFailure } from '../../src/report/failure.js';

const base = findScenario('failed-event-holds-watermark')!.plan;

function broken(change: (p: Record<string, any>) => void): Plan {
  const p = structuredClone(base) as Record<string, any>;
  change(p);
  return p as Plan;
}

describe('bad input is named', () => {
  it.each([
    ['events[1].id', (p: any) => (p.events[1].id = p.events[0].id)],
    ['events[0].key', (p: any) => (p.events[0].key = [1, 2])],
    ['events[2].version', (p: any) => (p.events[2].version = 0)],
    ['events[0].payload', (p: any) => (p.events[0].payload = 7)],
    ['binding.scope', (p: any) => (p.binding.scope = '')],
    ['binding.ordering', (p: any) => (p.binding.ordering = [])],
    ['binding.upTo', (p: any) => (p.binding.upTo = 'soon')],
    ['binding.filter.kind', (p: any) => (p.binding.filter = { kind: 'regex' })],
    ['binding.filter.value', (p: any) => (p.binding.filter = { kind: 'equals', attr: 'kind', value: {} })],
    ['source.pageSize', (p: any) => (p.source.pageSize = 0)],
    ['source.resumes', (p: any) => (p.source.resumes = ['cursor'])],
    ['source.contract.kind', (p: any) => (p.source.contract = { kind: 'eventually' })],
    ['source.contract.window', (p: any) => (p.source.contract = { kind: 'replay-window', window: 0 })],
    ['faults[0].call', (p: any) => (p.faults[0].call = 'sleep')],
    ['faults[0].nth', (p: any) => (p.faults[0].nth = -1)],
    ['faults[0].kind', (p: any) => (p.faults[0].kind = 'explode')],
    ['faults[0].after', (p: any) => (p.faults[0].after = 'e99')],
    ['mutations[0].before.after', (p: any) => (p.mutations = [{ before: { call: 'fetch', nth: 0, after: 7 }, kind: 'insert', target: 0, back: 0 }])],
    ['schedule', (p: any) => (p.schedule = [1.5])],
    ['seed', (p: any) => (p.seed = 5)],
    ['budget.drain', (p: any) => (p.budget = { adversity: 10, drain: 0 })],
  ])('%s', (field, change) => {
    const plan = broken(change);
    expect(() => validatePlan(plan)).toThrow(PlanError);
    expect(() => validatePlan(plan)).toThrow(`invalid plan: ${field} `);
  });

  it('execute refuses an invalid plan before running anything', async () => {
    await expect(execute(broken((p) => (p.source.pageSize = 1.5)), referenceConsumer())).rejects.toThrow('source.pageSize');
  });
});

describe('a misbehaving consumer is judged, never crashes the harness', () => {
  it('R7 an ordinary error thrown by the consumer ends that incarnation and the run goes on', async () => {
    const reference = referenceConsumer();
    let lives = 0;
    const flaky: Consumer = {
      name: 'flaky',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        if (++lives === 1) {
          await world.load();
          throw new TypeError('handler blew up on e41');
        }
        return reference.run(world);
      },
    };
    const { history, result } = await execute(base, flaky);
    const threw = history.steps.find((s) => s.kind === 'life' && s.event.kind === 'threw');
    expect(threw).toMatchObject({ event: { kind: 'threw', message: 'TypeError: handler blew up on e41' } });
    expect(result.verdict.status).toBe('pass');
  });

  it('a consumer that stops calling the world without returning is unknown, not pass', async () => {
    const stuck: Consumer = {
      name: 'stuck',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        await world.load();
        await new Promise(() => {});
      },
    };
    const { history, result } = await execute(base, stuck);
    expect(result.verdict.status).toBe('unknown');
    expect(history.steps.at(-1)).toMatchObject({ kind: 'life', event: { kind: 'hung' } });
  });

  it('a hold that is never released is a stall, however many holds are taken and released inside it', async () => {
    const holding: Consumer = {
      name: 'holding',
      capabilities: { delivery: 'at-least-once' },
      stallMs: 300,
      run: async (world) => {
        await world.load();
        world.hold(() => 'the outer hold, never released');
        // Busy-looking: an inner hold taken and released every 50 ms must not restart the clock.
        const busy = setInterval(() => world.hold()(), 50);
        world.signal.addEventListener('abort', () => clearInterval(busy));
        await new Promise(() => {});
      },
    };
    const { result } = await execute(base, holding);
    expect(result.verdict).toMatchObject({ status: 'unknown', reason: expect.stringContaining('w1#1 sent no call for 0.3 s; the outer hold, never released') });
  });

  it('with two workers holding, a stall is declared within two limits of the first to run out, naming it, however the other holds', async () => {
    // w1 holds and never calls. w2 either re-takes its hold without end (never running out)
    // or holds with a limit of its own a hundred times longer: neither may put the stall off
    // for longer than a second limit of w1's, and w1 is the one named.
    const plan = findScenario('stale-generation-cannot-advance')!.plan;
    expect(plan.workers).toBe(2);
    for (const other of ['re-holds', 'holds longer']) {
      const consumer: Consumer = {
        name: 'two-holders',
        capabilities: { delivery: 'at-least-once' },
        stallMs: 300,
        run: async (world) => {
          // Both hold from their start: a worker with a call waiting would not be picked while the other holds.
          if (world.worker === 'w1') world.hold(() => 'w1 never calls');
          else if (other === 'holds longer') world.hold(() => 'w2 holds with a long limit', 30_000);
          else {
            let release = world.hold(() => 'w2 re-holds');
            const busy = setInterval(() => {
              release();
              release = world.hold(() => 'w2 re-holds');
            }, 50);
            world.signal.addEventListener('abort', () => clearInterval(busy));
          }
          await new Promise(() => {});
        },
      };
      const { result } = await execute(plan, consumer);
      expect(result.verdict, other).toMatchObject({ status: 'unknown', reason: expect.stringContaining('w1#1 sent no call for 0.3 s; w1 never calls') });
    }
  });

  it('a wait on holds that a release ends early leaves no timer behind', async () => {
    // Every release ends the world's wait at once and counts as one of its waits: within the
    // stall limit's 30 waits, a consumer releasing inner holds as fast as it can ended 30
    // waits in as many turns, each of which had armed a timer of its own.
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    let most = 0;
    const before = timers();
    const releasing: Consumer = {
      name: 'releasing',
      capabilities: { delivery: 'at-least-once' },
      stallMs: 300,
      run: async (world) => {
        await world.load();
        world.hold(() => 'the outer hold, never released');
        while (!world.signal.aborted) {
          world.hold()();
          most = Math.max(most, timers() - before);
          await new Promise((resolve) => setImmediate(resolve));
        }
      },
    };
    const { result } = await execute(base, releasing);
    expect(result.verdict).toMatchObject({ status: 'unknown', reason: expect.stringContaining('the outer hold, never released') });
    expect(most).toBeLessThanOrEqual(2);
  });

  it('a consumer that holds and releases the world without end, never calling, is unknown: its run ends', async () => {
    // It polls something outside that never has work: every poll is a hold, every hold is
    // released. No hold outlasts the stall limit, so it is the idle limit that must end it.
    const poller: Consumer = {
      name: 'poller',
      capabilities: { delivery: 'at-least-once' },
      stallMs: 200,
      run: async (world) => {
        while (!world.signal.aborted) {
          const release = world.hold(() => 'polling a queue that stays empty');
          await new Promise((resolve) => setTimeout(resolve, 1));
          release();
          await null;
        }
      },
    };
    const { history, result } = await execute(base, poller);
    expect(result.verdict.status).toBe('unknown');
    expect(history.steps.at(-1)).toMatchObject({ kind: 'life', event: { kind: 'hung' } });
  });

  it('R9 a consumer that loops without ever claiming runs out of budget: liveness', async () => {
    const spinner: Consumer = {
      name: 'spinner',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        for (;;) await world.fetch({ resume: { kind: 'start' }, limit: 1 });
      },
    };
    const { result } = await execute({ ...base, budget: { adversity: 50, drain: 50 } }, spinner);
    expect(result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('a consumer that returns at once, over and over, still ends within the budget', async () => {
    const quitter: Consumer = { name: 'quitter', capabilities: { delivery: 'at-least-once' }, run: async () => {} };
    const { result } = await execute({ ...base, budget: { adversity: 20, drain: 20 } }, quitter);
    expect(result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('a consumer that fails visibly on a provable source is a liveness failure', async () => {
    const quitter: Consumer = { name: 'gives-up', capabilities: { delivery: 'at-least-once' }, run: (w) => w.fail('cannot prove the boundary') };
    const { result } = await execute(base, quitter);
    expect(result.verdict.anomalies).toMatchObject([{ kind: 'liveness', explanation: expect.stringContaining('cannot prove the boundary') }]);
  });

  it('the source refuses malformed requests with a definite error the consumer sees', async () => {
    const errors: string[] = [];
    const sloppy: Consumer = {
      name: 'sloppy',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        for (const request of [
          { resume: { kind: 'start' as const }, limit: 0 },
          { resume: { kind: 'after' as const, position: 'e41' }, limit: 1 },
          { resume: { kind: 'offset' as const, offset: 1 }, limit: 1 },
          { resume: { kind: 'token' as const, token: 'forged' }, limit: 1 },
        ]) {
          await world.fetch(request).catch((e: Error & { code: string }) => errors.push(e.code));
        }
        return referenceConsumer().run(world);
      },
    };
    await execute(base, sloppy);
    expect(errors.slice(0, 4)).toEqual(['bad-request', 'bad-request', 'bad-request', 'stale-token']);
  });
});

describe('text a consumer hands the world is recorded capped, so no output grows with it', () => {
  it('a 10 MB failure reason and a 10 MB thrown message are cut at 64 kB, saying how much was cut; the failure text and the history JSON stay small', async () => {
    const huge = 'x'.repeat(10_000_000);
    let incarnation = 0;
    const consumer: Consumer = {
      name: 'verbose',
      capabilities: { delivery: 'at-least-once' },
      run: async (world) => {
        if (incarnation++ === 0) throw new Error(huge);
        await world.fail(huge);
      },
    };
    const run = await execute(base, consumer);
    const texts = run.history.steps.flatMap((s) => (s.kind === 'life' && s.event.kind === 'threw' ? [s.event.message] : s.kind === 'call' && s.call.kind === 'claim' && s.call.claim.kind === 'failed' ? [s.call.claim.reason] : []));
    // The throw, then a failure claim in each phase that follows.
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const t of texts) {
      expect(t.length).toBeLessThan(70_000);
      expect(t).toMatch(/x\.\.\. 9\.9 MB cut$/);
    }
    const failure = renderFailure({ consumer: 'verbose', execution: run, replay: '-' });
    expect(failure.length).toBeLessThan(300_000);
    expect(JSON.stringify(run.history).length).toBeLessThan(300_000);
  });
});
