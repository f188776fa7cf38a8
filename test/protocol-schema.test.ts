import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkKeywords, explainProblem, protocolConforms, protocolProblem, protocolSchema } from '../src/adapter/process/schema.js';
import { SEED } from './support.js';

/**
 * schema/protocol.schema.json against docs/protocol.md and against the check the bridge
 * runs: every message of the documented exchanges conforms, and broken ones are refused
 * naming the field.
 */
const doc = readFileSync('docs/protocol.md', 'utf8');
/** The `C>` (consumer) and `H>` (harness) lines of the exchanges in docs/protocol.md. */
const exchanged = (prefix: 'C>' | 'H>'): unknown[] => [...doc.matchAll(new RegExp(`^${prefix} (\\{.*\\})$`, 'gm'))].map((m) => JSON.parse(m[1]!) as unknown);

describe('the protocol schema', () => {
  it('is shipped in the package and uses only keywords the check implements', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('schema');
    const schema = protocolSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(() => checkKeywords({ type: 'string', pattern: '^a' }, '#')).toThrow('"pattern", which the protocol check does not implement');
    expect(() => checkKeywords({ $ref: 'https://example.org/other.json' }, '#')).toThrow('only local references');
  });

  it('every message of the documented exchanges conforms, in its direction, with its world call', () => {
    const fromConsumer = exchanged('C>');
    const fromHarness = exchanged('H>');
    expect(fromConsumer.length).toBeGreaterThanOrEqual(14);
    expect(fromHarness.length).toBeGreaterThanOrEqual(14);
    for (const m of fromConsumer) expect(protocolProblem('fromConsumer', m), JSON.stringify(m)).toBeNull();
    for (const m of fromHarness) expect(protocolProblem('fromHarness', m), JSON.stringify(m)).toBeNull();
    // A message never passes for the other direction.
    for (const m of fromConsumer) expect(protocolProblem('fromHarness', m)).not.toBeNull();
    for (const m of fromHarness) expect(protocolProblem('fromConsumer', m)).not.toBeNull();
    const calls = fromConsumer.filter((m) => (m as { type: string }).type === 'call') as { method: string; args: unknown[] }[];
    for (const { method, args } of calls) expect(protocolProblem('worldCall', { method, args }), method).toBeNull();
  });

  it.each([
    [null, 'message must be an object, got null'],
    [[1, 2], 'message must be an object, got [1,2]'],
    ['hello', 'message must be an object, got "hello"'],
    [{ type: 'goodbye' }, 'message.type must be one of "hello", "call", "inspection", "crashed", got "goodbye"'],
    [{ type: 'hello', protocol: 1, name: 'x', capabilities: { delivery: 'at-least-once' }, sessions: 'yes' }, 'hello.sessions must be a boolean, got "yes"'],
    [{ type: 'hello', protocol: 1, name: 'x', capabilities: { delivery: 'twice' } }, 'hello.capabilities.delivery must be one of "at-least-once", "exactly-once", got "twice"'],
    [{ type: 'hello', protocol: '1', name: 'x', capabilities: { delivery: 'at-least-once' } }, 'hello.protocol must be an integer, got "1"'],
    [{ type: 'hello', protocol: 1, name: '', capabilities: { delivery: 'at-least-once' } }, 'hello.name must have at least 1 character'],
    [{ type: 'hello', protocol: 1, name: 'x', capabilities: { delivery: 'at-least-once', contracts: [] } }, 'hello.capabilities.contracts must have at least 1 item, got 0'],
    [{ type: 'call', id: 1, method: 'sleep', args: [] }, 'call.method must be one of "fetch", "load", "completed", "commit", "emit", "lease", "caughtUp", "fail", got "sleep"'],
    [{ type: 'call', id: null, method: 'lease', args: [] }, 'call.id must be an integer or a string, got null'],
    [{ type: 'call', id: 1, method: 'lease' }, 'call.args is missing'],
    [{ type: 'inspection', id: 'i0', effects: [{ event: { id: 'e1', version: 1 } }] }, 'inspection.effects[0].payload is missing'],
  ])('a consumer message %j is refused: %s', (message, problem) => {
    expect(protocolProblem('fromConsumer', message)).toBe(problem);
  });

  it('names the field in world-call arguments and harness messages too', () => {
    expect(protocolProblem('worldCall', { method: 'fetch', args: [{ resume: { kind: 'key-gt' }, limit: 2 }] })).toBe('message.args[0].resume.key is missing');
    expect(protocolProblem('worldCall', { method: 'commit', args: [[{ op: 'explode' }]] })).toBe(
      'message.args[0][0].op must be one of "effect", "complete", "unless-completed", "watermark", "anchor", "outbox", "outbox-done", "dead-letter", got "explode"',
    );
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: 'yes' })).toBe('reply.ok must be one of true, false, got "yes"');
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: false, error: { code: 'oops', definite: true, message: '' } })).toContain('reply.error.code must be one of');
  });

  it('the compiled predicate and the interpreter agree on every documented message and thousands of broken ones', () => {
    type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
    const calls = exchanged('C>').flatMap((m) => ((m as { type: string }).type === 'call' ? [m as { method: string; args: Json[] }] : []));
    const messages: [string, Json][] = [
      ...exchanged('C>').map((m): [string, Json] => ['fromConsumer', m as Json]),
      ...exchanged('H>').map((m): [string, Json] => ['fromHarness', m as Json]),
      ...calls.map(({ method, args }): [string, Json] => ['worldCall', { method, args }]),
    ];
    /** Every place in a value, as the keys that lead there. */
    const places = (v: Json, at: (string | number)[] = []): (string | number)[][] => [
      at,
      ...(Array.isArray(v) ? v.flatMap((x, i) => places(x, [...at, i])) : v !== null && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => places(x, [...at, k])) : []),
    ];
    /** The value with the thing at one place replaced, or removed when `by` is undefined. */
    const edit = (v: Json, at: (string | number)[], by: Json | undefined): Json | undefined => {
      if (at.length === 0) return by;
      const [head, ...rest] = at as [string | number, ...(string | number)[]];
      if (Array.isArray(v)) return v.flatMap((x, i) => (i !== head ? [x] : ((y) => (y === undefined ? [] : [y]))(edit(x, rest, by))));
      const o = v as { [k: string]: Json };
      const out: { [k: string]: Json } = {};
      for (const [k, x] of Object.entries(o)) {
        const y = k === head ? edit(x, rest, by) : x;
        if (y !== undefined) out[k] = y;
      }
      return out;
    };
    // Values near the schema's edges: wrong types, empty, negative, fractional, a tag of another form.
    const tricky = fc.constantFrom<Json>(null, true, 0, -1, 1.5, 2, '', 'x', 'e1', 'call', 'reply', 'fetch', 'commit', 'watermark', 'at-least-once', [], {}, [1], { id: 'e1', version: 1 });
    const broken = fc
      .tuple(fc.constantFrom(...messages), fc.nat(), fc.option(fc.oneof(tricky, fc.jsonValue() as fc.Arbitrary<Json>), { nil: undefined }))
      .map(([[definition, m], n, by]) => {
        const all = places(m);
        return [definition, edit(m, all[n % all.length] as (string | number)[], by) ?? null] as const;
      });
    for (const [definition, m] of messages) expect(protocolConforms(definition, m), JSON.stringify(m)).toBe(true);
    let refused = 0;
    fc.assert(
      fc.property(broken, ([definition, m]) => {
        const conforms = protocolConforms(definition, m);
        if (!conforms) refused++;
        expect(conforms, `${definition} ${JSON.stringify(m)}: ${explainProblem(definition, m)}`).toBe(explainProblem(definition, m) === null);
      }),
      { numRuns: 3000, seed: SEED },
    );
    // The broken messages are mostly refused: the agreement is not between two predicates that accept everything.
    expect(refused).toBeGreaterThan(1000);
  });
});
