import { describe, expect, it } from 'vitest';
import { ADVERSITY_SCENARIOS, ALL_SCENARIOS, findScenario } from '../../scenarios/named.js';
import { findMutant } from '../../src/selftest/mutants.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute } from '../../src/run/execute.js';
import { missedAdversity } from '../../src/run/exercised.js';
import { calls, committedWatermarks, effectsById, effectsByVersion, pos, samePosition } from '../support.js';

const VARIANTS = [
  referenceConsumer({ name: 'at-least-once' }),
  referenceConsumer({ name: 'exactly-once', delivery: 'exactly-once' }),
  referenceConsumer({ name: 'concurrent', concurrency: 3 }),
  referenceConsumer({ name: 'outbox', delivery: 'outbox' }),
  referenceConsumer({ name: 'cursor bookmark', bookmark: 'cursor' }),
];

/** The broken consumer each adversity scenario exists to catch. */
const CATCHES: Record<string, string> = {
  'stale-generation-cannot-advance': 'blind-watermark-write',
  'membership-flip-within-replay-window': 'trusts-numeric-hole',
  'membership-flip-without-contract': 'trusts-numeric-hole',
  'late-insert-within-replay-window': 'trusts-numeric-hole',
  'late-insert-without-contract': 'trusts-numeric-hole',
  'ordering-field-change': 'trusts-numeric-hole',
  'empty-page-with-token': 'empty-page-as-end',
  'ties-across-page-boundary': 'strict-key-resume',
  'binding-change-same-store': 'watermark-across-bindings',
};

