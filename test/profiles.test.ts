import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planArb } from '../scenarios/arbitraries.js';
import { ALL_SCENARIOS, ev, findScenario, plan } from '../scenarios/named.js';
import type { Plan } from '../scenarios/plan.js';
import { excludedBy, PROFILES, worldOptions, type SourceProfile } from '../scenarios/profiles.js';
import { validateConsumer } from '../src/adapter/load.js';
import { checkProperty, checkScenarios, whyNot } from '../src/run/conformance.js';
import type { Consumer } from '../src/adapter/consumer.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { execute } from '../src/run/execute.js';
import { SEED } from './support.js';

/**
 * docs/adapters.md, Source profiles: an adapter declares the source API its consumer is
 * written against; worlds fix what the profile says and vary the rest, and named scenarios
 * it excludes are skipped with the reason. Each preset is used here, as the docs show it.
 */
const PRESETS = Object.entries(PROFILES) as [keyof typeof PROFILES, SourceProfile][];

/** The reference consumer, declaring a profile. It adapts to the resume forms a world offers, so it fits every preset. */
function declaring(profile: SourceProfile): Consumer {
  const reference = referenceConsumer();
  return { ...reference, name: 'reference-with-profile', capabilities: { ...reference.capabilities, profile } };
}

describe('the presets in docs/adapters.md are the exported ones', () => {
  it('each preset row shows its value as JSON, equal to PROFILES', () => {
    const docs = readFileSync('docs/adapters.md', 'utf8');
    const rows = [...docs.matchAll(/^\| `PROFILES\.(\w+)` \| .* \| `(\{.*\})` \|$/gm)].map((m) => [m[1], JSON.parse(m[2] as string)]);
    expect(Object.fromEntries(rows)).toEqual(JSON.parse(JSON.stringify(PROFILES)));
  });
});

describe.each(PRESETS)('PROFILES.%s', (_, profile) => {
  it('generated worlds fix what the preset says, and still vary what it leaves open', () => {
    const plans = fc.sample(planArb(worldOptions({ profile })), { numRuns: 300, seed: SEED });
    const arities = new Set<number>();
    const contracts = new Set<string>();
    let poisoned = 0;
    let changed = 0;
    for (const p of plans) {
      expect(p.source.resumes).toEqual(profile.resumes);
      if (profile.keyArity !== undefined) expect(p.binding.ordering).toHaveLength(profile.keyArity);
      if (profile.mutable === false) expect(p.mutations.every((m) => m.kind === 'insert')).toBe(true);
      if (profile.contracts !== undefined) expect(profile.contracts).toContain(p.source.contract.kind);
      arities.add(p.binding.ordering.length);
      contracts.add(p.source.contract.kind);
      if (p.poison.length > 0) poisoned++;
      if (p.mutations.some((m) => m.kind !== 'insert')) changed++;
    }
    // Open is open: both arities, several contracts, poison, changes of records.
    if (profile.keyArity === undefined) expect([...arities].sort()).toEqual([1, 2]);
    if (profile.contracts === undefined) expect(contracts.size).toBeGreaterThanOrEqual(3);
    expect(poisoned).toBeGreaterThan(0);
    if (profile.mutable !== false) expect(changed).toBeGreaterThan(0);
  });

  it('a consumer written for it passes the worlds and scenarios it fits; the others are skipped with the reason', async () => {
    const consumer = declaring(profile);
    const outcome = await checkProperty(consumer, { runs: 60, seed: SEED });
    expect({ status: outcome.status, seed: outcome.seed }).toEqual({ status: 'pass', seed: SEED });
    const scenarios = await checkScenarios(consumer);
    for (const s of scenarios) {
      if (s.skipped !== undefined) expect(s.skipped).toMatch(/^the consumer/);
      else expect(s.execution.result.verdict.status, s.scenario.name).toBe('pass');
    }
    // A scenario's source offers the consumer's resume forms too: none is skipped for them,
    // and the seed's own 41/42/43 example runs for every preset.
    for (const s of scenarios) if (s.skipped !== undefined) expect(s.skipped).not.toMatch(/resumes by/);
    const seedExample = scenarios.find((s) => s.scenario.name === 'failed-event-holds-watermark')!;
    expect(seedExample.skipped).toBeUndefined();
    expect(seedExample.untested).toBeUndefined();
    for (const r of profile.resumes ?? []) expect(seedExample.execution!.plan.source.resumes).toContain(r);
  });

  it('worlds serve only the page quirks its API can show', () => {
    const plans = fc.sample(planArb(worldOptions({ profile })), { numRuns: 300, seed: SEED });
    const quirks = new Set(plans.flatMap((p) => p.faults.map((f) => f.kind)).filter((k) => ['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'].includes(k)));
    if (profile.quirks !== undefined) for (const q of quirks) expect(profile.quirks).toContain(q);
    else expect(quirks.size).toBeGreaterThanOrEqual(5);
  });
});

