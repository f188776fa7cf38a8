/**
 * The vocabulary is declared once, in model/ (api.ts, history.ts, plan.ts, binding.ts,
 * tokens.ts), and everything else that names its members is held to it:
 * schema/protocol.schema.json (what a consumer in another language reads), plan validation
 * and the history's parser, and the world's argument checks. A member added to a type and
 * forgotten in the schema, or a list typed a second time that drifts, fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_KINDS, DELIVERIES, DELIVERY_ORDERS, EVENT_OP_KINDS, OFFERED_RESUMES, RESUME_KINDS, STORE_OP_KINDS } from '../model/api.js';
import { FILTER_KINDS } from '../model/binding.js';
import { HISTORY_VERSION, PAGE_QUIRKS } from '../model/history.js';
import { HistoryError, parseHistory } from '../model/parse-history.js';
import { TOKEN_KINDS } from '../model/tokens.js';
import { ev, plan } from '../scenarios/named.js';
import { PlanError, validatePlan } from '../scenarios/validate.js';
import { execute } from '../src/run/execute.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { CONFLICT_CAUSES } from '../src/world/errors.js';

type Node = { readonly [k: string]: any };
const schema = JSON.parse(readFileSync('schema/protocol.schema.json', 'utf8')) as Node;
const defs = schema.$defs as Node;
/** The `const` of each branch of a oneOf, at `field`. */
const consts = (branches: readonly Node[], field: string): unknown[] => branches.map((b) => b.properties[field].const);

describe('schema/protocol.schema.json says what model/ declares', () => {
  it('deliveries, contracts and filters', () => {
    expect(defs.capabilities.properties.delivery.enum).toEqual([...DELIVERIES]);
    expect(defs.capabilities.properties.contracts.items.enum).toEqual([...CONTRACT_KINDS]);
    expect(defs.profile.properties.contracts.items.enum).toEqual([...CONTRACT_KINDS]);
    expect(consts(defs.contract.oneOf, 'kind')).toEqual([...CONTRACT_KINDS]);
    expect(consts(defs.binding.properties.filter.oneOf, 'kind')).toEqual([...FILTER_KINDS]);
  });

  it('resume forms: every kind a request may name, and the ones a source offers besides start and token', () => {
    expect(consts(defs.fetchRequest.properties.resume.oneOf, 'kind')).toEqual([...RESUME_KINDS]);
    expect(defs.profile.properties.resumes.items.enum).toEqual([...OFFERED_RESUMES]);
    expect(defs.sourceInfo.properties.resumes.items.enum).toEqual([...OFFERED_RESUMES]);
  });

  it('what a source offers an incarnation and what a profile declares: order, token kind, page quirks', () => {
    // The offer names an order or a token kind only when it is not the default (src/world/world.ts).
    expect(defs.sourceInfo.properties.order.enum).toEqual(DELIVERY_ORDERS.filter((o) => o !== 'ascending'));
    expect(defs.sourceInfo.properties.tokens.enum).toEqual(TOKEN_KINDS.filter((t) => t !== 'continuation'));
    expect(defs.profile.properties.order.enum).toEqual([...DELIVERY_ORDERS]);
    expect(defs.profile.properties.tokens.enum).toEqual([...TOKEN_KINDS]);
    expect(defs.profile.properties.quirks.items.enum).toEqual([...PAGE_QUIRKS]);
  });

  it('store operations, the ones about an event, and the causes of a conflict', () => {
    expect(consts(defs.storeOp.oneOf, 'op')).toEqual([...STORE_OP_KINDS]);
    expect(defs.storeOp.oneOf.filter((b: Node) => b.required.includes('event')).map((b: Node) => b.properties.op.const)).toEqual([...EVENT_OP_KINDS]);
    expect(defs.error.properties.cause.enum).toEqual([...CONFLICT_CAUSES]);
  });
});

describe('a plan and its history name the same resume forms', () => {
  it('a plan listing token among its resume forms is refused: every source offers it, and the header lists only the others', () => {
    const listed = plan([ev(1), ev(2)], [], { source: { pageSize: 2, resumes: ['token', 'after'], contract: { kind: 'insertion-stable' } } });
    expect(() => validatePlan(listed)).toThrow(PlanError);
    expect(() => validatePlan(listed)).toThrow('source.resumes must list only after, key-gt, key-gte, offset');
  });

  it('every form a plan may offer is one its recorded history may carry', async () => {
    const offered = plan([ev(1), ev(2), ev(3)], [], { source: { pageSize: 2, resumes: [...OFFERED_RESUMES], contract: { kind: 'insertion-stable' } } });
    const run = await execute(validatePlan(offered), referenceConsumer());
    expect(run.history.header.resumes).toEqual([...OFFERED_RESUMES]);
    expect(() => parseHistory(JSON.parse(JSON.stringify(run.history)))).not.toThrow();
  });
});

describe('the history names its units: format 3', () => {
  it('the header says leaseTtlSteps, and a format-2 history (leaseTtl) is refused naming header.version', async () => {
    const run = await execute(plan([ev(1)], []), referenceConsumer());
    const header = run.history.header as unknown as Node;
    expect([header.version, typeof header.leaseTtlSteps, 'leaseTtl' in header]).toEqual([HISTORY_VERSION, 'number', false]);
    expect(HISTORY_VERSION).toBe(5);
    const { leaseTtlSteps, ...rest } = header;
    const old = { ...run.history, header: { ...rest, version: 2, leaseTtl: leaseTtlSteps } };
    let error: unknown;
    try {
      parseHistory(old);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HistoryError);
    expect((error as HistoryError).path).toBe('header.version');
    expect((error as HistoryError).message).toContain("format 2 named the lease's time to live leaseTtl");
  });
});
