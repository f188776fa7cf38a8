import { describe, expect, it } from 'vitest';
import type { DurableState, Page, Resume } from '../../model/history.js';
import type { Position } from '../../model/order.js';
import { ev, findScenario, plan } from '../../scenarios/named.js';
import type { BlackboxConsumer, Consumer } from '../../src/adapter/consumer.js';
import { execute } from '../../src/run/execute.js';
import { Incarnation, isWorldError } from '../../src/selftest/reference.js';

/**
 * Step 9 of the seed procedure (R9): on a stale page, restart from the durable replay anchor
 * or fail visibly. A visible failure there is no liveness failure, even on a source that
 * proves its holes; one on a token the source never issued is.
 */
class FailsOnStale extends Incarnation {
  protected override async fetch(resume: Resume): Promise<Page> {
    try {
      return await super.fetch(resume);
    } catch (error) {
      if (isWorldError(error) && error.code === 'stale-token') await this.world.fail('the page token is stale: nothing proves where to go on from (R9)');
      throw error;
    }
  }
}

/** Asks for a page by a token no page ever carried, is told it is stale, and gives up. */
class MadeUpToken extends Incarnation {
  private asked = false;
  protected override async fetch(resume: Resume): Promise<Page> {
    if (!this.asked) {
      this.asked = true;
      try {
        return await super.fetch({ kind: 'token', token: 'made-up' });
      } catch (error) {
        if (isWorldError(error) && error.code === 'stale-token') await this.world.fail('the page token is stale (R9)');
        throw error;
      }
    }
    return super.fetch(resume);
  }
}

/** On a stale page, asks once more by a token no page ever carried, and gives up on that. */
class MadeUpAfterStale extends Incarnation {
  protected override async fetch(resume: Resume): Promise<Page> {
    try {
      return await super.fetch(resume);
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'stale-token' && resume.kind === 'token' && resume.token !== 'made-up')) throw error;
      return this.fetch({ kind: 'token', token: 'made-up' }).catch(async (again: unknown) => {
        if (isWorldError(again) && again.code === 'stale-token') await this.world.fail('the page token is stale (R9)');
        throw again;
      });
    }
  }
}

const consumer = (name: string, make: (world: ConstructorParameters<typeof Incarnation>[0]) => Incarnation): Consumer => ({ name, capabilities: { delivery: 'at-least-once' }, run: (world) => make(world).run() });

describe('R9: a stale page is a reason to fail visibly', () => {
  const plan = findScenario('stale-token')!.plan;

  it('a consumer that fails visibly on a stale page passes the stale-token scenario, with its drain ending in that failure', async () => {
    const run = await execute(plan, consumer('fails-on-stale', (w) => new FailsOnStale(w)));
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    const last = run.history.steps.at(-1)!;
    expect(last.kind === 'call' && last.call.kind === 'claim' && last.call.claim.kind).toBe('failed');
  });

  it('a stale page answered before a made-up token is no reason for giving up on the made-up one', async () => {
    const run = await execute(plan, consumer('made-up-after-stale', (w) => new MadeUpAfterStale(w)));
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('one that gives up on a token the source never issued is a liveness failure', async () => {
    const run = await execute(plan, consumer('made-up-token', (w) => new MadeUpToken(w)));
    expect(run.result.verdict.status).toBe('fail');
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });
});

/** Restarts from the start on a stale page, in the same incarnation; fails visibly at a refused effect (declaring no such refusals). */
class RestartsThenStopsAtPoison extends Incarnation {
  protected override async fetch(resume: Resume): Promise<Page> {
    try {
      return await super.fetch(resume);
    } catch (error) {
      if (isWorldError(error) && error.code === 'stale-token') return super.fetch({ kind: 'start' });
      throw error;
    }
  }
  protected override async apply(e: Parameters<Incarnation['apply']>[0]): Promise<void> {
    try {
      await this.effect(e);
    } catch (error) {
      if (isWorldError(error) && error.code === 'rejected') await this.world.fail(`the effect for ${e.id} is refused`);
      throw error;
    }
  }
}

/**
 * On a stale page keeps the dead token aside and starts again from the top; after the next
 * page, sends the dead token again and gives up on it. It keeps no replay anchor of its own;
 * `asAnchor`: it writes the dead token as its anchor just before sending it again.
 */
class SendsDeadTokenAgain extends Incarnation {
  private dead: string | null = null;
  private used = false;
  private pages = 0;
  constructor(
    world: ConstructorParameters<typeof Incarnation>[0],
    private readonly asAnchor = false,
  ) {
    super(world);
  }
  protected override advance(to: Position, _token: string | null): Promise<void> {
    return super.advance(to, null);
  }
  protected override async fetch(resume: Resume): Promise<Page> {
    if (this.dead !== null && !this.used && this.pages >= 1) {
      this.used = true;
      if (this.asAnchor) {
        const state = await this.world.load();
        await this.world.commit([{ op: 'anchor', binding: this.world.fingerprint, token: this.dead, watermark: state.watermark?.value ?? null }]);
      }
      try {
        return await super.fetch({ kind: 'token', token: this.dead });
      } catch (error) {
        if (isWorldError(error) && error.code === 'stale-token') await this.world.fail('the page token is stale (R9)');
        throw error;
      }
    }
    try {
      const page = await super.fetch(resume);
      if (this.dead !== null) this.pages++;
      return page;
    } catch (error) {
      if (!(isWorldError(error) && error.code === 'stale-token' && resume.kind === 'token')) throw error;
      this.dead ??= resume.token;
      return super.fetch({ kind: 'start' });
    }
  }
}

/**
 * Five events in pages of two, an adversity phase over before a page is read, and a stale
 * page at the drain's second request (by e42's token).
 */
const STALE_SECOND_PAGE = plan([ev(41), ev(42), ev(43), ev(44), ev(45)], [{ call: 'fetch', nth: 1, kind: 'stale' }], {
  source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } },
  budget: { adversity: 1, drain: 200 },
});

