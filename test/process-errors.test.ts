import { describe, expect, it } from 'vitest';
import type { CallStep } from '../model/history.js';
import { plan, ev } from '../scenarios/named.js';
import { execute } from '../src/run/execute.js';
import { processConsumer } from '../src/adapter/process/bridge.js';

/**
 * docs/protocol.md, Errors: a consumer in another language gets what an in-process one gets.
 * A conflict names the guard that refused it, a rejection names the refused event version,
 * and the start message carries the lease's time to live with its unit.
 */
describe('errors over the process protocol', () => {
  it('carry a conflict cause and a rejected ref; start carries the lease time to live', async () => {
    const consumer = await processConsumer('node test/fixtures/process/error-details.mjs');
    const run = await execute(plan([ev(41)], [], { poison: ['e41'], leaseTtlSteps: 6 }), consumer);
    const claim = run.history.steps.find((s): s is CallStep => s.kind === 'call' && s.call.kind === 'claim');
    expect(claim?.call.kind === 'claim' && claim.call.claim.kind === 'failed').toBe(true);
    const reason = claim?.call.kind === 'claim' && claim.call.claim.kind === 'failed' ? claim.call.claim.reason : '{}';
    expect(JSON.parse(reason)).toEqual({
      leaseTtl: { value: 6, unit: 'steps' },
      errors: [
        { code: 'conflict', definite: true, cause: 'expect', ref: null },
        { code: 'conflict', definite: true, cause: 'fence', ref: null },
        { code: 'rejected', definite: true, cause: null, ref: { id: 'e41', version: 1 } },
      ],
    });
  });
});

describe('the protocol schema knows the fields', () => {
  it('a conflict with its cause, a rejection with its ref, a start with the lease time to live, a hello with a profile', async () => {
    const { protocolProblem } = await import('../src/adapter/process/schema.js');
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: false, error: { code: 'conflict', definite: true, message: 'm', cause: 'fence' } })).toBeNull();
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: false, error: { code: 'conflict', definite: true, message: 'm', cause: 'because' } })).not.toBeNull();
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: false, error: { code: 'rejected', definite: true, message: 'm', ref: { id: 'e1', version: 1 } } })).toBeNull();
    expect(protocolProblem('fromHarness', { type: 'reply', id: 1, ok: false, error: { code: 'rejected', definite: true, message: 'm', ref: 'e1' } })).not.toBeNull();
    const hello = { type: 'hello', protocol: 1, name: 'x', capabilities: { delivery: 'at-least-once', profile: { resumes: ['after'], keyArity: 1, keyValues: 'whole', mutable: true, refusals: 'fail-visibly' } } };
    expect(protocolProblem('fromConsumer', hello)).toBeNull();
    expect(protocolProblem('fromConsumer', { ...hello, capabilities: { delivery: 'at-least-once', profile: { keyArity: 3 } } })).not.toBeNull();
    expect(protocolProblem('fromConsumer', { ...hello, capabilities: { delivery: 'at-least-once', profile: { keyValues: 'ints' } } })).toBe('hello.capabilities.profile.keyValues must be one of "any", "whole", got "ints"');
  });
});
