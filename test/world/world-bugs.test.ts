/**
 * World sanity is the harness's problem: when the world records something its own ground
 * truth contradicts, the verdict is a harness error (exit 4), never an anomaly blamed on the
 * consumer. Each kind of world bug is injected through the test-only seam in bugs.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli.js';
import { injectWorldBug, type WorldBug } from '../../src/world/bugs.js';
import { cli } from '../support.js';

afterEach(() => injectWorldBug(null));

describe('a world that contradicts its own ground truth', () => {
  const cases: readonly { readonly bug: WorldBug; readonly scenario: string; readonly says: RegExp }[] = [
    { bug: 'page', scenario: 'failed-event-holds-watermark', says: /served e41 as .*but the source holds/ },
    { bug: 'applied', scenario: 'failed-event-holds-watermark', says: /must have succeeded, but the world recorded it as not applied/ },
    { bug: 'lease', scenario: 'stale-generation-cannot-advance', says: /granted generation 2, but the replay grants 1/ },
    { bug: 'contract', scenario: 'late-insert-within-replay-window', says: /breaks its replay-window contract/ },
  ];

  it.each(cases)('$bug: exit 4, a harness error naming the step, no anomaly of the consumer', async ({ bug, scenario, says }) => {
    const before = await cli('check', '--consumer', 'reference', '--scenario', scenario);
    expect(before.code).toBe(EXIT.pass);
    injectWorldBug(bug);
    const r = await cli('check', '--consumer', 'reference', '--scenario', scenario);
    expect(r.code).toBe(EXIT.error);
    expect(r.code).toBe(4);
    expect(r.out).toContain('HARNESS ERROR  reference: the world contradicted its own ground truth');
    expect(r.out).toMatch(says);
    expect(r.out).not.toMatch(/^\s+FAIL /m);
    expect(r.out).toContain('verdict: error');
  });

  it('a buggy world is a harness error in generated worlds too, and outranks the consumer failure it may cause', async () => {
    injectWorldBug('applied');
    const r = await cli('check', '--consumer', 'skips-failed-event', '--runs', '20', '--seed', '1', '--searches', '1');
    expect(r.code).toBe(EXIT.error);
    expect(r.out).toContain('verdict: error');
  });
});
