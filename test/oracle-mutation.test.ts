/**
 * The oracle's own mutation test. Histories recorded from the reference consumer over
 * generated worlds all pass; each is then changed by one lie that is harmful by
 * construction, and the lied-about history must never be judged pass:
 *
 * - the consumer's failures (verdict `fail`, with the anomaly the lie makes): every effect of
 *   one eligible event removed, a committed watermark lowered below the highest, an
 *   effect's payload changed;
 * - the world's lies (verdict `error`, a harness error): a served page's contents changed,
 *   a call's `applied` flipped, a call's label taken off or put on.
 *
 * Ground truth knows the plan from the header (which call each fault and page quirk was put
 * at), so every lie of the world is caught as one, whatever label the call carries: there is
 * no case where the record alone decides. The counts per lie and case are printed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnomalyKind } from '../model/anomalies.js';
import { canonicalJson } from '../model/binding.js';
import { check, type CheckResult } from '../model/checker.js';
import { compareCuts, readCut, type Cut } from '../model/cut.js';
import { refKey, type EventRef } from '../model/event.js';
import type { Call, CallStep, History, HistoryHeader, MutationStep, Step, StoreOp } from '../model/history.js';
import type { Address, PlannedFault, PlannedMutation } from '../model/plan.js';
import { Truth } from '../model/truth.js';
import { planArb } from '../scenarios/arbitraries.js';
import type { Consumer } from '../src/adapter/consumer.js';
import { execute } from '../src/run/execute.js';
import { referenceConsumer } from '../src/selftest/reference.js';

/** Fixed, so that the same histories are lied about on every run. */
const SEED = 20260520;
const WORLDS = 300;
/** Instances of one lie per history at most: the first, a middle and the last candidate. */
const PER_HISTORY = 3;

const VARIANTS: readonly Consumer[] = [
  referenceConsumer(),
  referenceConsumer({ delivery: 'exactly-once' }),
  referenceConsumer({ delivery: 'outbox' }),
  referenceConsumer({ bookmark: 'cursor' }),
  referenceConsumer({ concurrency: 3 }),
];

interface Lie {
  readonly history: History;
  /** The case within the lie kind, for the counts and the known gaps. */
  readonly case: string;
}

type LieKind = 'drop-effects' | 'lower-watermark' | 'change-payload' | 'page-payload' | 'page-drop' | 'applied-flip' | 'label-flip';

/** The anomalies a lie of the consumer must be caught with (any one of them). */
const CAUGHT_BY: Partial<Record<LieKind, readonly AnomalyKind[]>> = {
  'drop-effects': ['omission', 'premature-watermark'],
  'lower-watermark': ['watermark-regression'],
  'change-payload': ['divergent-duplicate'],
};
const HARNESS: readonly LieKind[] = ['page-payload', 'page-drop', 'applied-flip', 'label-flip'];

describe('the oracle judges no harmful lie a pass', () => {
  it(`lies told about ${WORLDS} reference histories are all caught`, async () => {
    const recorded: History[] = [];
    const plans = fc.sample(planArb(), { seed: SEED, numRuns: WORLDS });
    for (const [i, plan] of plans.entries()) {
      const run = await execute(plan, VARIANTS[i % VARIANTS.length] as Consumer);
      expect(run.result.verdict.status, `world ${i}: the reference itself must pass`).toBe('pass');
      recorded.push(run.history);
    }

    const tally = new Map<LieKind, Map<string, number>>();
    const count = (table: Map<string, Map<string, number>>, row: string, what: string): void => {
      const cells = table.get(row) ?? new Map<string, number>();
      cells.set(what, (cells.get(what) ?? 0) + 1);
      table.set(row, cells);
    };
    const wrong: string[] = [];
    /** Per lie kind and case, the verdicts. */
    const cases = new Map<string, Map<string, number>>();
    let total = 0;
    for (const [i, history] of recorded.entries()) {
      for (const [kind, lies] of Object.entries(liesAbout(history, i)) as [LieKind, Lie[]][]) {
        for (const lie of lies) {
          total++;
          const result = check(lie.history);
          const status = result.verdict.status;
          count(tally as Map<string, Map<string, number>>, kind, status);
          const where = `world ${i}, ${kind} (${lie.case})`;
          const wanted = CAUGHT_BY[kind];
          if (wanted !== undefined) {
            if (status !== 'fail' || !result.verdict.anomalies.some((a) => wanted.includes(a.kind))) wrong.push(`${where}: ${verdictText(result)}`);
          } else if (status !== 'error') wrong.push(`${where}: ${verdictText(result)}`);
          count(cases, `${kind}: ${lie.case}`, status);
        }
      }
    }

    const cells = (row: Map<string, number>): string => [...row.entries()].map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(
      [
        `oracle mutation test: ${total} lied-about histories from ${WORLDS} reference histories`,
        ...[...tally.entries()].map(([kind, row]) => `  ${kind.padEnd(16)} ${cells(row)}`),
        'by case:',
        ...[...cases.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([what, row]) => `  ${what}: ${cells(row)}`),
      ].join('\n'),
    );
    expect(wrong).toEqual([]);
    // Every lie kind was told, each many times: a lie never told proves nothing.
    for (const kind of [...Object.keys(CAUGHT_BY), ...HARNESS]) expect(tally.get(kind as LieKind)?.size ?? 0, kind).toBeGreaterThan(0);
    expect(total).toBeGreaterThan(3000);
  });
});

