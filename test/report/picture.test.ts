import { describe, expect, it } from 'vitest';
import type { Consumer } from '../../src/adapter/consumer.js';
import { check } from '../../model/checker.js';
import type { SourceEvent } from '../../model/event.js';
import { HISTORY_VERSION, type Actor, type History, type Step } from '../../model/history.js';
import { ALL_SCENARIOS, findScenario } from '../../scenarios/named.js';
import { MUTANTS, findMutant } from '../../src/selftest/mutants.js';
import { referenceConsumer } from '../../src/selftest/reference.js';
import { execute, hashHistory, type Execution } from '../../src/run/execute.js';
import { renderPicture } from '../../src/report/picture.js';

function consumerNamed(name: string): Consumer {
  return name === 'reference' ? referenceConsumer() : findMutant(name)!.consumer;
}

const replayOf = (consumer: string, scenario: string): string => `npx tidemark replay --consumer ${consumer} --scenario ${scenario}`;

async function run(consumer: string, scenario: string): Promise<{ execution: Execution; html: string }> {
  const execution = await execute(findScenario(scenario)!.plan, consumerNamed(consumer));
  return { execution, html: renderPicture(execution, { consumer, replay: replayOf(consumer, scenario) }) };
}

/** Open tags without a close, or closes without an open: empty when the markup nests. */
function unbalanced(html: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w:-]*)\b[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m as unknown as [string, string, string, string];
    if (selfClosing === '/') continue;
    if (closing === '') {
      stack.push(name);
      continue;
    }
    const open = stack.pop();
    if (open !== name) problems.push(`</${name}> closes <${open ?? 'nothing'}>`);
  }
  return [...problems, ...stack.map((name) => `<${name}> never closed`)];
}

const count = (text: string, part: string): number => text.split(part).length - 1;

/** The one line that draws the mark for step `seq` in a lane. */
function markLine(html: string, seq: number): string {
  const line = html.split('\n').find((l) => l.startsWith('<g class="call') && l.includes(` data-seq="${seq}"`));
  expect(line, `no call mark for step ${seq}`).toBeDefined();
  return line as string;
}

function incarnations(history: History): string[] {
  const seen: string[] = [];
  for (const s of history.steps) {
    if (s.kind !== 'life' && s.kind !== 'call') continue;
    const name = `${s.actor.worker}#${s.actor.incarnation}`;
    if (!seen.includes(name)) seen.push(name);
  }
  return seen;
}

