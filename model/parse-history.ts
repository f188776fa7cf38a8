import { CONTRACT_KINDS, DELIVERIES, DELIVERY_ORDERS, OFFERED_RESUMES, RESUME_KINDS, STORE_OP_KINDS } from './api.js';
import { FILTER_KINDS } from './binding.js';
import {
  CONSUMER_KINDS,
  CALL_FAULTS,
  CALL_KINDS,
  HISTORY_VERSION,
  PAGE_QUIRKS,
  CLAIM_KINDS,
  FAULT_LABELS,
  LIFE_EVENTS,
  MUTATIONS,
  OUTCOME_KINDS,
  PHASES,
  REFUSALS,
  RESULT_KINDS,
  STEP_KINDS,
  type CallKind,
  type CallResult,
  type History,
} from './history.js';
import { isPosition } from './order.js';
import { FAULTABLE_CALLS, PLACEABLE_CALLS } from './plan.js';
import { TOKEN_KINDS } from './tokens.js';

/**
 * A history is validated before it is judged. The checker reads a history as the types of
 * model/history.ts say it is; a history read from a file, or recorded by another tool, may
 * be anything. A field of the wrong type would otherwise throw a TypeError deep in the
 * replay, or worse, pass: an event version `"1"` is not version 1, a fractional page limit
 * makes ground truth contradict itself, and a missing page size or an unknown fault label
 * would quietly switch a check off. So every field is checked, in one pass, and a problem
 * names its path: `steps[12].call.request.limit: an integer >= 1, got 1.5`.
 *
 * What is checked is the whole shape: the header (its format version first, then events,
 * binding, contract, delivery, poison, page size, lease time to live, and the plan: resume
 * forms, faults, changes to the source), every step kind, call kind, outcome kind, result
 * kind, store operation and fault label, positions and keys, and integers where integers
 * are meant. The vocabularies are the lists model/ declares beside its types (STEP_KINDS,
 * CALL_KINDS, FAULT_LABELS, ...), never spelt out here again. Unknown extra fields are
 * allowed: the history of a later version of tidemark may carry more.
 *
 * Arguments are recorded as the consumer gave them. Where the world lets a value through
 * (a watermark's value, an anchor's token, a dead letter's reason: the consumer's own data)
 * this does too; and a page request the source refused or never ran (`error`,
 * `crash-before`) may carry any limit and resume fields, since the consumer wrote them and
 * the refusal is the point. A request the source served has the shape it must have.
 *
 * Cost: one linear pass, allocating nothing per step, for a valid history. One with a
 * problem is walked again, keeping the path as a stack of segments, spelt out for each problem.
 */
export function parseHistory(value: unknown): History {
  // Nearly every history is valid: the first walk only finds whether anything is wrong, and
  // keeps no path (keeping it was a third of the walk's cost). The walk decides from the value
  // alone, never from the path, so a second walk over the same value finds the same
  // problems, and that one names where each is.
  if (walkOver(value, new Walk(false))) return value as History;
  const walk = new Walk(true);
  walkOver(value, walk);
  throw new HistoryError(walk.problems, walk.cut);
}

/** Walks a history; says whether it found nothing wrong. */
function walkOver(value: unknown, walk: Walk): boolean {
  try {
    history(walk, value);
  } catch (error) {
    if (error instanceof Enough || error instanceof Found) return false;
    throw error;
  }
  return walk.problems.length === 0;
}

/** One thing wrong with a history: where, what was expected there, and what was found. */
export interface HistoryProblem {
  /** Like `steps[12].call.request.limit`; empty for the history itself. */
  readonly path: string;
  /** Like `an integer >= 1`. */
  readonly expected: string;
  /** The value found, shortened (`1.5`, `"1"`), or `missing`. */
  readonly found: string;
}

/** A history that cannot be judged: the problems found, the first first. */
export class HistoryError extends Error {
  override name = 'HistoryError';
  /** The first problem's path. */
  readonly path: string;

