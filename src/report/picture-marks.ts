import { formatRef } from '../../model/event.js';
import type { CallStep, LifeStep, MutationStep, Phase } from '../../model/history.js';
import { isPageQuirk, type FaultKind } from '../../scenarios/plan.js';
import { COLOR, cross, diamond, dot, endGlyph, esc, fetchGlyph, flag, n, ring, square, tick, warn } from './svg.js';
import { describeValue } from './timeline.js';

/**
 * What the picture draws for one step in a worker's lane: its glyph, its labels and its data
 * attributes, and the phase and mutation labels of the other lanes.
 */
export interface Label {
  readonly x: number;
  readonly text: string;
  readonly color: string;
  /** Lower is placed first. */
  readonly priority: number;
  readonly seq: number;
}

export function phaseLabel(phase: Phase, width: number): string {
  const full = phase === 'drain' ? 'drain phase (faults off, one worker)' : 'adversity phase (faults, mutations, competing workers)';
  const short = phase === 'drain' ? 'drain' : 'adversity';
  return full.length * 7 <= width ? full : short;
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function mutationLabel(step: MutationStep): string {
  const e = step.event;
  const attrs = Object.keys(e.attrs)
    .sort()
    .map((k) => `${k}=${String(e.attrs[k])}`)
    .join(' ');
  return `${step.mutation} ${formatRef(e)} at ${e.key.join(',')}${step.mutation === 'flip' ? ` ${attrs}` : ''}`;
}

interface Mark {
  readonly cls: string;
  readonly data: string;
  readonly svg: string;
  readonly labels: Omit<Label, 'x' | 'seq'>[];
}

export function lifeMark(step: LifeStep, x: number, y: number): Mark {
  const e = step.event;
  if (e.kind === 'start') {
    return {
      cls: 'life life-start',
      data: ' data-life="start"',
      svg: `<path d="M${n(x + 3)} ${n(y - 8)} H${n(x)} V${n(y + 8)} H${n(x + 3)}" fill="none" stroke="#666666" stroke-width="1.5" />`,
      labels: [],
    };
  }
  const color = e.kind === 'returned' ? COLOR.dim : COLOR.end;
  const text = e.kind === 'threw' ? `threw: ${e.message}` : e.kind === 'hung' ? 'hung' : e.kind === 'budget' ? 'budget ran out' : 'returned';
  return {
    cls: `life life-end life-${e.kind}`,
    data: ` data-life="${e.kind}"`,
    svg: endGlyph(x, y, color),
    labels: [{ text, color, priority: 0 }],
  };
}

export function callMark(step: CallStep, x: number, y: number): Mark {
  const { call, outcome, result } = step;
  const faded = !step.applied;
  const labels: Omit<Label, 'x' | 'seq'>[] = [];
  let base = '';
  switch (call.kind) {
    case 'fetch': {
      base = fetchGlyph(x, y, faded);
      if (result?.kind === 'page') {
        const page = result.page;
        labels.push({ text: `[${page.events.map(formatRef).join(' ')}]${page.next === null ? ' end' : ''}`, color: COLOR.fetch, priority: 2 });
      }
      break;
    }
    case 'load':
      base = square(x, y, COLOR.read);
      break;
    case 'completed':
      base = ring(x, y, COLOR.read);
      break;
    case 'emit':
      base = dot(x, y, COLOR.effect);
      labels.push({ text: formatRef(call.event), color: COLOR.effect, priority: 4 });
      break;
    case 'commit': {
      const watermarks = call.ops.filter((op) => op.op === 'watermark');
      base = tick(x, y, watermarks.length > 0);
      const outcomes = call.ops.filter((op) => op.op === 'effect' || op.op === 'outbox' || op.op === 'dead-letter');
      const shown = outcomes.slice(0, 5);
      shown.forEach((op, i) => {
        const dy = (i - (shown.length - 1) / 2) * 6;
        base += op.op === 'effect' ? dot(x, y + dy, COLOR.effect) : op.op === 'outbox' ? ring(x, y + dy, COLOR.outbox) : dot(x, y + dy, COLOR.deadLetter);
      });
      for (const op of watermarks) labels.push({ text: `wm ${describeValue(op.value)}`, color: COLOR.watermark, priority: 1 });
      if (outcomes.length > 0) {
        const names = outcomes.map((op) => `${op.op === 'effect' ? '' : op.op === 'outbox' ? 'outbox ' : 'dead-letter '}${formatRef(op.event)}`);
        labels.push({ text: names.join(' '), color: COLOR.effect, priority: 4 });
      }
      break;
    }
    case 'lease':
      base = diamond(x, y, COLOR.lease, false);
      if (result?.kind === 'generation' && outcome.kind === 'ok') labels.push({ text: `g${result.generation}`, color: COLOR.lease, priority: 5 });
      break;
    case 'claim':
      base = flag(x, y, call.claim.kind === 'caught-up' ? COLOR.caughtUp : COLOR.failed);
      labels.push(
        call.claim.kind === 'caught-up'
          ? { text: 'caught up', color: COLOR.caughtUp, priority: 0 }
          : { text: `failed visibly: ${call.claim.reason}`, color: COLOR.failed, priority: 0 },
      );
      break;
    default:
      // A call the world could not read (malformed), or any call kind added later.
      base = square(x, y, COLOR.error);
      labels.push({ text: call.kind, color: COLOR.error, priority: 3 });
  }
  let over = '';
  let data = ` data-call="${call.kind}" data-outcome="${outcome.kind}"`;
  let cls = `call call-${call.kind}`;
  if (outcome.kind === 'crash-before' || outcome.kind === 'crash-after') {
    over = `<g class="crash" data-outcome="${outcome.kind}">${cross(x, y)}</g>`;
    labels.push({ text: outcome.kind === 'crash-before' ? 'crash before' : 'crash after', color: COLOR.crash, priority: 0 });
    cls += ' crashed';
  } else if (outcome.kind === 'error' || outcome.kind === 'indefinite') {
    over = `<g class="fault-${outcome.kind}">${warn(x, y, outcome.kind === 'error')}</g>`;
    labels.push({ text: outcome.kind === 'error' ? outcome.code : `${outcome.code} (${step.applied ? 'applied' : 'not applied'})`, color: COLOR.error, priority: 3 });
  }
  if (step.fault !== undefined && isPageQuirk(step.fault as FaultKind)) {
    over += `<circle class="quirk" cx="${n(x)}" cy="${n(y - 11)}" r="2" fill="${COLOR.quirk}" />`;
    labels.push({ text: `quirk: ${step.fault}`, color: COLOR.quirk, priority: 1 });
    data += ` data-fault="${esc(step.fault)}"`;
  }
  return { cls, data, svg: `<g${faded ? ' opacity="0.4"' : ''}>${base}</g>${over}`, labels };
}
