import { CONTRACT_KINDS, DELIVERY_ORDERS, OFFERED_RESUMES } from '../model/api.js';
import { FILTER_KINDS, type Binding, type Filter } from '../model/binding.js';
import { MUTATIONS } from '../model/history.js';
import { FAULTABLE_CALLS, PLACEABLE_CALLS } from '../model/plan.js';
import { TOKEN_KINDS } from '../model/tokens.js';
import { FAULT_KINDS, isPageQuirk, NEWEST_FIRST_QUIRKS, type Placement, type Plan } from './plan.js';

/** A plan or binding that cannot be run; `field` names the offending part, e.g. `events[3].key`. */
export class PlanError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`invalid plan: ${field} ${problem}`);
    this.name = 'PlanError';
  }
}

// The vocabulary is model/'s, read as plain strings: a plan may hold anything.
const RESUMES: readonly string[] = OFFERED_RESUMES;
const CONTRACTS: readonly string[] = CONTRACT_KINDS;
const ORDERS: readonly string[] = DELIVERY_ORDERS;
const FAULT_CALLS: readonly string[] = FAULTABLE_CALLS;
const PLACES: readonly string[] = PLACEABLE_CALLS;
const CHANGES: readonly string[] = MUTATIONS;
const FAULT_LABELS: readonly string[] = FAULT_KINDS;

/** Throws a PlanError naming the first field that is wrong; returns the plan otherwise. */
export function validatePlan(plan: Plan): Plan {
  need(isObject(plan), 'plan', 'must be an object');
  validateBinding(plan.binding);
  need(Array.isArray(plan.events), 'events', 'must be an array');
  const ids = new Set<string>();
  // Every world run is validated first, and a plan holds dozens of events: the fields'
  // names and the problems are written out only for a field that is wrong.
  const width = plan.binding.ordering.length;
  for (let i = 0; i < plan.events.length; i++) {
    if (!(i in plan.events)) continue; // skipped, as forEach did
    const e = plan.events[i] as Plan['events'][number];
    if (!isObject(e)) fail(`events[${i}]`, 'must be an object');
    if (!(typeof e.id === 'string' && e.id.length > 0)) fail(`events[${i}].id`, 'must be a non-empty string');
    if (ids.has(e.id)) fail(`events[${i}].id`, `repeats the id ${JSON.stringify(e.id)}; ids must be unique (R1)`);
    ids.add(e.id);
    if (!(Number.isInteger(e.version) && e.version >= 1)) fail(`events[${i}].version`, 'must be an integer of at least 1');
    if (!(Array.isArray(e.key) && e.key.length === width && e.key.every(Number.isFinite))) fail(`events[${i}].key`, `must hold ${width} finite number(s), one per ordering field`);
    if (!isObject(e.attrs)) fail(`events[${i}].attrs`, 'must be an object');
    if (typeof e.payload !== 'string') fail(`events[${i}].payload`, 'must be a string');
  }
  const { source } = plan;
  need(isObject(source), 'source', 'must be an object');
  need(Number.isInteger(source.pageSize) && source.pageSize >= 1, 'source.pageSize', 'must be a positive integer');
  // Start and token are offered by every source; the list names the others (as a history's header does).
  need(Array.isArray(source.resumes) && source.resumes.every((r) => RESUMES.includes(r)), 'source.resumes', `must list only ${RESUMES.join(', ')} (start and token are always offered)`);
  need(isObject(source.contract) && CONTRACTS.includes(source.contract.kind), 'source.contract.kind', `must be one of ${CONTRACTS.join(', ')}`);
  if (source.contract.kind === 'replay-window') {
    need(Number.isInteger(source.contract.window) && source.contract.window >= 1, 'source.contract.window', 'must be a positive integer');
  }
  need(source.order === undefined || ORDERS.includes(source.order), 'source.order', `must be one of ${ORDERS.join(', ')}`);
  const newestFirst = source.order === 'newest-first';
  // Read from the top down to a bookmark, such an API has no resume form but start and token.
  need(!newestFirst || source.resumes.length === 0, 'source.resumes', 'must be [] for a newest-first source: it resumes only from the start or by token');
  need(source.tokens === undefined || (TOKEN_KINDS as readonly string[]).includes(source.tokens), 'source.tokens', `must be one of ${TOKEN_KINDS.join(', ')}`);
  need(!newestFirst || source.tokens === undefined || source.tokens === 'continuation', 'source.tokens', "must be 'continuation' for a newest-first source");
  need(Array.isArray(plan.faults), 'faults', 'must be an array');
  for (let i = 0; i < plan.faults.length; i++) {
    if (!(i in plan.faults)) continue; // skipped, as forEach did
    const f = plan.faults[i] as Plan['faults'][number];
    if (!FAULT_CALLS.includes(f.call)) fail(`faults[${i}].call`, `must be one of ${FAULT_CALLS.join(', ')}`);
    if (!(f.since === undefined || (Number.isInteger(f.since) && f.since >= 0))) fail(`faults[${i}].since`, 'must be a non-negative integer');
    if (!(f.since === undefined || f.after === undefined)) fail(`faults[${i}].since`, 'cannot go with after: a fault counts from an event or from an effect, not both');
    if (!(Number.isInteger(f.nth) && f.nth >= 0)) fail(`faults[${i}].nth`, 'must be a non-negative integer');
    if (!FAULT_LABELS.includes(f.kind)) fail(`faults[${i}].kind`, `must be one of ${FAULT_LABELS.join(', ')}`);
    if (!(!isPageQuirk(f.kind) || f.call === 'fetch')) fail(`faults[${i}].kind`, `is a page quirk, so its call must be fetch, not ${f.call}`);
    if (!(!newestFirst || !isPageQuirk(f.kind) || NEWEST_FIRST_QUIRKS.includes(f.kind))) {
      fail(`faults[${i}].kind`, `is a ${f.kind} page, which a newest-first source never serves (it serves ${NEWEST_FIRST_QUIRKS.join(', ')})`);
    }
    if (!isAfter(f.after, ids)) fail(`faults[${i}].after`, AFTER);
  }
  need(Number.isInteger(plan.workers) && plan.workers >= 1 && plan.workers <= 8, 'workers', 'must be an integer from 1 to 8');
  need(Number.isInteger(plan.leaseTtlSteps) && plan.leaseTtlSteps >= 1, 'leaseTtlSteps', 'must be a positive integer');
  need(Array.isArray(plan.mutations), 'mutations', 'must be an array');
  for (let i = 0; i < plan.mutations.length; i++) {
    if (!(i in plan.mutations)) continue; // skipped, as forEach did
    const m = plan.mutations[i] as Plan['mutations'][number];
    if (!CHANGES.includes(m.kind)) fail(`mutations[${i}].kind`, `must be one of ${CHANGES.join(', ')}`);
    validatePlacement(m.before, i, ids);
    for (const field of ['target', 'back'] as const) {
      if (!(Number.isInteger(m[field]) && m[field] >= 0)) fail(`mutations[${i}].${field}`, 'must be a non-negative integer');
    }
  }
  need(Array.isArray(plan.poison) && plan.poison.every((id) => typeof id === 'string'), 'poison', 'must be an array of event ids');
  if (plan.rebind !== null) {
    need(isObject(plan.rebind), 'rebind', 'must be null or { before, binding }');
    validatePlacement(plan.rebind.before, 'rebind', ids);
    try {
      validateBinding(plan.rebind.binding);
    } catch (error) {
      if (error instanceof PlanError) throw new PlanError(`rebind.${error.field}`, error.message.replace(`invalid plan: ${error.field} `, ''));
      throw error;
    }
    need(plan.rebind.binding.ordering.length === plan.binding.ordering.length, 'rebind.binding.ordering', 'must name as many ordering fields as binding.ordering');
  }
  need(Array.isArray(plan.schedule) && plan.schedule.every((c) => Number.isInteger(c) && c >= 0), 'schedule', 'must be non-negative integers');
  need(typeof plan.seed === 'string', 'seed', 'must be a string');
  need(isObject(plan.budget), 'budget', 'must be an object');
  for (const phase of ['adversity', 'drain'] as const) {
    need(Number.isInteger(plan.budget[phase]) && plan.budget[phase] >= 1, `budget.${phase}`, 'must be a positive integer');
  }
  return plan;
}