function verdictText(result: CheckResult): string {
  const v = result.verdict;
  return v.status === 'fail' ? `fail with ${v.anomalies.map((a) => a.kind).join(', ')}` : v.status === 'pass' ? 'pass' : `${v.status}: ${v.reason}`;
}

/** Every lie that applies to the `nth` history, a few instances of each. */
function liesAbout(history: History, nth: number): Record<LieKind, Lie[]> {
  return {
    'drop-effects': dropEffects(history).flatMap((l) => replanned(l) ?? []),
    'lower-watermark': lowerWatermark(history).flatMap((l) => replanned(l) ?? []),
    'change-payload': changePayload(history).flatMap((l) => replanned(l) ?? []),
    'page-payload': pagePayload(history),
    'page-drop': pageDrop(history),
    'applied-flip': flipApplied(history, nth),
    'label-flip': flipLabel(history),
  };
}

/**
 * A lie about the consumer's calls, told as a world that recorded it would: a call taken out
 * or changed moves the plan's addresses (they count calls by kind, by the events they name,
 * by effect), so the header's plan is written again, each fault and quirk addressed to the
 * very call it fired at in the true history (by its label), none anywhere else. Without it
 * the plan's faults would land on other calls, and the lie would be the world's contradiction
 * rather than the consumer's failure.
 */
function replanned(lie: Lie): Lie | null {
  const counts = new Map<string, number>();
  const faults: PlannedFault[] = [];
  for (const s of lie.history.steps) {
    if (!isCall(s) || s.call.kind === 'claim' || s.call.kind === 'malformed') continue;
    const nth = counts.get(s.call.kind) ?? 0;
    counts.set(s.call.kind, nth + 1);
    if (s.fault !== undefined) faults.push({ call: s.call.kind, nth, kind: s.fault });
  }
  // The changes and the rebind, each placed before the adversity call it came before (every
  // call counted there, claims included), as the world places them.
  const placed = new Map<string, number>();
  const mutations: PlannedMutation[] = [];
  let waiting: MutationStep[] = [];
  let rebind: HistoryHeader['rebind'] = null;
  const place = (call: Call): Address | null => {
    const nth = placed.get(call.kind) ?? 0;
    placed.set(call.kind, nth + 1);
    if (call.kind === 'malformed') return waiting.length > 0 ? null : { call: 'claim', nth: -1 };
    const before: Address = { call: call.kind, nth };
    for (const m of waiting) mutations.push({ before, kind: m.mutation, target: 0, back: 0 });
    waiting = [];
    return before;
  };
  for (const s of lie.history.steps) {
    if (s.phase !== 'adversity') continue;
    if (s.kind === 'mutation') waiting.push(s);
    else if (s.kind === 'call' && place(s.call) === null) return null;
    else if (s.kind === 'rebind') {
      const before = place(s.call);
      if (before === null) return null;
      rebind = { before, binding: s.binding };
    }
  }
  // A change the lie left with no call after it can be placed nowhere: no world records that lie.
  if (waiting.length > 0) return null;
  return { ...lie, history: { header: { ...lie.history.header, faults, mutations, rebind }, steps: lie.history.steps } };
}

