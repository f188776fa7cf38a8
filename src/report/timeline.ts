import { formatRef } from '../../model/event.js';
import type { Call, CallResult, CallStep, Outcome, Resume, Step, StoreOp } from '../../model/history.js';
import { formatPosition, isPosition } from '../../model/order.js';
import type { Binding } from '../../model/binding.js';

/**
 * The history as a timeline a person can read at 2 a.m.: one line per step, the worker
 * incarnation first, then what it asked and what became of it. Steps in `marked` get a »
 * so the witness of an anomaly stands out.
 *
 * Repetition is folded: a run of identical lines becomes one line with a count, and a
 * block of lines that comes back again and again with only the incarnation changing (a
 * consumer that dies on start, or returns without claiming, until the budget runs out) is
 * printed once, followed by one line saying how often it repeats. A marked step is never
 * folded away.
 */
export function renderTimeline(steps: readonly Step[], marked: ReadonlySet<number> = new Set()): string[] {
  const texts = steps.map(describeStep);
  const shapes = steps.map((step, i) => shapeOf(step, texts[i] as string));
  const lines: string[] = [];
  let phase = '';
  const line = (from: number, to: number, text: string): void => {
    const first = steps[from] as Step;
    const mark = marked.has(first.seq) ? '»' : ' ';
    const seq = to > from ? `${first.seq}-${(steps[to] as Step).seq}` : String(first.seq);
    lines.push(`${mark} ${seq.padStart(7)}  ${text}`);
  };
  /** Whether the block of `period` steps from `at` comes back once more after `count` copies. */
  const repeats = (at: number, period: number, count: number, identical: boolean): boolean => {
    const from = at + period * count;
    if (from + period > steps.length) return false;
    for (let k = 0; k < period; k++) {
      const step = steps[from + k] as Step;
      if (step.phase !== (steps[at] as Step).phase || marked.has(step.seq)) return false;
      if ((identical ? texts : shapes)[from + k] !== (identical ? texts : shapes)[at + k]) return false;
    }
    return true;
  };
  for (let i = 0; i < steps.length; ) {
    const step = steps[i] as Step;
    if (step.phase !== phase) {
      phase = step.phase;
      lines.push(`  -- ${phase} phase${phase === 'drain' ? ' (faults off)' : ''} --`);
    }
    // A worker waiting for a lease repeats itself: one line with a count says the same.
    let same = 1;
    if (!marked.has(step.seq)) while (repeats(i, 1, same, true)) same++;
    // The longest stretch a repeating block covers, the shortest block on a tie.
    let best = { period: 1, count: 1 };
    for (let period = 1; period <= MAX_PERIOD && i + 3 * period <= steps.length; period++) {
      if (steps.slice(i, i + period).some((s) => s.phase !== step.phase)) break;
      let count = 1;
      while (repeats(i, period, count, false)) count++;
      if (count >= 3 && period * count > best.period * best.count) best = { period, count };
    }
    if (same >= 2 && same >= best.period * best.count) {
      line(i, i + same - 1, `${texts[i]} × ${count(same)}`);
      i += same;
      continue;
    }
    if (best.count === 1) {
      line(i, i, texts[i] as string);
      i++;
      continue;
    }
    const { period } = best;
    for (let k = 0; k < period; k++) line(i + k, i + k, texts[i + k] as string);
    const from = i + period;
    const to = i + period * best.count - 1;
    const [first, last] = [who(steps[from] as Step), who(steps[to] as Step)];
    const lives = first !== null && last !== null && first !== last ? ` for ${first} to ${last}` : '';
    line(from, to, `... the ${period === 1 ? 'line' : `${period} lines`} above again${lives} (× ${count(best.count)} in all)`);
    i = to + 1;
  }
  return lines;
}

/** The longest block of steps looked for as a repeating unit. */
const MAX_PERIOD = 16;

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function who(step: Step): string | null {
  return 'actor' in step ? `${step.actor.worker}#${step.actor.incarnation}` : null;
}

/**
 * A step's line without the numbers that only count lives: incarnations (its own and any it
 * names), lease generations and the step a lease runs to. The same thing done by the next
 * life looks the same; anything else that differs (an event, a position, a token) does not.
 */
