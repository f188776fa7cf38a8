import { describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import { findMutant } from '../../src/selftest/mutants.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute } from '../../src/run/execute.js';
import { renderFailure } from '../../src/report/failure.js';

async function render(consumer: string, scenario: string) {
  const c = consumer === 'reference' ? referenceConsumer() : findMutant(consumer)!.consumer;
  const execution = await execute(findScenario(scenario)!.plan, c);
  return renderFailure({ consumer, execution, replay: `npx tidemark replay --consumer ${consumer} --scenario ${scenario}` });
}

/**
 * The failure text is what a tired engineer reads; snapshots keep it from getting worse
 * without anyone noticing, and the usefulness checks say what it must always contain.
 */
describe('failure text', () => {
  it('names the rule, explains it, shows the timeline with the witness, hints, and replays', async () => {
    const text = await render('max-position-fetched', 'failed-event-holds-watermark');
    expect(text).toMatch(/^FAIL {2}max-position-fetched: premature-watermark \(R6 R7 R8 R9 R10\)/);
    expect(text).toMatch(/^» +\d+ +w1#1 +commit \[watermark 43#e43/m);
    expect(text).toContain('If this fails, check R7 (failure holds the watermark)');
    expect(text.split('\n').at(-1)).toBe('Replay: npx tidemark replay --consumer max-position-fetched --scenario failed-event-holds-watermark');
    await expect(text).toMatchFileSnapshot('__snapshots__/max-position-fetched.txt');
  });

  it('renders a token saved as the watermark', async () => {
    await expect(await render('token-as-watermark', 'crash-after-page-before-next-fetch')).toMatchFileSnapshot('__snapshots__/token-as-watermark.txt');
  });

  it('renders a pass without anomalies or hints', async () => {
    const text = await render('reference', 'crash-between-effect-and-completion');
    expect(text).toMatch(/^PASS {2}reference/);
    expect(text).not.toContain('If this fails');
    expect(text).toContain('emit effect e41 -> CRASH after it took effect; the worker never learned');
  });
});
