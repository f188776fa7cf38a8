import { fingerprint } from '../model/binding.js';
import { positionOf, refOf, type SourceEvent } from '../model/event.js';
import { HISTORY_VERSION, type Actor, type Call, type CallResult, type CallStep, type History, type Phase, type Step } from '../model/history.js';
import type { PlannedMutation } from '../model/plan.js';
import { ORDERS } from '../scenarios/named.js';

/**
 * Histories written directly, to time the checker alone at sizes no generated world reaches.
 * Each is what one correct at-least-once worker does against an insertion-stable source, in
 * pages of PAGE_SIZE: fetch, look up completions, emit and complete each event, commit the
 * watermark (fenced, compare-and-set) with its replay anchor, renew the lease; then a drain
 * incarnation that finds nothing left and claims caught-up. The checker must pass it.
 *
 * With mutations, one event is inserted at the head of the source every `mutationEvery`
 * events handled, as an insertion-stable source does (an `updated_at` clock); each inserted
 * event is fetched and handled later in the same traversal. A mutation is the checker's
 * costly step, which is why this variant exists.
 */
export const PAGE_SIZE = 8;

export interface SyntheticOptions {
  /** Steps wanted; the history comes within a page or two of it. */
  readonly steps: number;
  /** Insert one event every this many events handled; null for a calm source. */
  readonly mutationEvery: number | null;
}

/** Steps one page of `n` events costs: fetch, completed, emit and commit per event, watermark, lease. */
const stepsPerPage = (n: number): number => 2 * n + 4;