/** The first, a middle and the last of the candidates. */
function spread<T>(xs: readonly T[]): T[] {
  if (xs.length <= PER_HISTORY) return [...xs];
  return [xs[0] as T, xs[Math.floor(xs.length / 2)] as T, xs[xs.length - 1] as T];
}

function withSteps(history: History, change: (steps: Step[]) => void): History {
  const steps = [...history.steps];
  change(steps);
  return { header: history.header, steps };
}

function sameRef(a: EventRef, b: EventRef): boolean {
  return a.id === b.id && a.version === b.version;
}

function isCall(step: Step): step is CallStep {
  return step.kind === 'call';
}

/** Ground truth at the end of the history, replayed by the model. */
function finalTruth(history: History): Truth {
  const truth = new Truth(history.header);
  for (const step of history.steps) truth.advance(step);
  return truth;
}

// -------------------------------------------------------------------------------------------
// The consumer's lies

/**
 * Every effect of one eligible, handled, non-poison event version removed. Harmful only where
 * the consumer said it was done: when the drain ends in a caught-up claim. (On a source that
 * promises nothing the reference commits no watermark and fails visibly: it vouches for no
 * event, so an event it never handled is no lie about its work.) An emit is not cut out of
 * the history but recorded as a call the world could not read: the step keeps its place,
 * which ground truth reads as the world's clock (lease expiry), and no effect happened.
 * A commit's effect op is dropped from the transaction; an outbox handoff stays (it is in the
 * store, which later loads show), so the event has an outcome but no effect.
 */
function dropEffects(history: History): Lie[] {
  const end = history.steps.filter((s) => s.phase === 'drain').at(-1);
  if (!(end !== undefined && isCall(end) && end.call.kind === 'claim' && end.call.claim.kind === 'caught-up' && end.applied)) return [];
  const truth = finalTruth(history);
  const poison = new Set(history.header.poison);
  // An event whose effect call crashed its caller is left out: without that call the crash
  // has no call to happen at, and an incarnation that died at it would live on.
  const crashed = (e: EventRef): boolean =>
    history.steps.some((s) => isCall(s) && (s.outcome.kind === 'crash-after' || s.outcome.kind === 'crash-before') && ((s.call.kind === 'emit' && sameRef(s.call.event, e)) || (s.call.kind === 'commit' && s.call.ops.some((op) => op.op === 'effect' && sameRef(op.event, e)))));
  const handled = truth.eligible().filter((e) => !poison.has(e.id) && truth.handled(e) && !crashed(e));
  return spread(handled).map((e) => ({
    case: history.header.delivery,
    history: withSteps(history, (steps) => {
      for (const [i, s] of steps.entries()) {
        if (!isCall(s)) continue;
        if (s.call.kind === 'emit' && sameRef(s.call.event, e)) {
          steps[i] = { ...withoutResult(s), call: { kind: 'malformed', method: 'emit', problem: 'removed by the oracle mutation test' }, outcome: { kind: 'error', code: 'bad-request' }, applied: false };
        } else if (s.call.kind === 'commit' && s.call.ops.some((op) => op.op === 'effect' && sameRef(op.event, e))) {
          steps[i] = { ...s, call: { ...s.call, ops: s.call.ops.filter((op) => !(op.op === 'effect' && sameRef(op.event, e))) } };
        }
      }
    }),
  }));
}

function withoutResult(s: CallStep): CallStep {
  const { result: _result, fault: _fault, ...rest } = s;
  return rest;
}

interface Write {
  readonly index: number;
  readonly op: number;
  readonly binding: string;
  readonly value: unknown;
  readonly cut: Cut;
}

/** Every applied watermark write of the history, in order. */
function writesOf(history: History): Write[] {
  const arity = history.header.binding.ordering.length;
  const writes: Write[] = [];
  let currentArity = arity;
  for (const [index, s] of history.steps.entries()) {
    if (s.kind === 'rebind') currentArity = s.binding.ordering.length;
    if (!isCall(s) || s.call.kind !== 'commit' || !s.applied) continue;
    for (const [op, o] of s.call.ops.entries()) {
      if (o.op !== 'watermark') continue;
      const reading = readCut(o.value, currentArity);
      if ('cut' in reading) writes.push({ index, op, binding: o.binding, value: o.value, cut: reading.cut });
    }
  }
  return writes;
}

