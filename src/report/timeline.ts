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
 * printed once, followed by one line saying how often it repeats. Then like steps: a block
 * that comes back with only its events, keys, tokens and generations changing (a connector
 * writing thousands of records, page after page: fetch, emit, emit, ..., commit) is printed
 * the first time and the last, with one line between saying what was folded. A marked step
 * is never folded away.
 */
export function renderTimeline(steps: readonly Step[], marked: ReadonlySet<number> = new Set()): string[] {
  return timelineEntries(steps, marked).map((e) => e.text);
}

/** One printed line of a timeline, with the steps it stands for (indices into the steps given). */
export interface TimelineEntry {
  readonly text: string;
  /** The first and last step it stands for; null for a phase heading. */
  readonly from: number | null;
  readonly to: number | null;
  /** It shows a marked step (a witness). */
  readonly marked: boolean;
}

/**
 * The timeline's lines, each with the steps it stands for (see renderTimeline). `kept`, the
 * marked steps that must be shown as they are (the witnesses of the findings told in full):
 * other marked steps may fold among like ones, and the fold says how many it holds. By
 * default, every marked step.
 */
export function timelineEntries(steps: readonly Step[], marked: ReadonlySet<number> = new Set(), kept: ReadonlySet<number> = marked): TimelineEntry[] {
  const texts = steps.map(describeStep);
  const shapes = steps.map((step, i) => shapeOf(step, texts[i] as string));
  const likes = steps.map((step, i) => likeOf(step, i));
  const lines: TimelineEntry[] = [];
  let phase = '';
  const line = (from: number, to: number, text: string): void => {
    const first = steps[from] as Step;
    const witness = marked.has(first.seq);
    const seq = to > from ? `${first.seq}-${(steps[to] as Step).seq}` : String(first.seq);
    lines.push({ text: `${witness ? '»' : ' '} ${seq.padStart(7)}  ${text}`, from, to, marked: witness });
  };
  /** Whether the block of `period` steps from `at` comes back once more after `count` copies. */
  const repeats = (at: number, period: number, count: number, alike: readonly string[], never: ReadonlySet<number> = marked): boolean => {
    const from = at + period * count;
    if (from + period > steps.length) return false;
    for (let k = 0; k < period; k++) {
      const step = steps[from + k] as Step;
      if (step.phase !== (steps[at] as Step).phase || never.has(step.seq)) return false;
      if (alike[from + k] !== alike[at + k]) return false;
    }
    return true;
  };
  /** The longest stretch a block repeating alike covers from `i`, the shortest block on a tie. */
  const longest = (i: number, alike: readonly string[], least: number, never?: ReadonlySet<number>): { period: number; count: number } => {
    let best = { period: 1, count: 1 };
    for (let period = 1; period <= MAX_PERIOD && i + 3 * period <= steps.length; period++) {
      // A block folded among like ones holds no step that must be shown, not even its first copy.
      if (steps.slice(i, i + period).some((s) => s.phase !== (steps[i] as Step).phase || never?.has(s.seq))) break;
      let count = 1;
      while (repeats(i, period, count, alike, never ?? marked)) count++;
      if (count >= 3 && period * count >= least && period * count > best.period * best.count) best = { period, count };
    }
    return best;
  };
  for (let i = 0; i < steps.length; ) {
    const step = steps[i] as Step;
    if (step.phase !== phase) {
      phase = step.phase;
      lines.push({ text: `  -- ${phase} phase${phase === 'drain' ? ' (faults off)' : ''} --`, from: null, to: null, marked: false });
    }
    // A worker waiting for a lease repeats itself: one line with a count says the same.
    let same = 1;
    if (!marked.has(step.seq)) while (repeats(i, 1, same, texts)) same++;
    const best = longest(i, shapes, 0);
    if (same >= 2 && same >= best.period * best.count) {
      line(i, i + same - 1, `${texts[i]} × ${count(same)}`);
      i += same;
      continue;
    }
    if (best.count === 1) {
      // Like steps: folded only where that saves lines (the first block, a line, the last block).
      const like = longest(i, likes, LIKE_RUN, kept);
      if (like.count < 3) {
        line(i, i, texts[i] as string);
        i++;
        continue;
      }
      const { period } = like;
      const last = i + period * (like.count - 1);
      for (let k = 0; k < period; k++) line(i + k, i + k, texts[i + k] as string);
      const folded = steps.slice(i + period, last);
      const witnesses = folded.filter((f) => marked.has(f.seq)).length;
      line(i + period, last - 1, `... ${count(folded.length)} more step${folded.length === 1 ? '' : 's'} like ${period === 1 ? 'the line above' : `the ${period} lines above`}${period === 1 ? '' : ` (× ${count(like.count - 2)})`}: ${foldedSummary(folded)}${witnesses > 0 ? `, ${count(witnesses)} marked »` : ''}`);
      for (let k = 0; k < period; k++) line(last + k, last + k, texts[last + k] as string);
      i = last + period;
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
/** The fewest steps a run of like steps must cover to be folded: fewer are shown as they are. */
const LIKE_RUN = 8;

/**
 * What makes steps alike, for folding: the same incarnation making the same kind of call to
 * the same outcome, whatever its events, keys, tokens or generations. Steps that are no call,
 * claims and faults are each unlike any other: they are the story, and are always shown.
 */
function likeOf(step: Step, i: number): string {
  if (step.kind !== 'call' || step.call.kind === 'claim' || step.call.kind === 'malformed' || step.fault !== undefined) return `#${i}`;
  const o = step.outcome;
  return `${step.actor.worker}#${step.actor.incarnation} ${step.call.kind} ${o.kind}${o.kind === 'error' || o.kind === 'indefinite' ? ` ${o.code}` : ''}${step.applied ? '' : ' not applied'}`;
}

/** What folded like steps did, counted by call: `400 emit (e0042 to e0441), 100 fetch, 100 commit`. */
function foldedSummary(steps: readonly Step[]): string {
  const calls = new Map<string, { n: number; first: string | null; last: string | null }>();
  for (const step of steps) {
    if (step.kind !== 'call') continue;
    const ref = step.call.kind === 'emit' ? formatRef(step.call.event) : null;
    const seen = calls.get(step.call.kind);
    if (seen === undefined) calls.set(step.call.kind, { n: 1, first: ref, last: ref });
    else {
      seen.n++;
      seen.last = ref;
    }
  }
  return [...calls.entries()].map(([kind, { n, first, last }]) => `${count(n)} ${kind}${first !== null ? ` (${first === last ? first : `${first} to ${last}`})` : ''}`).join(', ');
}

/**
 * A long timeline cut to about `limit` lines: its first lines, the lines around each step of
 * `focus` (the witnesses of the findings told in full), and its last lines are kept; each
 * stretch cut becomes one line saying what it held, counted by call (`... 1,200 lines cut:
 * steps 40-3,811, 1,000 emit, 100 fetch, 100 commit, 12 marked »`). The witness told is never
 * cut; those of the findings only counted may be, and the line says how many.
 */
export function cutTimeline(entries: readonly TimelineEntry[], steps: readonly Step[], limit: number, focus: ReadonlySet<number>): string[] {
  if (entries.length <= limit) return entries.map((e) => e.text);
  const keep = new Array<boolean>(entries.length).fill(false);
  const edge = Math.floor(limit / 4);
  for (let i = 0; i < Math.min(edge, entries.length); i++) keep[i] = true;
  for (let i = Math.max(0, entries.length - edge); i < entries.length; i++) keep[i] = true;
  entries.forEach((e, i) => {
    if (!e.marked || e.from === null || !focus.has((steps[e.from] as Step).seq)) return;
    for (let k = Math.max(0, i - AROUND); k <= Math.min(entries.length - 1, i + AROUND); k++) keep[k] = true;
  });
  const out: string[] = [];
  for (let i = 0; i < entries.length; ) {
    if (keep[i]) {
      out.push((entries[i] as TimelineEntry).text);
      i++;
      continue;
    }
    let j = i;
    while (j < entries.length && !keep[j]) j++;
    if (j - i < MIN_CUT) {
      // A short stretch says more shown than counted.
      for (; i < j; i++) out.push((entries[i] as TimelineEntry).text);
      continue;
    }
    const cut = entries.slice(i, j);
    const froms = cut.flatMap((e) => (e.from === null ? [] : [e.from]));
    const tos = cut.flatMap((e) => (e.to === null ? [] : [e.to]));
    const first = froms.length > 0 ? Math.min(...froms) : null;
    const last = tos.length > 0 ? Math.max(...tos) : null;
    const held = first === null || last === null ? [] : steps.slice(first, last + 1);
    const witnesses = cut.filter((e) => e.marked).length;
    const span = first === null || last === null ? '' : `: steps ${count((steps[first] as Step).seq)}-${count((steps[last] as Step).seq)}, ${describeHeld(held)}${witnesses > 0 ? `, ${count(witnesses)} marked »` : ''}`;
    out.push(`  ... ${count(cut.length)} line${cut.length === 1 ? '' : 's'} cut${span}`);
    i = j;
  }
  return out;
}

/** Lines kept on each side of a witness when a long timeline is cut. */
const AROUND = 6;
/** The fewest lines cut at one place: fewer are shown. */
const MIN_CUT = 8;

/** What a stretch of steps held, counted: calls by kind, then lives. */
function describeHeld(steps: readonly Step[]): string {
  const kinds = new Map<string, number>();
  for (const step of steps) {
    const kind = step.kind === 'call' ? step.call.kind : step.kind === 'life' ? `${step.event.kind === 'start' ? 'start' : step.event.kind}` : step.kind;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds.entries()].map(([kind, n]) => `${count(n)} ${kind}`).join(', ');
}

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