describe('a profile in the worlds a check generates', () => {
  it('checkProperty generates only worlds of the declared profile', async () => {
    const profile: SourceProfile = { resumes: ['key-gte'], keyArity: 2, mutable: false, refusals: 'never', contracts: ['insertion-stable', 'replay-window'] };
    const seen: string[] = [];
    const reference = declaring(profile);
    const spy: Consumer = {
      ...reference,
      run: (w) => {
        seen.push(JSON.stringify([w.source.resumes, w.binding.ordering.length, w.source.contract.kind === 'insertion-stable' || w.source.contract.kind === 'replay-window']));
        return reference.run(w);
      },
    };
    const outcome = await checkProperty(spy, { runs: 40, seed: SEED });
    expect(outcome.status).toBe('pass');
    expect(new Set(seen)).toEqual(new Set([JSON.stringify([['key-gte'], 2, true])]));
  });

  it('with no profile, worlds are generated exactly as before: a profile that fixes nothing changes no plan', () => {
    const a = fc.sample(planArb(), { numRuns: 50, seed: SEED });
    const b = fc.sample(planArb(worldOptions({ profile: {} })), { numRuns: 50, seed: SEED });
    expect(b).toEqual(a);
  });
});

describe('what the first ordering field holds', () => {
  const firsts = (plans: readonly Plan[]): number[] => plans.flatMap((p) => p.events.map((e) => e.key[0] as number));

  it('any finite number by default: whole numbers, quarters, numbers below zero and epoch milliseconds with a fraction all come', () => {
    const keys = firsts(fc.sample(planArb(), { numRuns: 300, seed: SEED }));
    expect(keys.some((k) => !Number.isInteger(k) && k < 2 ** 40)).toBe(true);
    expect(keys.some((k) => k < 0)).toBe(true);
    expect(keys.some((k) => Number.isInteger(k) && k > 0 && k < 2 ** 40)).toBe(true);
    // Past 2^40, with a fraction a Date (whole milliseconds) or a float32 cannot keep.
    const epoch = keys.filter((k) => k > 2 ** 40);
    expect(epoch.some((k) => !Number.isInteger(k) && new Date(k).getTime() !== k && Math.fround(k) !== k)).toBe(true);
  });

  it("whole numbers from 0 only for a profile whose keys are 'whole' (a connector's cursor)", () => {
    const keys = firsts(fc.sample(planArb({ profile: { keyValues: 'whole' } }), { numRuns: 300, seed: SEED }));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => Number.isInteger(k) && k >= 0)).toBe(true);
  });
});

describe('why a named scenario is excluded', () => {
  const tokens: Plan = plan([ev(1)], []);
  it.each<[string, SourceProfile, Plan, string | null]>([
    ['no profile', {}, tokens, null],
    ['tokens only fits a tokens-only source', { resumes: [] }, tokens, null],
    ['a resume form the source lacks is offered as well: the scenario runs', { resumes: ['after'] }, tokens, null],
    ['a page quirk the API never shows', { quirks: ['short'] }, findScenario('stale-token')!.plan, "the consumer's API never serves a stale page (its profile's quirks: short), and this scenario is built on one"],
    ['an API that shows no quirk at all', { quirks: [] }, findScenario('repeated-page')!.plan, "the consumer's API never serves a repeat page (its profile's quirks: none), and this scenario is built on one"],
    ['extra forms are no obstacle', { resumes: ['key-gte'] }, findScenario('ties-across-page-boundary')!.plan, null],
    ['another key arity', { keyArity: 2 }, tokens, "the consumer's keys have 2 ordering field(s), and this scenario orders by 1"],
    ['records that change, for an append-only source', { mutable: false }, findScenario('membership-flip-within-replay-window')!.plan, "the consumer's source only gains records, and this scenario changes one (flip)"],
    ['poison, for a sink that never refuses', { refusals: 'never' }, plan([ev(1)], [], { poison: ['e1'] }), "the consumer's sink never refuses an effect, and this scenario has a poison event"],
    ['poison, for a consumer that fails visibly: it runs', { refusals: 'fail-visibly' }, plan([ev(1)], [], { poison: ['e1'] }), null],
    ['a contract the profile rules out', { contracts: ['snapshot'] }, tokens, 'the consumer does not support insertion-stable sources'],
    ['a replay window wider than the API has', { window: 3 }, findScenario('late-insert-within-replay-window')!.plan, "the consumer's API replays at most 3 key(s) behind its newest record (its profile's window), and this scenario's window is 4"],
    ['a replay window as wide as the API has: it runs', { window: 4 }, findScenario('late-insert-within-replay-window')!.plan, null],
  ])('%s', (_, profile, p, reason) => {
    expect(excludedBy({ profile }, p)).toBe(reason);
  });

  it('whyNot asks the profile, and the contracts claimed and those of the profile must both allow one', () => {
    const scenario = findScenario('failed-event-holds-watermark')!;
    const consumer = (caps: object): Consumer => ({ ...referenceConsumer(), capabilities: { delivery: 'at-least-once', ...caps } });
    expect(whyNot(consumer({ profile: PROFILES.sqlKeyset }), scenario)).toBeNull();
    expect(whyNot(consumer({ profile: PROFILES.sqlKeyset }), findScenario('stale-token')!)).toMatch(/never serves a stale page/);
    expect(whyNot(consumer({ contracts: ['insertion-stable'], profile: { contracts: ['insertion-stable', 'none'] } }), scenario)).toBeNull();
    expect(whyNot(consumer({ contracts: ['none'], profile: { contracts: ['insertion-stable', 'none'] } }), scenario)).toBe('the consumer does not support insertion-stable sources');
    // A consumer with no profile keeps every scenario it kept before.
    expect(ALL_SCENARIOS.filter((s) => whyNot(referenceConsumer(), s) !== null)).toEqual([]);
  });
});

