import { describe, expect, it } from 'vitest';
import { findScenario, NAMED_SCENARIOS } from '../../scenarios/named.js';
import { referenceConsumer } from '../../src/consumers/reference.js';
import { execute } from '../../src/execute.js';
import { calls, committedWatermarks, effectsById, pos, samePosition } from '../support.js';

const VARIANTS = [
  referenceConsumer({ name: 'at-least-once' }),
  referenceConsumer({ name: 'exactly-once', delivery: 'exactly-once' }),
  referenceConsumer({ name: 'concurrent', concurrency: 3 }),
];

async function run(name: string, consumer = VARIANTS[0]!) {
  const scenario = findScenario(name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  return execute(scenario.plan, consumer);
}

describe.each(VARIANTS)('the reference consumer ($name) passes every named scenario', (consumer) => {
  it.each(NAMED_SCENARIOS.map((s) => [`${s.rules.join(' ')} ${s.name}`, s] as const))('%s', async (_, scenario) => {
    const { result } = await execute(scenario.plan, consumer);
    expect(result.verdict).toEqual({ status: 'pass', anomalies: [] });
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
    for (const s of NAMED_SCENARIOS) {
      const { history } = await execute(s.plan, VARIANTS[1]!);
      for (const [id, n] of effectsById(history)) expect({ scenario: s.name, id, n }).toEqual({ scenario: s.name, id, n: 1 });
    }
  });

  it('R3 the watermark never decreases across the crash scenarios', async () => {
    for (const s of NAMED_SCENARIOS) {
      const { history } = await execute(s.plan, VARIANTS[0]!);
      const marks = committedWatermarks(history).map((w) => w.value as { key: number[] });
      for (let i = 1; i < marks.length; i++) expect(marks[i]!.key[0]!).toBeGreaterThanOrEqual(marks[i - 1]!.key[0]!);
    }
  });
});
