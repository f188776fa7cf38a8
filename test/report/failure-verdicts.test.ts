/**
 * The failure text for every verdict, not only a failing one: a run that could not be
 * judged, a world that contradicted itself, a pass shown on request; and the plan described
 * with every kind of adversity it carries.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import { renderFailure, describePlan } from '../../src/report/failure.js';
import { execute } from '../../src/run/execute.js';
import { findMutant } from '../../src/selftest/mutants.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { injectWorldBug } from '../../src/world/bugs.js';

afterEach(() => injectWorldBug(null));

describe('the failure text of each verdict', () => {
  it('PASS: the consumer, the world and the timeline, no hints', async () => {
    const execution = await execute(findScenario('repeated-page')!.plan, referenceConsumer({ name: 'ref' }));
    const text = renderFailure({ consumer: 'ref', execution, replay: 'npx tidemark replay --consumer reference --scenario repeated-page' });
    expect(text.split('\n')[0]).toBe('PASS  ref');
    expect(text).not.toContain('If this fails, check');
    expect(text).toMatch(/Replay: npx tidemark replay --consumer reference --scenario repeated-page$/);
  });

  it('UNKNOWN: why the run could not be judged', async () => {
    const hangs = { name: 'hangs', capabilities: { delivery: 'at-least-once' as const }, run: async () => new Promise<void>(() => {}) };
    const execution = await execute(findScenario('repeated-page')!.plan, hangs);
    expect(execution.result.verdict.status).toBe('unknown');
    expect(renderFailure({ consumer: 'hangs', execution, replay: 'x' }).split('\n')[0]).toMatch(/^UNKNOWN {2}hangs: the run could not be judged: incarnation w1#1 stopped calling the world/);
  });

  it('HARNESS ERROR: the problems, at most three, each with its step marked in the timeline', async () => {
    injectWorldBug('page');
    const execution = await execute(findScenario('repeated-page')!.plan, referenceConsumer({ name: 'ref' }));
    const { verdict } = execution.result;
    expect(verdict.status).toBe('error');
    const text = renderFailure({ consumer: 'ref', execution, replay: 'x' });
    expect(text).toMatch(/^HARNESS ERROR {2}ref: the world contradicted its own ground truth/);
    const problems = verdict.status === 'error' ? verdict.problems : [];
    expect(problems.length).toBeGreaterThan(3);
    expect(text).toContain(`(+${problems.length - 3} more)`);
    expect(text).toMatch(new RegExp(`» +${problems[0]!.seq} `));
  });

  it('FAIL with many anomalies: three told in full, the rest counted', async () => {
    const execution = await execute(findScenario('stale-token')!.plan, findMutant('token-as-watermark')!.consumer);
    const anomalies = execution.result.verdict.anomalies;
    const text = renderFailure({ consumer: 'm', execution, replay: 'x' });
    if (anomalies.length > 3) expect(text).toContain(`(+${anomalies.length - 3} more anomalies)`);
    expect(text).toContain('If this fails, check R8');
  });
});

describe('the world described', () => {
  it('names every kind of adversity the plan carries: faults tied to events, changes, workers, a rebind', () => {
    const base = findScenario('binding-change-same-store')!.plan;
    const lines = describePlan({
      ...base,
      faults: [{ call: 'commit', nth: 0, kind: 'crash-after', after: 'e42' }, { call: 'fetch', nth: 1, kind: 'empty', after: 'e41' }],
      mutations: [{ before: { call: 'emit', nth: 2 }, kind: 'insert', target: 0, back: 1 }],
      workers: 2,
      leaseTtlSteps: 4,
    });
    expect(lines).toContain('faults (2): crash-after at commit #0 about e42, empty at fetch #1 after e41');
    expect(lines).toContain('mutations (1): insert before emit #2');
    expect(lines).toContain('workers: 2, lease time to live 4 steps');
    expect(lines.some((l) => l.startsWith('rebind before claim #0 to: '))).toBe(true);
    expect(lines.some((l) => l.startsWith('source: insertion-stable, page size 3, resume by token|after'))).toBe(true);
  });
});