describe('a declared profile is checked when the adapter loads', () => {
  const load = (profile: unknown, contracts?: unknown) =>
    validateConsumer({ name: 'x', capabilities: { delivery: 'at-least-once', profile, ...(contracts === undefined ? {} : { contracts }) }, run: () => undefined }, 'x.ts');
  it.each<[unknown, string]>([
    ['sql', 'capabilities.profile must be an object'],
    [{ resume: ['after'] }, 'capabilities.profile has no field "resume"'],
    [{ resumes: ['token'] }, 'capabilities.profile resumes must list some of after, key-gt, key-gte, offset'],
    [{ keyArity: 3 }, 'capabilities.profile keyArity must be 1 or 2'],
    [{ keyValues: 'integers' }, "capabilities.profile keyValues must be 'any' or 'whole'"],
    [{ mutable: 'yes' }, 'capabilities.profile mutable must be true or false'],
    [{ refusals: 'retry' }, "capabilities.profile refusals must be 'dead-letter', 'fail-visibly' or 'never'"],
    [{ contracts: [] }, 'capabilities.profile contracts must list some of snapshot, insertion-stable, replay-window, none'],
    [{ quirks: ['sorted'] }, 'capabilities.profile quirks must list some of overlap, repeat, empty, stale, reorder, short ([] for none)'],
    [{ window: 0 }, 'capabilities.profile window must be a whole number of keys, 1 or more'],
    [{ window: 2.5 }, 'capabilities.profile window must be a whole number of keys, 1 or more'],
    [{ window: 3, contracts: ['insertion-stable'] }, "capabilities.profile window is the width of a replay window, and contracts has no 'replay-window'"],
  ])('%j', (profile, message) => {
    expect(() => load(profile)).toThrow(message);
  });

  it('contracts claimed and a profile with none in common', () => {
    expect(() => load(PROFILES.changeLog, ['snapshot'])).toThrow('have no contract in common');
    expect(load(PROFILES.changeLog, ['snapshot', 'insertion-stable']).capabilities.profile).toEqual(PROFILES.changeLog);
  });
});

describe('a consumer that fails visibly on a refused effect says so in the history', () => {
  const stopper = (profile: SourceProfile): Consumer => ({
    name: 'stops-for-an-operator',
    capabilities: { delivery: 'at-least-once', profile },
    run: async (w) => {
      const page = await w.fetch({ resume: { kind: 'start' }, limit: 10 });
      for (const e of page.events) {
        try {
          await w.emit({ id: e.id, version: e.version }, e.payload);
        } catch (error) {
          if ((error as { code?: string }).code === 'rejected') return await w.fail(`refused: ${e.id}`);
          throw error;
        }
      }
      await w.caughtUp();
    },
  });
  const world = plan([ev(1), ev(2)], [], { poison: ['e2'] });

  it("the header carries refusals: 'fail-visibly' for the checker to judge the visible failure by", async () => {
    const run = await execute(world, stopper({ ...PROFILES.sqlKeyset, refusals: 'fail-visibly' }));
    expect(run.history.header.refusals).toBe('fail-visibly');
  });

  it('a consumer that stops for an operator after a refused effect fails honestly, when it says so', async () => {
    const honest = await execute(world, stopper({ ...PROFILES.sqlKeyset, refusals: 'fail-visibly' }));
    expect(honest.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    // The same stop, undeclared: a source that proves its holes owed a dead letter and a claim.
    const undeclared = await execute(world, stopper({}));
    expect(undeclared.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('but a consumer that stopped at a poison event with an earlier event unhandled did not stop honestly', async () => {
    const skipsFirst: Consumer = {
      name: 'skips-then-stops',
      capabilities: { delivery: 'at-least-once', profile: { ...PROFILES.sqlKeyset, refusals: 'fail-visibly' } },
      run: async (w) => {
        const page = await w.fetch({ resume: { kind: 'start' }, limit: 10 });
        for (const e of page.events.slice(1)) {
          try {
            await w.emit({ id: e.id, version: e.version }, e.payload);
          } catch {
            return await w.fail(`refused: ${e.id}`);
          }
        }
      },
    };
    const run = await execute(world, skipsFirst);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
  });

  it('any other consumer records no such field, so its history is as it was', async () => {
    for (const profile of [{}, { refusals: 'dead-letter' as const }]) {
      const run = await execute(world, stopper(profile));
      expect(Object.keys(run.history.header)).not.toContain('refusals');
    }
  });
});