describe('the picture of one executed world', () => {
  it('is one HTML document holding one SVG, with markup that nests', async () => {
    const { html } = await run('max-position-fetched', 'failed-event-holds-watermark');
    expect(html.startsWith('<!doctype html>\n<html')).toBe(true);
    expect(html.trimEnd().endsWith('</html>')).toBe(true);
    expect(count(html, '<svg ')).toBe(1);
    expect(count(html, '</svg>')).toBe(1);
    expect(html.indexOf('<svg ')).toBeLessThan(html.indexOf('</svg>'));
    expect(unbalanced(html)).toEqual([]);
    // Self-contained: no scripts, no external assets, generic font families only.
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain('font-family="monospace"');
  });

  it('shows the headline, the first anomaly with its rules and explanation, and the replay command', async () => {
    const { execution, html } = await run('max-position-fetched', 'failed-event-holds-watermark');
    const first = execution.result.verdict.anomalies[0]!;
    expect(first.kind).toBe('premature-watermark');
    expect(html).toMatch(/<h1[^>]*>FAIL max-position-fetched: premature-watermark \(R6 R7 R8 R9 R10\)<\/h1>/);
    expect(html).toContain('a watermark was committed past an eligible event that had no durable outcome');
    expect(html).toContain(`<li>premature-watermark: ${first.explanation}</li>`);
    expect(html).toMatch(/<pre[^>]*>Replay: npx tidemark replay --consumer max-position-fetched --scenario failed-event-holds-watermark<\/pre>/);
    // The headline comes before the picture.
    expect(html.indexOf('<h1')).toBeLessThan(html.indexOf('<svg '));
    expect(html.indexOf('Replay: ')).toBeLessThan(html.indexOf('<svg '));
  });

  it('draws one labelled lane per worker incarnation, in order of first appearance, and one for the source', async () => {
    for (const scenario of ['failed-event-holds-watermark', 'stale-generation-cannot-advance', 'binding-change-same-store']) {
      const { execution, html } = await run('reference', scenario);
      const names = incarnations(execution.history);
      expect(names.length).toBeGreaterThan(1);
      const lanes = [...html.matchAll(/<g class="lane" data-lane="([^"]+)">/g)].map((m) => m[1]);
      expect(lanes).toEqual(['source', ...names]);
      for (const name of names) expect(html).toMatch(new RegExp(`<text class="lane-label"[^>]*>${name}</text>`));
    }
  });

  it('marks crashes with a red cross at their step, before and after the call', async () => {
    for (const [scenario, kind] of [
      ['crash-between-effect-and-completion', 'crash-after'],
      ['crash-before-first-effect', 'crash-before'],
      ['crash-after-page-before-next-fetch', 'crash-after'],
    ] as const) {
      const { execution, html } = await run('reference', scenario);
      const crashes = execution.history.steps.filter((s) => s.kind === 'call' && s.outcome.kind === kind);
      expect(crashes.length, scenario).toBeGreaterThan(0);
      for (const step of crashes) expect(markLine(html, step.seq)).toContain(`<g class="crash" data-outcome="${kind}">`);
      expect(count(html, '<g class="crash"')).toBe(execution.history.steps.filter((s) => s.kind === 'call' && s.outcome.kind.startsWith('crash')).length);
    }
  });

  it('marks errors, page quirks and fetched pages with what they served', async () => {
    const { execution, html } = await run('max-position-fetched', 'failed-event-holds-watermark');
    const failed = execution.history.steps.find((s) => s.kind === 'call' && s.call.kind === 'emit' && s.outcome.kind === 'error')!;
    expect(markLine(html, failed.seq)).toContain('<g class="fault-error">');
    expect(html).toContain('>[e41 e42 e43] end</text>');
    const quirky = await run('reference', 'empty-page-with-token');
    const quirk = quirky.execution.history.steps.find((s) => s.kind === 'call' && s.fault === 'empty')!;
    expect(markLine(quirky.html, quirk.seq)).toContain('data-fault="empty"');
    expect(quirky.html).toContain('>quirk: empty</text>');
  });

  it('shades the premature watermark red for the mutant and nowhere for the reference', async () => {
    const mutant = await run('max-position-fetched', 'failed-event-holds-watermark');
    const reference = await run('reference', 'failed-event-holds-watermark');
    expect(mutant.html).toMatch(/<rect class="premature" data-shade="premature" /);
    expect(reference.execution.result.verdict.status).toBe('pass');
    expect(reference.html).not.toContain('data-shade=');
    // The shading starts at the commit the checker names as the witness: the prefix is
    // worked out independently, and the two agree on where the watermark went too far.
    const witness = mutant.execution.result.verdict.anomalies[0]!.steps[0]!;
    const shadeX = /<rect class="premature" data-shade="premature" x="([\d.]+)"/.exec(mutant.html)![1];
    const witnessX = new RegExp(`<g class="witness" data-witness="${witness}">.*?<line x1="([\\d.]+)"`).exec(mutant.html)![1];
    expect(shadeX).toBe(witnessX);
  });

  it('shades red exactly where the checker finds a premature watermark, over every named scenario', async () => {
    const consumers: [string, Consumer][] = [['reference', referenceConsumer()], ...MUTANTS.map((m): [string, Consumer] => [m.name, m.consumer])];
    const disagreements: string[] = [];
    for (const [name, consumer] of consumers) {
      for (const scenario of ALL_SCENARIOS) {
        if (name === 'token-as-watermark' && scenario.name === 'stale-token') continue; // thousands of steps; covered by the long-history test
        const execution = await execute(scenario.plan, consumer);
        const html = renderPicture(execution, { consumer: name, replay: 'x' });
        const flagged = execution.result.verdict.anomalies.some((a) => a.kind === 'premature-watermark');
        if (html.includes('data-shade="premature"') !== flagged) disagreements.push(`${name} on ${scenario.name}`);
        if (name === 'reference') expect(html, scenario.name).not.toContain('data-shade=');
      }
    }
    expect(disagreements).toEqual([]);
  });

  it('shades amber where a late insert put an unhandled event behind a sound watermark', async () => {
    const { html } = await run('trusts-numeric-hole', 'late-insert-within-replay-window');
    expect(html).toContain('data-shade="behind"');
    expect(html).toContain('data-shade="premature"');
    expect(html).toMatch(/<g class="mutation" data-seq="\d+" data-mutation="insert">/);
    expect(html).toContain('>insert m0 at 46</text>');
  });

  it('turns the amber gap still open at the end of a finished run red, from the step the checker names', async () => {
    // The checker's end-of-run rule: narrow-replay-window passed 46 before m0 was inserted there.
    const { execution, html } = await run('narrow-replay-window', 'late-insert-within-replay-window');
    const late = execution.result.verdict.anomalies.find((a) => a.kind === 'premature-watermark')!;
    expect(late.steps).toHaveLength(2);
    const insertX = new RegExp(`<g class="witness" data-witness="${late.steps[1]}">.*?<line x1="([\\d.]+)"`).exec(html)![1];
    expect(/<rect class="premature" data-shade="premature" x="([\d.]+)"/.exec(html)![1]).toBe(insertX);
    expect(html).not.toContain('data-shade="behind"');

    // The same hole by hand: once the run finished (a visible failure) and once it hung,
    // which the checker does not judge, so that gap stays amber.
    const event = (id: string, key: number): SourceEvent => ({ id, version: 1, key: [key], attrs: { kind: 'order' }, payload: `${id}@1` });
    const [a, b, c] = [event('a', 1), event('b', 2), event('c', 3)];
    const w1: Actor = { worker: 'w1', incarnation: 1 };
    const w1d: Actor = { worker: 'w1', incarnation: 2 };
    const ok = { kind: 'ok' } as const;
    const pictureOf = (end: Step[]): { execution: Execution; html: string } => {
      const steps: Step[] = [
        { kind: 'life', seq: 0, phase: 'adversity', actor: w1, event: { kind: 'start' } },
        { kind: 'call', seq: 1, phase: 'adversity', actor: w1, call: { kind: 'fetch', request: { resume: { kind: 'start' }, limit: 3 } }, outcome: ok, applied: true, result: { kind: 'page', page: { events: [a, c], next: null, head: 3 } } },
        { kind: 'call', seq: 2, phase: 'adversity', actor: w1, call: { kind: 'commit', ops: [{ op: 'effect', event: a, payload: a.payload }, { op: 'effect', event: c, payload: c.payload }, { op: 'watermark', binding: 'orders', value: { key: [3], id: 'c' } }], fence: null }, outcome: ok, applied: true },
        { kind: 'mutation', seq: 3, phase: 'adversity', event: b, mutation: 'insert' },
        // The budget ends the adversity phase; the drain is w1's next incarnation, as in a world.
        { kind: 'life', seq: 4, phase: 'adversity', actor: w1, event: { kind: 'budget' } },
        { kind: 'life', seq: 5, phase: 'drain', actor: w1d, event: { kind: 'start' } },
        ...end,
      ];
      const history: History = {
        header: { initial: [a, c], binding: { scope: 'orders', filter: { kind: 'all' }, ordering: ['ts'], upTo: null }, contract: { kind: 'none' }, delivery: 'at-least-once', poison: [], pageSize: 3, leaseTtlSteps: 10, version: HISTORY_VERSION, resumes: [], faults: [], mutations: [{ before: { call: 'commit', nth: 1 }, kind: 'insert', target: 0, back: 3 }], rebind: null, workers: 1, consumer: 'whitebox' },
        steps,
      };
      const execution: Execution = { plan: findScenario('failed-event-holds-watermark')!.plan, history, hash: hashHistory(history), result: check(history) };
      return { execution, html: renderPicture(execution, { consumer: 'hand-made', replay: 'none' }) };
    };
    const failed = pictureOf([
      { kind: 'call', seq: 6, phase: 'drain', actor: w1d, call: { kind: 'claim', claim: { kind: 'failed', reason: 'cannot prove the hole' } }, outcome: ok, applied: true },
    ]);
    expect(failed.execution.result.verdict.anomalies.find((x) => x.kind === 'premature-watermark')?.steps).toEqual([2, 3]);
    const failedInsertX = /<g class="witness" data-witness="3">.*?<line x1="([\d.]+)"/.exec(failed.html)![1];
    expect(/<rect class="premature" data-shade="premature" x="([\d.]+)"/.exec(failed.html)![1]).toBe(failedInsertX);
    expect(failed.html).toContain('it passed a hole where the source later put an eligible event');
    expect(failed.html).not.toContain('data-shade="behind"');
    expect(failed.html).toContain('data-life="budget"');
    const hung = pictureOf([{ kind: 'life', seq: 6, phase: 'drain', actor: w1d, event: { kind: 'hung' } }]);
    expect(hung.execution.result.verdict.status).toBe('unknown');
    expect(hung.html).toContain('data-shade="behind"');
    expect(hung.html).not.toContain('data-shade="premature"');
  });

  it('highlights every witness step of every anomaly, and none for a pass', async () => {
    const { execution, html } = await run('max-position-fetched', 'failed-event-holds-watermark');
    const steps = [...new Set(execution.result.verdict.anomalies.flatMap((a) => a.steps))].sort((a, b) => a - b);
    expect(steps).toEqual([7, 11]);
    const drawn = [...html.matchAll(/<g class="witness" data-witness="(\d+)">/g)].map((m) => Number(m[1]));
    expect(drawn).toEqual(steps);
    // The premature commit is the watermark commit at the witness step.
    expect(markLine(html, 7)).toContain('data-call="commit"');
    expect(html).toContain('>wm 43#e43</text>');
    const pass = await run('reference', 'crash-between-effect-and-completion');
    expect(pass.html).not.toContain('class="witness"');
    expect(pass.html).toMatch(/<h1[^>]*>PASS reference<\/h1>/);
  });

  it('breaks the watermark line where the committed value is not a position', async () => {
    const { html } = await run('token-as-watermark', 'crash-after-page-before-next-fetch');
    expect(html).toMatch(/<g class="not-position" data-seq="8">/);
    expect(html).toContain('not a position: &quot;');
    expect(html).toContain('class="watermark-break"');
  });

  it('draws a rebind through everything, and the carried-over watermark dashed', async () => {
    const { execution, html } = await run('watermark-across-bindings', 'binding-change-same-store');
    const rebind = execution.history.steps.find((s) => s.kind === 'rebind')!;
    expect(html).toContain(`<line class="rebind" data-seq="${rebind.seq}"`);
    expect(html).toContain('class="watermark-line foreign"');
    expect(html).toContain('>rebind: kind = refund, ordered by ts+id</text>');
  });

  it('escapes ids, reasons and names for HTML and XML', async () => {
    const execution = await execute(findScenario('failed-event-holds-watermark')!.plan, findMutant('max-position-fetched')!.consumer);
    const html = renderPicture(execution, { consumer: 'evil <&> "name"', replay: "npx tidemark replay --consumer 'evil <&>'" });
    expect(html).toContain('FAIL evil &lt;&amp;&gt; &quot;name&quot;: premature-watermark');
    expect(html).toContain('Replay: npx tidemark replay --consumer &#39;evil &lt;&amp;&gt;&#39;</pre>');
    expect(html).not.toContain('<&>');
    expect(unbalanced(html)).toEqual([]);
  });

  it('renders a long history wider than the viewport, at least 6 px a step', async () => {
    const { execution, html } = await run('token-as-watermark', 'stale-token');
    const steps = execution.history.steps.length;
    expect(steps).toBeGreaterThan(1000);
    const width = Number(/<svg [^>]*width="(\d+)"/.exec(html)![1]);
    expect(width).toBeGreaterThanOrEqual(steps * 6);
    expect(unbalanced(html)).toEqual([]);
    const short = await run('reference', 'failed-event-holds-watermark');
    expect(Number(/<svg [^>]*width="(\d+)"/.exec(short.html)![1])).toBeLessThanOrEqual(1400);
  });

  it('draws the rarer steps: quirks, indefinite calls, outbox and dead letters, moves, malformed calls, and how lives end', () => {
    const event = (id: string, key: number, version = 1): SourceEvent => ({ id, version, key: [key], attrs: { kind: 'order' }, payload: `${id}@${version}` });
    const [a, b, c] = [event('a', 1), event('b', 2), event('c', 3)];
    const w1: Actor = { worker: 'w1', incarnation: 1 };
    const w1b: Actor = { worker: 'w1', incarnation: 2 };
    const w1c: Actor = { worker: 'w1', incarnation: 3 };
    const ok = { kind: 'ok' } as const;
    const steps: Step[] = [
      { kind: 'life', seq: 0, phase: 'adversity', actor: w1, event: { kind: 'start' } },
      { kind: 'call', seq: 1, phase: 'adversity', actor: w1, call: { kind: 'fetch', request: { resume: { kind: 'start' }, limit: 3 } }, outcome: ok, applied: true, fault: 'reorder', result: { kind: 'page', page: { events: [b, c, a], next: null, head: 3 } } },
      { kind: 'call', seq: 2, phase: 'adversity', actor: w1, call: { kind: 'commit', ops: [{ op: 'outbox', event: a, payload: a.payload }, { op: 'watermark', binding: 'orders', value: { key: [1], id: 'a' } }], fence: null }, outcome: ok, applied: true },
      { kind: 'call', seq: 3, phase: 'adversity', actor: w1, call: { kind: 'commit', ops: [{ op: 'dead-letter', event: c, reason: 'refused <poison>' }], fence: null }, outcome: ok, applied: true },
      { kind: 'call', seq: 4, phase: 'adversity', actor: w1, call: { kind: 'emit', event: b, payload: b.payload }, outcome: { kind: 'indefinite', code: 'timeout' }, applied: true, fault: 'timeout' },
      { kind: 'call', seq: 5, phase: 'adversity', actor: w1, call: { kind: 'malformed', method: 'fetch', problem: 'limit <= 0' }, outcome: { kind: 'error', code: 'bad-request' }, applied: false },
      { kind: 'life', seq: 6, phase: 'adversity', actor: w1, event: { kind: 'threw', message: 'boom <&>' } },
      { kind: 'life', seq: 7, phase: 'adversity', actor: w1b, event: { kind: 'start' } },
      // The plan's move, made as the world picks the call it put it before: the claim.
      { kind: 'mutation', seq: 8, phase: 'adversity', event: event('b', 5, 2), mutation: 'move' },
      { kind: 'call', seq: 9, phase: 'adversity', actor: w1b, call: { kind: 'claim', claim: { kind: 'failed', reason: 'cannot prove <hole>' } }, outcome: ok, applied: true },
      { kind: 'life', seq: 10, phase: 'drain', actor: w1c, event: { kind: 'start' } },
      { kind: 'life', seq: 11, phase: 'drain', actor: w1c, event: { kind: 'hung' } },
    ];
    const history: History = {
      header: { initial: [a, b, c], binding: { scope: 'orders', filter: { kind: 'all' }, ordering: ['ts'], upTo: null }, contract: { kind: 'none' }, delivery: 'at-least-once', poison: ['c'], pageSize: 3, leaseTtlSteps: 10, version: HISTORY_VERSION,
        resumes: [],
        // The plan: the page quirk and the timeout the steps record, and the move.
        faults: [
          { call: 'fetch', nth: 0, kind: 'reorder' },
          { call: 'emit', nth: 0, kind: 'timeout' },
        ],
        mutations: [{ before: { call: 'claim', nth: 0 }, kind: 'move', target: 1, back: 0 }],
        rebind: null,
        workers: 1,
        consumer: 'whitebox',
      },
      steps,
    };
    const execution: Execution = { plan: findScenario('failed-event-holds-watermark')!.plan, history, hash: hashHistory(history), result: check(history) };
    expect(execution.result.verdict.status).toBe('unknown');
    const html = renderPicture(execution, { consumer: 'hand-made', replay: 'none' });
    expect(unbalanced(html)).toEqual([]);
    expect(html).toMatch(/<h1[^>]*>UNKNOWN hand-made<\/h1>/);
    expect(html).toContain('the run could not be judged: incarnation w1#3 stopped calling the world');
    expect([...html.matchAll(/<g class="lane" data-lane="([^"]+)">/g)].map((m) => m[1])).toEqual(['source', 'w1#1', 'w1#2', 'w1#3']);
    expect(markLine(html, 1)).toContain('data-fault="reorder"');
    expect(html).toContain('>[b c a] end</text>');
    expect(markLine(html, 4)).toContain('<g class="fault-indefinite">');
    expect(html).toContain('>timeout (applied)</text>');
    expect(markLine(html, 5)).toContain('data-call="malformed"');
    expect(html).toContain('>move b@2 at 5</text>');
    // Two rows for b: where version 1 stood and where version 2 moved.
    expect(html).toContain('>b (2)</text>');
    expect(html).toContain('>b@2 (5)</text>');
    expect(html).toContain('data-life="threw"');
    expect(html).toContain('>threw: boom &lt;&amp;&gt;</text>');
    expect(html).toContain('>failed visibly: cannot prove &lt;hole&gt;</text>');
    expect(html).toContain('data-life="hung"');
    // The outbox handoff and the poison dead letter are durable outcomes; the move left b@2 without one.
    expect(html).not.toContain('data-shade=');
  });

  it('is deterministic: the same world gives the same bytes', async () => {
    const a = await run('max-position-fetched', 'failed-event-holds-watermark');
    const b = await run('max-position-fetched', 'failed-event-holds-watermark');
    expect(b.execution.hash).toBe(a.execution.hash);
    expect(b.html).toBe(a.html);
    expect(renderPicture(a.execution, { consumer: 'max-position-fetched', replay: 'r' })).toBe(renderPicture(a.execution, { consumer: 'max-position-fetched', replay: 'r' }));
  });

  it('matches the stored picture of the max-position-fetched failure', async () => {
    const { html } = await run('max-position-fetched', 'failed-event-holds-watermark');
    await expect(html).toMatchFileSnapshot('__snapshots__/picture-max-position-fetched.html');
  });
});

describe('the picture draws from ground truth, blackbox consumers included', () => {
  it('the blackbox example on repeated-page: outcome marks and a watermark line from its observed store', async () => {
    const { default: blackbox } = await import('../../examples/blackbox-consumer.js');
    const execution = await execute(findScenario('repeated-page')!.plan, blackbox);
    expect(execution.history.steps.some((s) => s.kind === 'observed')).toBe(true);
    const html = renderPicture(execution, { consumer: blackbox.name, replay: 'x' });
    // Five events, each booked in the consumer's own store: a mark each, at least.
    expect(count(html, '<circle class="outcome"')).toBeGreaterThanOrEqual(5);
    expect(count(html, '<circle class="watermark-commit"')).toBeGreaterThan(0);
    expect(html).not.toContain('data-shade=');
  });

  it('the red band sits exactly where the checker finds the premature watermark, for a blackbox consumer too', async () => {
    const { default: blackbox } = await import('../../examples/blackbox-consumer.js');
    // The same store, but its watermark is moved to the page's end before anything is booked.
    const careless: typeof blackbox = {
      ...blackbox,
      name: 'careless-blackbox',
      run: async (world, db) => {
        const page = await world.fetch({ resume: { kind: 'start' }, limit: world.source.pageSize });
        const last = page.events.at(-1);
        if (last) db.progress = { binding: world.fingerprint, position: { key: last.key, id: last.id }, anchor: null };
        await world.fetch({ resume: { kind: 'start' }, limit: 1 });
        await blackbox.run(world, db);
      },
    };
    const execution = await execute(findScenario('failed-event-holds-watermark')!.plan, careless);
    const premature = execution.result.verdict.anomalies.find((a) => a.kind === 'premature-watermark');
    expect(premature).toBeDefined();
    const html = renderPicture(execution, { consumer: careless.name, replay: 'x' });
    const shadeX = /<rect class="premature" data-shade="premature" x="([\d.]+)"/.exec(html)![1];
    const witnessX = new RegExp(`<g class="witness" data-witness="${premature!.steps[0]}">.*?<line x1="([\\d.]+)"`).exec(html)![1];
    expect(shadeX).toBe(witnessX);
  });
});