/**
 * A committed watermark lowered below the highest committed before it under its binding: to
 * the first watermark that binding had, when that one is lower, else to null. The lie is
 * kept consistent, as a world that recorded it would be: every later load shows the lowered
 * value, and a compare-and-set that expected the true value expects the lowered one, up to
 * the next write.
 */
function lowerWatermark(history: History): Lie[] {
  const writes = writesOf(history);
  const candidates: { write: Write; lowered: unknown }[] = [];
  for (const [k, w] of writes.entries()) {
    const earlier = writes.slice(0, k).filter((x) => x.binding === w.binding);
    if (earlier.length === 0) continue;
    const highest = earlier.reduce((m, x) => (compareCuts(x.cut, m.cut) > 0 ? x : m));
    const first = earlier[0] as Write;
    const lowered = compareCuts(first.cut, highest.cut) < 0 ? first.value : null;
    const loweredCut = readCut(lowered, history.header.binding.ordering.length);
    if ('cut' in loweredCut && compareCuts(loweredCut.cut, highest.cut) < 0) candidates.push({ write: w, lowered });
  }
  return spread(candidates).map(({ write, lowered }) => ({
    case: lowered === null ? 'to null' : 'to an earlier watermark',
    history: withSteps(history, (steps) => {
      const was = canonicalJson(write.value);
      const step = steps[write.index] as CallStep & { call: { kind: 'commit'; ops: readonly StoreOp[] } };
      steps[write.index] = { ...step, call: { ...step.call, ops: step.call.ops.map((op, j) => (j === write.op && op.op === 'watermark' ? { ...op, value: lowered } : op)) } };
      for (let i = write.index + 1; i < steps.length; i++) {
        const s = steps[i] as Step;
        if (!isCall(s)) continue;
        if (s.call.kind === 'load' && s.result?.kind === 'state' && s.result.state.watermark?.binding === write.binding && canonicalJson(s.result.state.watermark.value) === was) {
          steps[i] = { ...s, result: { kind: 'state', state: { ...s.result.state, watermark: { binding: write.binding, value: lowered } } } };
        }
        if (s.call.kind === 'commit') {
          const ops = s.call.ops.map((op) => (op.op === 'watermark' && op.binding === write.binding && 'expect' in op && canonicalJson(op.expect ?? null) === was ? { ...op, expect: lowered } : op));
          steps[i] = { ...s, call: { ...s.call, ops } };
          if (s.applied && s.call.ops.some((op) => op.op === 'watermark')) break;
        }
      }
    }),
  }));
}

/**
 * One effect's payload changed to content the source never served: the first effect of an
 * event (a first or only delivery), a repeat where there is one, and the last effect. An
 * outbox handoff is in the store, which later loads show, so an outbox consumer's lie is
 * told about the delivery to the sink.
 */
function changePayload(history: History): Lie[] {
  const poison = new Set(history.header.poison);
  const seen = new Set<string>();
  const firsts: { index: number; op: number | null; repeat: boolean }[] = [];
  for (const [index, s] of history.steps.entries()) {
    if (!isCall(s) || !s.applied) continue;
    const effects: { ref: EventRef; op: number | null }[] =
      s.call.kind === 'emit' ? [{ ref: s.call.event, op: null }] : s.call.kind === 'commit' ? s.call.ops.flatMap((o, op) => (o.op === 'effect' ? [{ ref: o.event, op }] : [])) : [];
    for (const e of effects) {
      if (poison.has(e.ref.id)) continue;
      const key = refKey(e.ref);
      firsts.push({ index, op: e.op, repeat: seen.has(key) });
      seen.add(key);
    }
  }
  const chosen = [firsts.find((f) => !f.repeat), firsts.find((f) => f.repeat), firsts.at(-1)].filter((f, i, all): f is (typeof firsts)[number] => f !== undefined && all.indexOf(f) === i);
  return chosen.map((f) => ({
    case: f.repeat ? 'a repeat' : 'a first effect',
    history: withSteps(history, (steps) => {
      const s = steps[f.index] as CallStep;
      if (s.call.kind === 'emit') steps[f.index] = { ...s, call: { ...s.call, payload: `${s.call.payload} (changed)` } };
      else if (s.call.kind === 'commit') {
        steps[f.index] = { ...s, call: { ...s.call, ops: s.call.ops.map((o, j) => (j === f.op && o.op === 'effect' ? { ...o, payload: `${o.payload} (changed)` } : o)) } };
      }
    }),
  }));
}