  constructor(
    readonly problems: readonly HistoryProblem[],
    /** True when the walk stopped at MAX_PROBLEMS: there may be more. */
    readonly more: boolean,
  ) {
    const lines = problems.map(describeProblem);
    super(`not a valid history: ${lines.join('; ')}${more ? '; (stopped there: there may be more)' : ''}`);
    this.path = problems[0]?.path ?? '';
  }
}

export function describeProblem(p: HistoryProblem): string {
  return `${p.path === '' ? 'the history' : p.path}: ${p.expected}, ${p.found === MISSING ? 'missing' : `got ${p.found}`}`;
}

/** How many problems are listed before the walk stops: a history wrong throughout would list a million. */
export const MAX_PROBLEMS = 10;

const MISSING = 'missing';

// ---------------------------------------------------------------------------------------------
// The walk

/** Thrown to stop the walk once MAX_PROBLEMS are found. */
class Enough {}

/** Thrown to stop a walk that keeps no path at its first problem: a second walk names them. */
class Found {}

type Segment = string | number;
type Json = Readonly<Record<string, unknown>>;

class Walk {
  /** Where the walk is: object keys and array indexes from the history down, when `paths` keeps them. */
  private readonly at: Segment[] = [];
  readonly problems: HistoryProblem[] = [];
  cut = false;

  /** Whether the walk keeps its path and lists problems; without, it stops at the first. */
  constructor(private readonly paths: boolean) {}

  in(segment: Segment): void {
    if (this.paths) this.at.push(segment);
  }

  out(): void {
    if (this.paths) this.at.pop();
  }

  /** Records a problem at the current path, or at its `field` when given. */
  problem(field: Segment | null, expected: string, value: unknown): void {
    if (!this.paths) throw new Found();
    let path = '';
    for (const s of field === null ? this.at : [...this.at, field]) path += typeof s === 'number' ? `[${s}]` : path === '' ? s : `.${s}`;
    this.problems.push({ path, expected, found: value === undefined ? MISSING : shown(value) });
    if (this.problems.length >= MAX_PROBLEMS) {
      this.cut = true;
      throw new Enough();
    }
  }
}

/** A short rendering of a bad value; never throws. */
function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return String(value);
}

/** A vocabulary as a set, with how a problem says it: `one of ok, error, ...`. */
class Vocabulary {
  private readonly list: readonly string[];
  readonly expected: string;

  constructor(list: readonly string[]) {
    this.list = [...list];
    this.expected = `one of ${list.join(', ')}`;
  }

  has(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    // A scan of a handful of strings, most of them the very strings the world wrote, beats
    // hashing: a comparison of one string with itself is a pointer compare.
    const list = this.list;
    for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
    return false;
  }
}

const STEPS = new Vocabulary(STEP_KINDS);
const CALLS = new Vocabulary(CALL_KINDS);
const OUTCOMES = new Vocabulary(OUTCOME_KINDS);
const RESULTS = new Vocabulary(RESULT_KINDS);
const FAULTS = new Vocabulary(FAULT_LABELS);
const PHASE = new Vocabulary(PHASES);
const CLAIMS = new Vocabulary(CLAIM_KINDS);
const LIVES = new Vocabulary(LIFE_EVENTS);
const CHANGES = new Vocabulary(MUTATIONS);
const RESUMES = new Vocabulary(RESUME_KINDS);
const OPS = new Vocabulary(STORE_OP_KINDS);
const CONTRACTS = new Vocabulary(CONTRACT_KINDS);
const FILTERS = new Vocabulary(FILTER_KINDS);
const DELIVERY = new Vocabulary(DELIVERIES);
const REFUSAL = new Vocabulary(REFUSALS);
const ORDER = new Vocabulary(DELIVERY_ORDERS);
const TOKENS = new Vocabulary(TOKEN_KINDS);
const CONSUMERS = new Vocabulary(CONSUMER_KINDS);
const STYLES = new Vocabulary(OFFERED_RESUMES);
const FAULTABLE = new Vocabulary(FAULTABLE_CALLS);
const PLACEABLE = new Vocabulary(PLACEABLE_CALLS);
const QUIRKS = new Vocabulary(PAGE_QUIRKS);