describe('R9: the stale page must be the reason', () => {
  it('a token that expired before, kept aside and sent again, is no reason: only a stale page of its own request, or the durable anchor, is', async () => {
    const run = await execute(STALE_SECOND_PAGE, consumer('sends-dead-token-again', (w) => new SendsDeadTokenAgain(w)));
    const stale = run.history.steps.filter((s) => s.phase === 'drain' && s.kind === 'call' && s.outcome.kind === 'error' && s.outcome.code === 'stale-token');
    // Two stale answers: the stale page (labelled), then the dead token sent again (not).
    expect(stale.map((s) => (s.kind === 'call' ? (s.fault ?? null) : null))).toEqual(['stale', null]);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('a stale page recovered from excuses no later visible failure for another reason', async () => {
    // Pages of two; the adversity phase is over before a page is read. In the drain the second
    // request (by e42's token) meets the stale page, the consumer starts again from the top,
    // reads on, and gives up at the poison event e45.
    const world = { ...STALE_SECOND_PAGE, poison: ['e45'] };
    const run = await execute(world, consumer('restarts-then-stops-at-poison', (w) => new RestartsThenStopsAtPoison(w)));
    const drain = run.history.steps.filter((s) => s.phase === 'drain' && s.kind === 'call');
    const staleAt = drain.findIndex((s) => s.kind === 'call' && s.outcome.kind === 'error' && s.outcome.code === 'stale-token');
    // The world is the one described: a stale page, then pages served, then the failure.
    expect(staleAt).toBeGreaterThanOrEqual(0);
    expect(drain.slice(staleAt + 1).some((s) => s.kind === 'call' && s.call.kind === 'fetch' && s.outcome.kind === 'ok')).toBe(true);
    const last = drain.at(-1)!;
    expect(last.kind === 'call' && last.call.kind === 'claim' && last.call.claim.kind).toBe('failed');
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });
});

type Db = { progress: { binding: string; position: Position; anchor: string | null } | null; done: Set<string>; effects: { event: { id: string; version: number }; payload: string }[] };

/**
 * Step 9 in a blackbox consumer (its own store): each incarnation restarts from its durable
 * replay anchor, and fails visibly when that anchor is stale.
 */
const anchorOrFail: BlackboxConsumer<Db> = {
  name: 'anchor-or-fail-blackbox',
  kind: 'blackbox',
  capabilities: { delivery: 'exactly-once' },
  open: () => ({ progress: null, done: new Set(), effects: [] }),
  inspect: (db) => ({ watermark: db.progress?.position ?? null, effects: [...db.effects] }),
  run: async (world, db) => {
    const mine = db.progress?.binding === world.fingerprint ? db.progress : null;
    let resume: Resume = mine?.anchor ? { kind: 'token', token: mine.anchor } : { kind: 'start' };
    let first = resume.kind === 'token';
    for (;;) {
      let page: Page;
      try {
        page = await world.fetch({ resume, limit: world.source.pageSize });
      } catch (error) {
        if (isWorldError(error) && error.code === 'stale-token' && first) return world.fail('the durable replay anchor is stale (R9)');
        throw error;
      }
      first = false;
      for (const e of page.events) {
        if (db.done.has(`${e.id}@${e.version}`)) continue;
        db.effects.push({ event: { id: e.id, version: e.version }, payload: e.payload });
        db.done.add(`${e.id}@${e.version}`);
      }
      const last = page.events.at(-1);
      if (last) db.progress = { binding: world.fingerprint, position: { key: [...last.key], id: last.id }, anchor: page.next };
      if (page.next === null) return world.caughtUp();
      resume = { kind: 'token', token: page.next };
    }
  },
};

/** Restarts from its replay anchor on a stale page (a new incarnation); gives up on a stale page met after restarting from the anchor. */
class FailsAfterAnchor extends Incarnation {
  private fromAnchor = false;
  protected override resumeFrom(state: DurableState): Resume {
    const resume = super.resumeFrom(state);
    this.fromAnchor = resume.kind === 'token';
    return resume;
  }
  protected override async fetch(resume: Resume): Promise<Page> {
    try {
      return await super.fetch(resume);
    } catch (error) {
      if (isWorldError(error) && error.code === 'stale-token' && this.fromAnchor) await this.world.fail('stale again after restarting from the replay anchor (R9)');
      throw error;
    }
  }
}

describe('R9: where the stale token came from', () => {
  it('a token written as the replay anchor after it expired is no reason', async () => {
    const run = await execute(STALE_SECOND_PAGE, consumer('stores-dead-token-as-anchor', (w) => new SendsDeadTokenAgain(w, true)));
    const anchors = run.history.steps.filter((s) => s.kind === 'call' && s.call.kind === 'commit' && s.call.ops.some((o) => o.op === 'anchor'));
    expect(anchors.length).toBeGreaterThan(0);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('a blackbox consumer, whose anchor tidemark cannot see, may fail visibly when the first request of an incarnation comes back stale', async () => {
    const run = await execute(STALE_SECOND_PAGE, anchorOrFail);
    const last = run.history.steps.at(-1)!;
    expect(last.kind === 'call' && last.call.kind === 'claim' && last.call.claim.kind).toBe('failed');
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it("the token of the last page served is a reason: an iterator chain serves an expired one again after an empty batch", async () => {
    // The anchor's batch comes back empty, with a token the stale page then expires; restarted
    // from the anchor, the same empty batch serves that expired token again, and the consumer gives up on it.
    const iterator = plan([ev(41), ev(42), ev(43), ev(44), ev(45)], [{ call: 'fetch', nth: 1, kind: 'empty' }, { call: 'fetch', nth: 2, kind: 'stale' }], {
      source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' }, tokens: 'iterator' },
      budget: { adversity: 1, drain: 200 },
    });
    const run = await execute(iterator, consumer('gives-up-on-a-stale-continuation', (w) => new FailsAfterAnchor(w)));
    // The last request re-sent the token the empty batch had just served, expired before: no stale page fired there.
    const requests = run.history.steps.filter((s) => s.kind === 'call' && s.call.kind === 'fetch');
    const lastRequest = requests.at(-1)!;
    expect(lastRequest.kind === 'call' && lastRequest.outcome.kind === 'error' && lastRequest.outcome.code).toBe('stale-token');
    expect(lastRequest.kind === 'call' && lastRequest.fault).toBeUndefined();
    const last = run.history.steps.at(-1)!;
    expect(last.kind === 'call' && last.call.kind === 'claim' && last.call.claim.kind).toBe('failed');
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });
});
