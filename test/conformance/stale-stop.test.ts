import { describe, expect, it } from 'vitest';
import type { Page, Resume } from '../../model/history.js';
import { findScenario } from '../../scenarios/named.js';
import type { Consumer } from '../../src/adapter/consumer.js';
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

const consumer = (name: string, make: (world: ConstructorParameters<typeof Incarnation>[0]) => Incarnation): Consumer => ({ name, capabilities: { delivery: 'at-least-once' }, run: (world) => make(world).run() });

describe('R9: a stale page is a reason to fail visibly', () => {
  const plan = findScenario('stale-token')!.plan;

  it('a consumer that fails visibly on a stale page passes the stale-token scenario, with its drain ending in that failure', async () => {
    const run = await execute(plan, consumer('fails-on-stale', (w) => new FailsOnStale(w)));
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    const last = run.history.steps.at(-1)!;
    expect(last.kind === 'call' && last.call.kind === 'claim' && last.call.claim.kind).toBe('failed');
  });

  it('one that gives up on a token the source never issued is a liveness failure', async () => {
    const run = await execute(plan, consumer('made-up-token', (w) => new MadeUpToken(w)));
    expect(run.result.verdict.status).toBe('fail');
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });
});