/** What each call returns when it records a result: a commit, an emit or a claim returns nothing to read. */
const RESULT_OF: Readonly<Record<CallKind, CallResult['kind']>> = {
  fetch: 'page',
  load: 'state',
  completed: 'flags',
  commit: 'done',
  emit: 'done',
  lease: 'generation',
  claim: 'done',
  malformed: 'done',
};

// ---------------------------------------------------------------------------------------------
// Fields. Each takes a value read by name at its call site (a property read by name is what
// keeps a million steps fast; one read by a computed key is a lookup), records a problem at
// `field` when the value is not what it must be, and says whether it was.

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as an object, or null (with a problem) when it is not one. */
function record(w: Walk, field: Segment, v: unknown, what = 'an object'): Json | null {
  if (isRecord(v)) return v;
  w.problem(field, what, v);
  return null;
}

function list(w: Walk, field: Segment, v: unknown): readonly unknown[] | null {
  if (Array.isArray(v)) return v;
  w.problem(field, 'an array', v);
  return null;
}

function text(w: Walk, field: Segment, v: unknown): void {
  if (typeof v !== 'string') w.problem(field, 'a string', v);
}

function name(w: Walk, field: Segment, v: unknown): void {
  if (typeof v !== 'string' || v === '') w.problem(field, 'a non-empty string', v);
}

function integer(w: Walk, field: Segment, v: unknown, min: number | null): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || (min !== null && v < min)) w.problem(field, min === null ? 'an integer' : `an integer >= ${min}`, v);
}

function finiteOrNull(w: Walk, field: Segment, v: unknown): void {
  if (v !== null && (typeof v !== 'number' || !Number.isFinite(v))) w.problem(field, 'a finite number or null', v);
}

function flag(w: Walk, field: Segment, v: unknown): void {
  if (typeof v !== 'boolean') w.problem(field, 'true or false', v);
}

function member(w: Walk, field: Segment, v: unknown, vocabulary: Vocabulary): boolean {
  if (vocabulary.has(v)) return true;
  w.problem(field, vocabulary.expected, v);
  return false;
}

/** An ordering key: `arity` finite numbers (any number of them when arity is null). */
function key(w: Walk, field: Segment, v: unknown, arity: number | null): void {
  let ok = Array.isArray(v) && (arity === null || v.length === arity);
  if (ok) {
    const k = v as readonly unknown[];
    for (let i = 0; i < k.length; i++) {
      const x = k[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) ok = false;
    }
  }
  if (!ok) w.problem(field, arity === null ? 'an array of finite numbers' : `an array of ${arity} finite number(s), one per ordering field`, v);
}