function shapeOf(step: Step, text: string): string {
  if (!('actor' in step)) return text;
  return text
    .replace(/^(\S+#)\d+ */, '$1 ')
    .replace(/\b(w\d+#)\d+/g, '$1')
    .replace(/\b(generation|step) \d+/g, '$1 #');
}

export function describeStep(step: Step): string {
  if (step.kind === 'mutation') {
    return `SOURCE ${step.mutation}: ${formatRef(step.event)} ${String(step.event.attrs.kind ?? '')} now at ${formatPosition(step.event)}`;
  }
  if (step.kind === 'rebind') return `REBIND: every worker restarts on the same store under ${describeBinding(step.binding)}`;
  const who = `${step.actor.worker}#${step.actor.incarnation}`;
  if (step.kind === 'life') {
    const e = step.event;
    const what =
      e.kind === 'start' ? 'starts from durable state'
      : e.kind === 'threw' ? `threw: ${e.message}`
      : e.kind === 'returned' ? 'returned without claiming anything'
      : e.kind === 'budget' ? 'stopped: the phase step budget ran out'
      : 'hung: stopped calling the world without returning';
    return `${who.padEnd(6)} ${what}`;
  }
  if (step.kind === 'observed') {
    const parts = [...(step.watermark ? [`watermark ${describeValue(step.watermark.value)}`] : []), ...step.effects.map((e) => `effect ${formatRef(e.event)}`)];
    return `${who.padEnd(6)} its own store now holds: ${parts.join('; ')}`;
  }
  const quirk = step.fault !== undefined && step.outcome.kind === 'ok' ? ` [source quirk: ${step.fault}]` : '';
  return `${who.padEnd(6)} ${describeCall(step.call)}${describeOutcome(step)}${quirk}`;
}

function describeCall(call: Call): string {
  switch (call.kind) {
    case 'fetch':
      return `fetch ${describeResume(call.request.resume)}, limit ${call.request.limit}`;
    case 'load':
      return 'load progress';
    case 'completed':
      return `completed? ${call.events.map(formatRef).join(' ') || '(none)'}`;
    case 'commit':
      return `commit [${call.ops.map(describeOp).join('; ')}]${call.fence === null ? '' : ` fenced by generation ${call.fence}`}`;
    case 'emit':
      return `emit effect ${formatRef(call.event)}${call.key === undefined ? '' : call.key === null ? ' with no key' : ` at key ${call.key.join(',')}`}`;
    case 'lease':
      return 'acquire lease';
    case 'claim':
      return call.claim.kind === 'caught-up' ? 'claims CAUGHT UP' : `FAILS VISIBLY: ${call.claim.reason}`;
    case 'malformed':
      return `MALFORMED ${call.method}: ${call.problem}`;
  }
}

function describeOutcome(step: CallStep): string {
  const o: Outcome = step.outcome;
  switch (o.kind) {
    case 'ok':
      return step.result ? ` -> ${describeResult(step.result)}` : ' -> ok';
    case 'error':
      return ` -> ERROR ${o.code} (did not happen)`;
    case 'indefinite':
      return ` -> ${o.code.toUpperCase()} (${step.applied ? 'it happened' : 'it did not happen'}; the caller cannot tell)`;
    case 'crash-before':
      return ' -> CRASH before it took effect';
    case 'crash-after':
      return ` -> CRASH after it ${step.applied ? 'took effect' : 'failed'}; the worker never learned`;
  }
}

function describeResult(result: CallResult): string {
  switch (result.kind) {
    case 'page': {
      const { events, next } = result.page;
      return `[${events.map(formatRef).join(' ')}] ${next === null ? 'end' : `next ${next}`}${result.page.head === null ? '' : `, head ${result.page.head}`}`;
    }
    case 'state': {
      const { watermark, anchor } = result.state;
      const pending = result.state.outbox.length > 0 ? `, outbox ${result.state.outbox.map((o) => formatRef(o.event)).join(' ')}` : '';
      return `watermark ${watermark ? describeValue(watermark.value) : 'none'}, anchor ${anchor ? (anchor.token ?? 'start') : 'none'}${pending}`;
    }
    case 'flags':
      return result.flags.map((f) => (f ? 'yes' : 'no')).join(' ') || '(none)';
    case 'generation':
      return `generation ${result.generation}`;
    case 'done':
      return 'ok';
  }
}

function describeOp(op: StoreOp): string {
  switch (op.op) {
    case 'effect':
      return `effect ${formatRef(op.event)}`;
    case 'complete':
      return `complete ${formatRef(op.event)}`;
    case 'unless-completed':
      return `unless ${formatRef(op.event)} completed`;
    case 'watermark':
      return `watermark ${describeValue(op.value)}${'expect' in op ? ` if ${describeValue(op.expect)}` : ' (blind)'}`;
    case 'anchor':
      return `anchor ${op.token ?? 'start'}`;
    case 'outbox':
      return `outbox ${formatRef(op.event)}`;
    case 'outbox-done':
      return `outbox ${formatRef(op.event)} delivered`;
    case 'dead-letter':
      return `dead-letter ${formatRef(op.event)}`;
  }
}

function describeResume(r: Resume): string {
  switch (r.kind) {
    case 'start':
      return 'from start';
    case 'token':
      return `token ${r.token}`;
    case 'after':
      return `after ${describeValue(r.position)}`;
    case 'key-gt':
      return `key > ${r.key.join(',')}`;
    case 'key-gte':
      return `key >= ${r.key.join(',')}`;
    case 'offset':
      return `offset ${r.offset}`;
  }
}

export function describeBinding(binding: Binding): string {
  const { filter } = binding;
  const which =
    filter.kind === 'all' ? 'all events'
    : filter.kind === 'equals' ? `${filter.attr} = ${String(filter.value)}`
    : `${filter.attr} in ${filter.values.join('|')}`;
  return `${which}, ordered by ${binding.ordering.join(',')}+id${binding.upTo === null ? '' : `, snapshot up to ${binding.upTo}`}`;
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  return isPosition(value) ? formatPosition(value) : JSON.stringify(value);
}