export function validateBinding(binding: Binding): Binding {
  need(isObject(binding), 'binding', 'must be an object');
  need(typeof binding.scope === 'string' && binding.scope.length > 0, 'binding.scope', 'must be a non-empty string');
  need(
    Array.isArray(binding.ordering) && binding.ordering.length > 0 && binding.ordering.every((o) => typeof o === 'string'),
    'binding.ordering',
    'must name at least one ordering field',
  );
  need(binding.upTo === null || Number.isFinite(binding.upTo), 'binding.upTo', 'must be null or a finite number');
  validateFilter(binding.filter);
  return binding;
}

function validateFilter(filter: Filter): void {
  need(isObject(filter), 'binding.filter', 'must be an object');
  switch (filter.kind) {
    case 'all':
      return;
    case 'equals':
      need(typeof filter.attr === 'string', 'binding.filter.attr', 'must be a string');
      need(['string', 'number', 'boolean'].includes(typeof filter.value), 'binding.filter.value', 'must be a string, number or boolean');
      return;
    case 'in':
      need(typeof filter.attr === 'string', 'binding.filter.attr', 'must be a string');
      need(Array.isArray(filter.values), 'binding.filter.values', 'must be an array');
      return;
    default:
      throw new PlanError('binding.filter.kind', `must be one of ${FILTER_KINDS.join(', ')}, got ${JSON.stringify((filter as { kind: unknown }).kind)}`);
  }
}

/** A placement, at `mutations[i].before` or `rebind.before`: the field's name is written out only when it is wrong. */
function validatePlacement(p: Placement, of: number | 'rebind', ids: ReadonlySet<string>): void {
  const field = (): string => (of === 'rebind' ? 'rebind.before' : `mutations[${of}].before`);
  if (!isObject(p)) fail(field(), 'must be { call, nth }');
  if (!PLACES.includes(p.call)) fail(`${field()}.call`, `must be one of ${PLACES.join(', ')}`);
  if (!(Number.isInteger(p.nth) && p.nth >= 0)) fail(`${field()}.nth`, 'must be a non-negative integer');
  if (!isAfter(p.after, ids)) fail(`${field()}.after`, AFTER);
}

/** An address tied to an event must name one of the plan's events, or it could never fire. */
function isAfter(after: unknown, ids: ReadonlySet<string>): boolean {
  return after === undefined || (typeof after === 'string' && ids.has(after));
}

const AFTER = "must be the id of one of the plan's events";

function fail(field: string, problem: string): never {
  throw new PlanError(field, problem);
}

function need(condition: boolean, field: string, problem: string): asserts condition {
  if (!condition) throw new PlanError(field, problem);
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