function attrValue(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

const ATTR = 'a string, a finite number or a boolean';

// ---------------------------------------------------------------------------------------------
// Shapes

function history(w: Walk, value: unknown): void {
  const h = record(w, null as unknown as Segment, value, 'an object { header, steps }');
  if (h === null) return;
  // A history of another format is refused on that alone: its other fields mean other things.
  const version = isRecord(h.header) ? h.header.version : HISTORY_VERSION;
  if (version !== HISTORY_VERSION) {
    w.problem(
      'header.version',
      `${HISTORY_VERSION}, the history format this tidemark judges (format 4 had no key resume that skips, format 3 had no lost fault and reversed every reordered page, format 2 named the lease's time to live leaseTtl, and a history recorded before the header carried the plan has no format: record it again by replaying its seed and path)`,
      version,
    );
    return;
  }
  const arity = header(w, h.header);
  const steps = list(w, 'steps', h.steps);
  if (steps === null) return;
  w.in('steps');
  for (let i = 0; i < steps.length; i++) step(w, i, steps[i], arity);
  w.out();
}

/** Checks the header; returns the binding's number of ordering fields, which every event's key has. */
function header(w: Walk, value: unknown): number | null {
  const o = record(w, 'header', value);
  if (o === null) return null;
  w.in('header');
  const arity = binding(w, 'binding', o.binding);
  const initial = list(w, 'initial', o.initial);
  if (initial !== null) {
    // That each id is held once is for ground truth to say, as it files every event by its id.
    w.in('initial');
    for (let i = 0; i < initial.length; i++) sourceEvent(w, i, initial[i], arity);
    w.out();
  }
  const contract = record(w, 'contract', o.contract);
  if (contract !== null) {
    w.in('contract');
    if (member(w, 'kind', contract.kind, CONTRACTS) && contract.kind === 'replay-window') integer(w, 'window', contract.window, 1);
    w.out();
  }
  member(w, 'delivery', o.delivery, DELIVERY);
  const poison = list(w, 'poison', o.poison);
  if (poison !== null) {
    w.in('poison');
    for (let i = 0; i < poison.length; i++) text(w, i, poison[i]);
    w.out();
  }
  integer(w, 'pageSize', o.pageSize, 1);
  integer(w, 'leaseTtlSteps', o.leaseTtlSteps, 1);
  const resumes = list(w, 'resumes', o.resumes);
  if (resumes !== null) {
    w.in('resumes');
    for (let i = 0; i < resumes.length; i++) member(w, i, resumes[i], STYLES);
    w.out();
  }
  const faults = list(w, 'faults', o.faults);
  if (faults !== null) {
    w.in('faults');
    for (let i = 0; i < faults.length; i++) plannedFault(w, i, faults[i]);
    w.out();
  }
  const mutations = list(w, 'mutations', o.mutations);
  if (mutations !== null) {
    w.in('mutations');
    for (let i = 0; i < mutations.length; i++) plannedMutation(w, i, mutations[i]);
    w.out();
  }
  if (o.rebind !== null) {
    const rebind = record(w, 'rebind', o.rebind, 'null, or the plan\'s rebind { before, binding }');
    if (rebind !== null) {
      w.in('rebind');
      const before = record(w, 'before', rebind.before, 'an address { call, nth }');
      if (before !== null) {
        w.in('before');
        address(w, before, PLACEABLE);
        w.out();
      }
      binding(w, 'binding', rebind.binding);
      w.out();
    }
  }
  integer(w, 'workers', o.workers, 1);
  member(w, 'consumer', o.consumer, CONSUMERS);
  if (o.refusals !== undefined) member(w, 'refusals', o.refusals, REFUSAL);
  if (o.order !== undefined) member(w, 'order', o.order, ORDER);
  if (o.tokens !== undefined) member(w, 'tokens', o.tokens, TOKENS);
  w.out();
  return arity;
}

/** A call boundary of the plan: `{ call, nth, after?, since? }`. */
function address(w: Walk, o: Json, calls: Vocabulary): void {
  member(w, 'call', o.call, calls);
  integer(w, 'nth', o.nth, 0);
  if (o.after !== undefined) text(w, 'after', o.after);
  if (o.since !== undefined) integer(w, 'since', o.since, 0);
}

/** One fault or page quirk of the plan; a page quirk is a fetch's. */
function plannedFault(w: Walk, i: number, value: unknown): void {
  const o = record(w, i, value, 'a fault { call, nth, kind }');
  if (o === null) return;
  w.in(i);
  address(w, o, FAULTABLE);
  if (member(w, 'kind', o.kind, FAULTS) && QUIRKS.has(o.kind) && o.call !== 'fetch') w.problem('kind', `a call fault (${CALL_FAULTS.join(', ')}): a page quirk is put at a fetch`, o.kind);
  w.out();
}

/** One change the plan makes to the source. */
function plannedMutation(w: Walk, i: number, value: unknown): void {
  const o = record(w, i, value, 'a change { before, kind, target, back }');
  if (o === null) return;
  w.in(i);
  const before = record(w, 'before', o.before, 'an address { call, nth }');
  if (before !== null) {
    w.in('before');
    address(w, before, PLACEABLE);
    w.out();
  }
  member(w, 'kind', o.kind, CHANGES);
  integer(w, 'target', o.target, 0);
  integer(w, 'back', o.back, 0);
  w.out();
}

/** Checks a binding; returns its number of ordering fields, or null when it has none to count. */
function binding(w: Walk, field: string, value: unknown): number | null {
  const o = record(w, field, value);
  if (o === null) return null;
  w.in(field);
  name(w, 'scope', o.scope);
  const filter = record(w, 'filter', o.filter);
  if (filter !== null) {
    w.in('filter');
    if (member(w, 'kind', filter.kind, FILTERS) && filter.kind !== 'all') {
      text(w, 'attr', filter.attr);
      if (filter.kind === 'equals' && !attrValue(filter.value)) w.problem('value', ATTR, filter.value);
      if (filter.kind === 'in') {
        const values = list(w, 'values', filter.values);
        if (values !== null) for (let i = 0; i < values.length; i++) if (!attrValue(values[i])) w.problem(`values[${i}]`, ATTR, values[i]);
      }
    }
    w.out();
  }
  let arity: number | null = null;
  const ordering = o.ordering;
  if (Array.isArray(ordering) && ordering.length > 0 && ordering.every((x) => typeof x === 'string')) arity = ordering.length;
  else w.problem('ordering', 'a non-empty array of ordering field names', ordering);
  finiteOrNull(w, 'upTo', o.upTo);
  w.out();
  return arity;
}

/** One version of an event as the source holds it. */
function sourceEvent(w: Walk, field: Segment, value: unknown, arity: number | null): void {
  const o = record(w, field, value, 'an event { id, version, key, attrs, payload }');
  if (o === null) return;
  w.in(field);
  name(w, 'id', o.id);
  integer(w, 'version', o.version, 1);
  key(w, 'key', o.key, arity);
  const attrs = record(w, 'attrs', o.attrs);
  if (attrs !== null) for (const a in attrs) if (!attrValue(attrs[a])) w.problem(`attrs.${a}`, ATTR, attrs[a]);
  text(w, 'payload', o.payload);
  w.out();
}

/** A reference to one event version, as a consumer names it: `{ id, version }`. */
function ref(w: Walk, field: Segment, value: unknown): void {
  const o = record(w, field, value, 'an event reference { id, version }');
  if (o === null) return;
  w.in(field);
  text(w, 'id', o.id);
  integer(w, 'version', o.version, null);
  w.out();
}

function actor(w: Walk, value: unknown): void {
  const o = record(w, 'actor', value);
  if (o === null) return;
  w.in('actor');
  name(w, 'worker', o.worker);
  integer(w, 'incarnation', o.incarnation, 1);
  w.out();
}

function step(w: Walk, i: number, value: unknown, arity: number | null): void {
  const s = record(w, i, value, 'a step { kind, seq, phase, ... }');
  if (s === null) return;
  w.in(i);
  // The sequence number is the step's place: ground truth reads it as the world's clock.
  if (s.seq !== i) w.problem('seq', `${i}, the step's index`, s.seq);
  member(w, 'phase', s.phase, PHASE);
  const kind = s.kind;
  if (member(w, 'kind', kind, STEPS)) {
    switch (kind) {
      case 'call':
        callStep(w, s, arity);
        break;
      case 'life': {
        actor(w, s.actor);
        const e = record(w, 'event', s.event);
        if (e === null) break;
        w.in('event');
        if (member(w, 'kind', e.kind, LIVES)) {
          if (e.kind === 'threw') text(w, 'message', e.message);
          if (e.kind === 'hung' && e.detail !== undefined) text(w, 'detail', e.detail);
        }
        w.out();
        break;
      }
      case 'mutation':
        sourceEvent(w, 'event', s.event, arity);
        member(w, 'mutation', s.mutation, CHANGES);
        break;
      case 'rebind': {
        binding(w, 'binding', s.binding);
        // The call the rebind came before: it died with its worker, so it never ran.
        const c = record(w, 'call', s.call);
        if (c === null) break;
        w.in('call');
        if (member(w, 'kind', c.kind, CALLS)) call(w, c, false);
        w.out();
        break;
      }
      case 'observed': {
        actor(w, s.actor);
        if (s.watermark !== undefined) record(w, 'watermark', s.watermark, 'an object { value }');
        const effects = list(w, 'effects', s.effects);
        if (effects === null) break;
        w.in('effects');
        for (let j = 0; j < effects.length; j++) handedOver(w, j, effects[j], 'an effect { event, payload }');
        w.out();
        break;
      }
    }
  }
  w.out();
}

/** An effect or an outbox entry: `{ event, payload }`. */
function handedOver(w: Walk, field: Segment, value: unknown, what: string): void {
  const o = record(w, field, value, what);
  if (o === null) return;
  w.in(field);
  ref(w, 'event', o.event);
  text(w, 'payload', o.payload);
  w.out();
}

function callStep(w: Walk, s: Json, arity: number | null): void {
  actor(w, s.actor);
  flag(w, 'applied', s.applied);
  // An optional field is asked for with `in` first: reading a property an object lacks costs
  // a lookup and, on objects built by spreads, an allocation, once per step.
  if ('fault' in s && s.fault !== undefined) member(w, 'fault', s.fault, FAULTS);
  const outcome = record(w, 'outcome', s.outcome);
  let ran = true;
  if (outcome !== null) {
    w.in('outcome');
    const kind = outcome.kind;
    if (member(w, 'kind', kind, OUTCOMES)) {
      if (kind === 'error' || kind === 'indefinite') text(w, 'code', outcome.code);
      // The source served the call unless it refused it or the caller died first.
      ran = kind !== 'error' && kind !== 'crash-before';
    }
    w.out();
  }
  const c = record(w, 'call', s.call);
  if (c === null) return;
  w.in('call');
  const known = member(w, 'kind', c.kind, CALLS);
  if (known) call(w, c, ran);
  w.out();
  if (!('result' in s) || s.result === undefined || !known) return;
  const r = record(w, 'result', s.result);
  if (r === null) return;
  w.in('result');
  const expected = RESULT_OF[c.kind as CallKind];
  if (r.kind !== expected) w.problem('kind', `${expected}, what a ${String(c.kind)} returns`, r.kind);
  else result(w, r, arity);
  w.out();
}

function call(w: Walk, c: Json, ran: boolean): void {
  switch (c.kind as CallKind) {
    case 'fetch': {
      const request = record(w, 'request', c.request, 'a request { resume, limit }');
      if (request === null) return;
      w.in('request');
      if (ran) integer(w, 'limit', request.limit, 1);
      const resume = record(w, 'resume', request.resume);
      if (resume !== null) {
        w.in('resume');
        if (member(w, 'kind', resume.kind, RESUMES)) {
          switch (resume.kind) {
            case 'key-gt':
            case 'key-gte':
              // The world refuses a key resume without a key before the source sees it (a malformed call).
              key(w, 'key', resume.key, null);
              if (ran && 'skip' in resume && resume.skip !== undefined) integer(w, 'skip', resume.skip, 0);
              break;
            case 'token':
              if (ran) text(w, 'token', resume.token);
              break;
            case 'after':
              if (ran && !isPosition(resume.position)) w.problem('position', 'a position { key, id }', resume.position);
              break;
            case 'offset':
              if (ran) integer(w, 'offset', resume.offset, 0);
              break;
          }
        }
        w.out();
      }
      w.out();
      return;
    }
    case 'completed': {
      const events = list(w, 'events', c.events);
      if (events === null) return;
      w.in('events');
      for (let i = 0; i < events.length; i++) ref(w, i, events[i]);
      w.out();
      return;
    }
    case 'commit': {
      if (c.fence !== null) integer(w, 'fence', c.fence, null);
      const ops = list(w, 'ops', c.ops);
      if (ops === null) return;
      w.in('ops');
      for (let i = 0; i < ops.length; i++) op(w, i, ops[i]);
      w.out();
      return;
    }
    case 'emit':
      ref(w, 'event', c.event);
      text(w, 'payload', c.payload);
      if ('key' in c && c.key !== undefined && c.key !== null) key(w, 'key', c.key, null);
      return;
    case 'claim': {
      const claim = record(w, 'claim', c.claim);
      if (claim === null) return;
      w.in('claim');
      if (member(w, 'kind', claim.kind, CLAIMS) && claim.kind === 'failed') text(w, 'reason', claim.reason);
      w.out();
      return;
    }
    case 'malformed':
      text(w, 'method', c.method);
      text(w, 'problem', c.problem);
      return;
    case 'load':
    case 'lease':
      return;
  }
}

function op(w: Walk, i: number, value: unknown): void {
  const o = record(w, i, value, 'a store operation { op, ... }');
  if (o === null) return;
  w.in(i);
  const kind = o.op;
  if (member(w, 'op', kind, OPS)) {
    switch (kind) {
      case 'watermark':
      case 'anchor':
        text(w, 'binding', o.binding);
        break;
      case 'effect':
      case 'outbox':
        ref(w, 'event', o.event);
        text(w, 'payload', o.payload);
        break;
      default:
        ref(w, 'event', o.event);
    }
  }
  w.out();
}

function result(w: Walk, r: Json, arity: number | null): void {
  switch (r.kind as CallResult['kind']) {
    case 'page': {
      const page = record(w, 'page', r.page, 'a page { events, next, head }');
      if (page === null) return;
      w.in('page');
      const events = list(w, 'events', page.events);
      if (events !== null) {
        w.in('events');
        for (let i = 0; i < events.length; i++) sourceEvent(w, i, events[i], arity);
        w.out();
      }
      if (page.next !== null && typeof page.next !== 'string') w.problem('next', 'a token (a string) or null', page.next);
      finiteOrNull(w, 'head', page.head);
      w.out();
      return;
    }
    case 'state': {
      const state = record(w, 'state', r.state, 'a state { watermark, anchor, outbox }');
      if (state === null) return;
      w.in('state');
      stored(w, 'watermark', state.watermark);
      stored(w, 'anchor', state.anchor);
      const outbox = list(w, 'outbox', state.outbox);
      if (outbox !== null) {
        w.in('outbox');
        for (let i = 0; i < outbox.length; i++) handedOver(w, i, outbox[i], 'an outbox entry { event, payload }');
        w.out();
      }
      w.out();
      return;
    }
    case 'flags': {
      const flags = list(w, 'flags', r.flags);
      if (flags === null) return;
      w.in('flags');
      for (let i = 0; i < flags.length; i++) flag(w, i, flags[i]);
      w.out();
      return;
    }
    case 'generation':
      integer(w, 'generation', r.generation, 1);
      return;
    case 'done':
      return;
  }
}

/** A stored watermark or anchor as a load answers it: null, or labelled with the binding that wrote it. */
function stored(w: Walk, field: string, value: unknown): void {
  if (value === null) return;
  const o = record(w, field, value, 'null or an object { binding, ... }');
  if (o === null) return;
  w.in(field);
  text(w, 'binding', o.binding);
  w.out();
}