export function syntheticHistory(options: SyntheticOptions): History {
  const every = options.mutationEvery;
  // Events, inserted ones included, so that the steps come out at the size asked for.
  const perEvent = stepsPerPage(PAGE_SIZE) / PAGE_SIZE + (every === null ? 0 : 1 / every);
  const total = Math.max(PAGE_SIZE, Math.ceil(options.steps / perEvent));
  // Inserted events join the end of the stream, so every insertion must happen while the
  // initial events are still being handled: initial * (1 + 1/every) = total.
  const initialCount = every === null ? total : Math.ceil((total * every) / (every + 1));
  const event = (n: number, id: string): SourceEvent => ({ id, version: 1, key: [n], attrs: { kind: 'order' }, payload: `${id}:order` });
  const initial = Array.from({ length: initialCount }, (_, i) => event(i, `e${i}`));
  // The last insertion comes at least a page before the end of the initial events, so each
  // inserted event exists before the fetch that serves it.
  const insertCount = every === null ? 0 : Math.floor(Math.max(0, initialCount - PAGE_SIZE) / every);
  const inserts = Array.from({ length: insertCount }, (_, k) => event(initialCount + k, `m${k}`));
  const stream = [...initial, ...inserts];

  const binding = ORDERS;
  const label = fingerprint(binding);
  const steps: Step[] = [];
  let phase: Phase = 'adversity';
  // Each kind of step is built by one literal, its fields in the order the world writes them
  // (src/world/world.ts), optional ones present as undefined: every step of a kind then shares
  // one hidden class, as a world's do. Spreading a step into a copy with its seq gave the
  // steps of one kind several shapes, and the checker timed here read them polymorphically.
  // The plan's changes, each placed before the call that follows it, as a plan places them.
  const mutations: PlannedMutation[] = [];
  const calls = new Map<string, number>();
  let unplaced = 0;
  const call = (actor: Actor, c: Call, result?: CallResult): void => {
    const nth = calls.get(c.kind) ?? 0;
    calls.set(c.kind, nth + 1);
    for (; unplaced > 0; unplaced--) mutations.push({ before: { call: c.kind as PlannedMutation['before']['call'], nth }, kind: 'insert', target: 0, back: 0 });
    const step: CallStep = { kind: 'call', seq: steps.length, phase, actor, call: c, outcome: { kind: 'ok' }, applied: true, fault: undefined, result };
    steps.push(step);
  };
  const life = (actor: Actor): void => {
    steps.push({ kind: 'life', seq: steps.length, phase, actor, event: { kind: 'start' } });
  };

  const first: Actor = { worker: 'w1', incarnation: 1 };
  life(first);
  call(first, { kind: 'lease' }, { kind: 'generation', generation: 1 });
  call(first, { kind: 'load' }, { kind: 'state', state: { watermark: null, anchor: null, outbox: [] } });
  let head = initialCount - 1;
  let handled = 0;
  let inserted = 0;
  let stored: unknown = null;
  let token: string | null = null;
  for (let at = 0; at < stream.length; at += PAGE_SIZE) {
    const page = stream.slice(at, at + PAGE_SIZE);
    const next = at + PAGE_SIZE < stream.length ? `t${at + PAGE_SIZE}` : null;
    call(first, { kind: 'fetch', request: { resume: token === null ? { kind: 'start' } : { kind: 'token', token }, limit: PAGE_SIZE } }, { kind: 'page', page: { events: page, next, head } });
    call(first, { kind: 'completed', events: page.map(refOf) }, { kind: 'flags', flags: page.map(() => false) });
    for (const e of page) {
      call(first, { kind: 'emit', event: refOf(e), payload: e.payload });
      call(first, { kind: 'commit', ops: [{ op: 'complete', event: refOf(e) }], fence: null });
      handled++;
      if (every !== null && handled % every === 0 && inserted < inserts.length) {
        const fresh = inserts[inserted++] as SourceEvent;
        head = fresh.key[0] as number;
        steps.push({ kind: 'mutation', seq: steps.length, phase, event: fresh, mutation: 'insert' });
        unplaced++;
      }
    }
    const last = page.at(-1) as SourceEvent;
    const value = { key: [...last.key], id: last.id };
    call(first, {
      kind: 'commit',
      ops: [
        { op: 'watermark', binding: label, value, expect: stored },
        { op: 'anchor', binding: label, token: next, watermark: value },
      ],
      fence: 1,
    });
    stored = value;
    token = next;
    if (next !== null) call(first, { kind: 'lease' }, { kind: 'generation', generation: 1 });
  }
  if (inserted !== inserts.length) throw new Error(`synthetic history: ${inserts.length - inserted} insertions were never placed`);
  call(first, { kind: 'claim', claim: { kind: 'caught-up' } });

  // The drain phase: a new incarnation resumes after the watermark and finds the end.
  phase = 'drain';
  const second: Actor = { worker: 'w1', incarnation: 2 };
  const end = positionOf(stream.at(-1) as SourceEvent);
  life(second);
  call(second, { kind: 'lease' }, { kind: 'generation', generation: 2 });
  call(second, { kind: 'load' }, { kind: 'state', state: { watermark: { binding: label, value: stored }, anchor: { binding: label, token: null, watermark: stored }, outbox: [] } });
  call(second, { kind: 'fetch', request: { resume: { kind: 'after', position: end }, limit: PAGE_SIZE } }, { kind: 'page', page: { events: [], next: null, head } });
  call(second, { kind: 'claim', claim: { kind: 'caught-up' } });

  return {
    // The page size and the lease's time to live, as every world's header carries them: the
    // checker then replays each page's slice and each lease grant, as it does for a real run.
    // A lease of one step lets the drain incarnation take over at once.
    header: {
      version: HISTORY_VERSION,
      initial,
      binding,
      contract: { kind: 'insertion-stable' },
      delivery: 'at-least-once',
      poison: [],
      pageSize: PAGE_SIZE,
      leaseTtlSteps: 1,
      resumes: ['after'],
      faults: [],
      mutations,
      rebind: null,
      workers: 1,
      consumer: 'whitebox',
    },
    steps,
  };
}

/**
 * The same history with one effect taken out: the emit `fromEnd` places from the end of the
 * stream (so that, with mutations, it is an inserted event's). A checker that
 * really reads the history must fail it; the bench runs this before trusting a pass.
 */
export function withoutOneEffect(history: History, fromEnd = 3): History {
  const emits = history.steps.flatMap((s, i) => (s.kind === 'call' && s.call.kind === 'emit' ? [i] : []));
  const drop = emits[emits.length - fromEnd];
  if (drop === undefined) throw new Error('synthetic history: no effect to take out');
  return { header: history.header, steps: history.steps.filter((_, i) => i !== drop).map((s, seq) => ({ ...s, seq })) };
}

/** How many steps are calls, and how many of those the history holds in all. */
export function countCalls(history: History): { calls: number; steps: number } {
  let calls = 0;
  for (const s of history.steps) if (s.kind === 'call') calls++;
  return { calls, steps: history.steps.length };
}