async function run(name: string, consumer = VARIANTS[0]!) {
  const scenario = findScenario(name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  return execute(scenario.plan, consumer);
}

describe.each(VARIANTS)('the reference consumer ($name) passes every named scenario', (consumer) => {
  it.each(ALL_SCENARIOS.map((s) => [`${s.rules.join(' ')} ${s.name}`, s] as const))('%s', async (_, scenario) => {
    const { result } = await execute(scenario.plan, consumer);
    expect(result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it('and is exercised by each: untested only where its design has no call for the adversity to land on', async () => {
    const untested: string[] = [];
    for (const scenario of ALL_SCENARIOS) {
      const { history } = await execute(scenario.plan, consumer);
      if (missedAdversity(scenario.plan, history).length > 0) untested.push(scenario.name);
    }
    // A transactional consumer writes effect and completion at once: nothing lies between them.
    expect(untested).toEqual(consumer.capabilities.delivery === 'exactly-once' ? ['crash-between-effect-and-completion'] : []);
  });
});

describe('each adversity scenario catches the mistake it is about', () => {
  it.each(Object.entries(CATCHES))('%s catches %s', async (scenario, name) => {
    const mutant = findMutant(name)!;
    const { result } = await execute(findScenario(scenario)!.plan, mutant.consumer);
    const kinds = result.verdict.anomalies.map((a) => a.kind);
    expect(kinds.some((k) => [mutant.expect, ...mutant.also].includes(k)), `${scenario}: found ${kinds.join(', ') || 'nothing'}`).toBe(true);
  });

  it('every adversity scenario without a mutant of its own still exercises what it names', async () => {
    const quirky = ADVERSITY_SCENARIOS.filter((s) => !(s.name in CATCHES));
    expect(quirky.map((s) => s.name)).toEqual(['repeated-page', 'stale-token']);
    const repeated = await run('repeated-page');
    const pages = calls(repeated.history).filter((s) => s.call.kind === 'fetch' && s.result?.kind === 'page');
    const bodies = pages.map((s) => JSON.stringify(s.result));
    expect(new Set(bodies).size).toBeLessThan(bodies.length);
    const stale = await run('stale-token');
    expect(calls(stale.history).some((s) => s.outcome.kind === 'error' && s.outcome.code === 'stale-token')).toBe(true);
  });
});

describe('the adversity the seed names, executed', () => {
  it('R6 two generations: the stale worker commit is refused and shared progress never moves back', async () => {
    const { history, result } = await run('stale-generation-cannot-advance');
    const refused = calls(history).find((s) => s.call.kind === 'commit' && s.call.fence === 1 && s.outcome.kind === 'error');
    expect(refused).toMatchObject({ actor: { worker: 'w1' }, outcome: { code: 'conflict' }, applied: false });
    const w2First = committedWatermarks(history)[0]!;
    expect(w2First.seq).toBeLessThan(refused!.seq);
    expect(result.verdict.status).toBe('pass');
  });

  it('R10 mutable membership: 42 becomes eligible after 43 was handled and is not skipped', async () => {
    const { history } = await run('membership-flip-within-replay-window');
    const flipped = history.steps.find((s) => s.kind === 'mutation');
    expect(flipped).toMatchObject({ mutation: 'flip', event: { id: 'e42', version: 2, attrs: { kind: 'order' } } });
    expect(calls(history).some((s) => s.applied && s.call.kind === 'emit' && s.call.event.id === 'e42' && s.call.event.version === 2)).toBe(true);
  });

  it('R10 without a contract the consumer fails visibly instead of claiming it caught up', async () => {
    for (const name of ['membership-flip-without-contract', 'late-insert-without-contract']) {
      const { history, result } = await run(name);
      const claim = calls(history).at(-1)!;
      expect(claim.call).toMatchObject({ kind: 'claim', claim: { kind: 'failed' } });
      expect(result.verdict.status).toBe('pass');
    }
  });

  it('R2 rebinding on the same store: the refunds are all handled although the orders progressed past them', async () => {
    const { history } = await run('binding-change-same-store');
    const rebind = history.steps.findIndex((s) => s.kind === 'rebind');
    expect(rebind).toBeGreaterThan(0);
    const after = calls(history).filter((s) => s.seq > rebind && s.applied && s.call.kind === 'emit');
    expect(after.map((s) => (s.call.kind === 'emit' ? s.call.event.id : ''))).toEqual(expect.arrayContaining(['e41', 'e43']));
  });
});

describe('the seed reasoned examples, executed', () => {
  it('R7 41/42/43: the effect for 42 fails after 41 commits; the watermark stays at 41 and 42 is replayed', async () => {
    const { history, result } = await run('failed-event-holds-watermark');
    const failed = calls(history).find((s) => s.call.kind === 'emit' && s.call.event.id === 'e42' && s.outcome.kind === 'error');
    expect(failed).toBeDefined();
    const after = committedWatermarks(history).filter((w) => w.seq > failed!.seq);
    expect(samePosition(after[0]?.value, pos(41, 'e41'))).toBe(true);
    const retried = calls(history).find((s) => s.seq > failed!.seq && s.call.kind === 'emit' && s.call.event.id === 'e42' && s.applied);
    expect(retried).toBeDefined();
    expect(result.verdict.status).toBe('pass');
  });

  it('R10 eligibility boundary: the snapshot proves 42 ineligible, so the watermark reaches 43', async () => {
    const { history } = await run('snapshot-proves-hole');
    const marks = committedWatermarks(history);
    expect(samePosition(marks.at(-1)?.value, pos(43, 'e43'))).toBe(true);
    expect(effectsById(history).has('e42')).toBe(false);
  });

  it('R4 R5 crash between effect and completion: the replay duplicates the effect (at-least-once) and never omits', async () => {
    const { history, result } = await run('crash-between-effect-and-completion');
    expect(effectsById(history).get('e41')).toBe(2);
    expect(result.verdict.status).toBe('pass');
  });

  it('R5 exactly-once: a crash after the effect transaction never leads to a second effect', async () => {
    for (const s of ALL_SCENARIOS) {
      // Two workers may both emit; exactly-once is about the transactional effect, and the
      // world records one per event version only if the guard held.
      const { history } = await execute(s.plan, VARIANTS[1]!);
      for (const [id, n] of effectsByVersion(history)) expect({ scenario: s.name, id, n }).toEqual({ scenario: s.name, id, n: 1 });
    }
  });

  it('R3 the watermark never decreases, in every scenario that keeps one binding', async () => {
    for (const s of ALL_SCENARIOS.filter((x) => x.plan.rebind === null)) {
      const { history } = await execute(s.plan, VARIANTS[0]!);
      const marks = committedWatermarks(history).map((w) => w.value as { key: number[] });
      for (let i = 1; i < marks.length; i++) expect(marks[i]!.key[0]!).toBeGreaterThanOrEqual(marks[i - 1]!.key[0]!);
    }
  });
});