// -------------------------------------------------------------------------------------------
// The world's lies

/** Fetches whose recorded page carries events. */
function pagesOf(history: History): number[] {
  return history.steps.flatMap((s, i) => (isCall(s) && s.call.kind === 'fetch' && s.result?.kind === 'page' && s.result.page.events.length > 0 ? [i] : []));
}

function faultOf(s: CallStep): string {
  return s.fault === undefined ? 'no fault' : `fault ${s.fault}`;
}

/** One served event's payload changed: what the source holds is not what the page says. */
function pagePayload(history: History): Lie[] {
  return spread(pagesOf(history)).map((index) => {
    const s = history.steps[index] as CallStep;
    return {
      case: faultOf(s),
      history: withSteps(history, (steps) => {
        if (s.result?.kind !== 'page') return;
        const [first, ...rest] = s.result.page.events;
        if (first === undefined) return;
        steps[index] = { ...s, result: { kind: 'page', page: { ...s.result.page, events: [{ ...first, payload: `${first.payload} (changed)` }, ...rest] } } };
      }),
    };
  });
}

/** One served event dropped from a page. */
function pageDrop(history: History): Lie[] {
  return spread(pagesOf(history)).map((index) => {
    const s = history.steps[index] as CallStep;
    return {
      case: faultOf(s),
      history: withSteps(history, (steps) => {
        if (s.result?.kind !== 'page') return;
        steps[index] = { ...s, result: { kind: 'page', page: { ...s.result.page, events: s.result.page.events.slice(1) } } };
      }),
    };
  });
}

/**
 * A call's `applied` flipped: per history, the first call of a few of its cases (kind,
 * outcome and `applied`), a different few from one history to the next, which over hundreds
 * of histories is every case many times.
 */
function flipApplied(history: History, nth: number): Lie[] {
  const firstOf = new Map<string, number>();
  for (const [i, s] of history.steps.entries()) {
    if (!isCall(s)) continue;
    const outcome = s.outcome.kind === 'error' ? `error ${s.outcome.code}` : s.outcome.kind;
    const what = `${s.call.kind} ${outcome} ${s.applied ? 'applied' : 'not applied'}`;
    if (!firstOf.has(what)) firstOf.set(what, i);
  }
  const cases = [...firstOf.entries()];
  const picked = cases.length <= PER_HISTORY ? cases : Array.from({ length: PER_HISTORY }, (_, k) => cases[(nth * PER_HISTORY + k) % cases.length] as [string, number]);
  return picked.map(([what, index]) => ({
    case: what,
    history: withSteps(history, (steps) => {
      const s = steps[index] as CallStep;
      steps[index] = { ...s, applied: !s.applied };
    }),
  }));
}

/**
 * A call's label changed: taken off a call where a fault or quirk fired (the first, a middle
 * and the last of them), and put on the first plain fetch that a quirk could have acted on:
 * `short` on a page of two events or more.
 */
function flipLabel(history: History): Lie[] {
  const labelled = history.steps.flatMap((s, i) => (isCall(s) && s.fault !== undefined ? [i] : []));
  const lies: Lie[] = spread(labelled).map((index) => {
    const s = history.steps[index] as CallStep;
    return { case: `${s.fault} taken off`, history: withSteps(history, (steps) => (steps[index] = withoutFault(s))) };
  });
  const plain = history.steps.findIndex((s) => isCall(s) && s.fault === undefined && s.call.kind === 'fetch' && s.result?.kind === 'page' && s.result.page.events.length > 1);
  if (plain >= 0) lies.push({ case: 'short put on', history: withSteps(history, (steps) => (steps[plain] = { ...(steps[plain] as CallStep), fault: 'short' })) });
  return lies;
}

function withoutFault(s: CallStep): CallStep {
  const { fault: _fault, ...rest } = s;
  return rest;
}
