/**
 * Newest-first APIs: a source that lists its bound stream from the newest event down, read by
 * a consumer down to its bookmark on every sync. The world serves it (test/world/source.test.ts
 * holds the pages themselves); here, ground truth replays those pages on its own, so that a
 * page served wrongly is a harness error, as for ascending sources; a profile declares such an
 * API and its worlds honour it; the reference reads it down to its bookmark before it commits,
 * and a consumer that checkpoints in mid-read is caught by the checks that already exist.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { check, type CheckResult } from '../model/checker.js';
import type { CallStep, History, Page, Step } from '../model/history.js';
import { HistoryError, parseHistory } from '../model/parse-history.js';
import { planArb } from '../scenarios/arbitraries.js';
import { ALL_SCENARIOS, ev, findScenario, plan } from '../scenarios/named.js';
import { NEWEST_FIRST_QUIRKS, type Plan } from '../scenarios/plan.js';
import { excludedBy, planFor, PROFILES, profileProblem, worldOptions, type SourceProfile } from '../scenarios/profiles.js';
import { PlanError, validatePlan } from '../scenarios/validate.js';
import type { Consumer } from '../src/adapter/consumer.js';
import { checkProperty, checkScenarios } from '../src/run/conformance.js';
import { execute } from '../src/run/execute.js';
import { MUTANT_BUDGET } from '../src/selftest/kill-matrix.js';
import { findMutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { builtInConsumer } from '../src/selftest/registry.js';
import { committedWatermarks, SEED } from './support.js';

/** Five events, pages of two, newest first: [e5 e4] [e3 e2] [e1]. */
const FIVE: Plan = plan([ev(1), ev(2), ev(3), ev(4), ev(5)], [], { source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' }, order: 'newest-first' } });

/** A deep copy of a history, to lie about. */
const copy = (h: History): History => JSON.parse(JSON.stringify(h)) as History;

/** The fetch steps that served a page, in order. */
function pages(h: History): (CallStep & { result: { kind: 'page'; page: Page } })[] {
  return h.steps.filter((s: Step): s is CallStep & { result: { kind: 'page'; page: Page } } => s.kind === 'call' && s.call.kind === 'fetch' && s.result?.kind === 'page');
}

const ids = (page: Page): string[] => page.events.map((e) => e.id);

/** Why a verdict is what it is, when it says: a harness error names the step and what was wrong. */
const reasonOf = (result: CheckResult): string | undefined => (result.verdict as { readonly reason?: string }).reason;

/** A history's page, replaced in a copy: the world's lie, for ground truth to catch. */
function lying(h: History, nth: number, lie: (page: Page) => Page, fault?: CallStep['fault']): History {
  const out = copy(h);
  const step = pages(out)[nth]!;
  (step.result as { page: Page }).page = lie(step.result.page);
  if (fault !== undefined) (step as { fault?: CallStep['fault'] }).fault = fault;
  return out;
}

describe('ground truth replays a newest-first source from the rule', () => {
  it('the reference reads it from the top down, and ground truth holds every page to be what the source had to serve', async () => {
    const run = await execute(FIVE, referenceConsumer());
    expect(run.history.header.order).toBe('newest-first');
    expect(pages(run.history).map((s) => ids(s.result.page))).toEqual([
      ['e5', 'e4'],
      ['e3', 'e2'],
      ['e1'],
      // The drain's sync: its first page reaches the bookmark, e5, and the read stops there.
      ['e5', 'e4'],
    ]);
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it('an ascending history keeps its header as it was: no order field', async () => {
    const run = await execute({ ...FIVE, source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } } }, referenceConsumer());
    expect('order' in run.history.header).toBe(false);
    expect(run.result.verdict.status).toBe('pass');
  });

  it.each<[string, (h: History) => History, RegExp]>([
    ['the header says nothing of the order: replayed ascending, the pages are wrong', (h) => {
      const out = copy(h);
      delete (out.header as { order?: string }).order;
      return out;
    }, /from there the eligible stream holds \[e1 e2\]/],
    ['a page served oldest first', (h) => lying(h, 0, (p) => ({ ...p, events: [...p.events].reverse() })), /served \[e4 e5\], but from there, newest first, the eligible stream holds \[e5 e4\]/],
    ['a page that skips an event', (h) => lying(h, 1, (p) => ({ ...p, events: p.events.slice(1) })), /served \[e2\], but from there, newest first, the eligible stream holds \[e3 e2\]/],
    ['a page that ends the stream with older events left', (h) => lying(h, 1, (p) => ({ ...p, next: null })), /ended the stream with 1 older eligible events left/],
    ['the oldest page with a token', (h) => lying(h, 2, (p) => ({ ...p, next: 'more' })), /continued the stream with 0 older eligible events left/],
    ['a page labelled with a quirk a newest-first source never serves', (h) => lying(h, 1, (p) => p, 'overlap'), /is labelled overlap, but the plan puts no fault there/],
    ['a page labelled short that holds the whole page', (h) => lying(h, 0, (p) => p, 'short'), /is labelled short, but the plan puts no fault there/],
    ['a page labelled empty that holds events', (h) => lying(h, 0, (p) => p, 'empty'), /is labelled empty, but the plan puts no fault there/],
  ])('%s: a harness error, never the consumer\'s failure', async (_, lie, says) => {
    const run = await execute(FIVE, referenceConsumer());
    const result = check(lie(run.history));
    expect(result.verdict.status).toBe('error');
    expect(result.verdict.anomalies).toEqual([]);
    expect(reasonOf(result)).toMatch(says);
  });

  it('an ascending history that claims to be newest first is a harness error too', async () => {
    const run = await execute({ ...FIVE, source: { pageSize: 2, resumes: [], contract: { kind: 'insertion-stable' } } }, referenceConsumer());
    const out = copy(run.history);
    (out.header as { order?: string }).order = 'newest-first';
    expect(reasonOf(check(out))).toMatch(/served \[e1 e2\], but from there, newest first, the eligible stream holds \[e5 e4\]/);
  });

  it('a page resumed by a form a newest-first source does not offer is a harness error', async () => {
    const run = await execute(FIVE, referenceConsumer());
    const out = copy(run.history);
    const step = pages(out)[1]!;
    (step.call as { request: unknown }).request = { resume: { kind: 'after', position: { key: [4], id: 'e4' } }, limit: 2 };
    expect(reasonOf(check(out))).toMatch(/call \d+ \(fetch\) must have failed with bad-request, but the world recorded ok, applied/);
  });

  it('the empty and short pages it serves are replayed as what they are', async () => {
    const quirky: Plan = {
      ...FIVE,
      faults: [
        { call: 'fetch', nth: 0, kind: 'empty' },
        { call: 'fetch', nth: 1, kind: 'short' },
      ],
    };
    const run = await execute(quirky, referenceConsumer());
    expect(pages(run.history).map((s) => [s.fault ?? '', ids(s.result.page)])).toEqual([
      ['empty', []],
      ['short', ['e5']],
      ['', ['e4', 'e3']],
      ['', ['e2', 'e1']],
      ['', ['e5', 'e4']],
    ]);
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    // The empty page's token resumes where its request did: from the newest.
    const wrong = lying(run.history, 1, (p) => ({ ...p, events: [p.events[0]!].map((e) => ({ ...e, id: 'e4', key: [4], payload: 'e4:order' })) }));
    expect(reasonOf(check(wrong))).toMatch(/a short page from there holds \[e5\]/);
  });

  it('a history whose header names an order that does not exist is refused, with the field', async () => {
    const run = await execute(FIVE, referenceConsumer());
    const out = copy(run.history);
    (out.header as { order?: string }).order = 'sideways';
    expect(() => parseHistory(out)).toThrow(HistoryError);
    expect(() => parseHistory(out)).toThrow(/header\.order/);
  });
});

describe('a plan and a profile for a newest-first API', () => {
  it.each<[string, Partial<Plan>, RegExp]>([
    ['an order that does not exist', { source: { ...FIVE.source, order: 'sideways' as 'newest-first' } }, /source\.order must be one of ascending, newest-first/],
    ['a resume form besides start and token', { source: { ...FIVE.source, resumes: ['after'] } }, /source\.resumes must be \[\] for a newest-first source/],
    ['a quirk that means nothing read downwards', { faults: [{ call: 'fetch', nth: 0, kind: 'overlap' }] }, /faults\[0\]\.kind is a overlap page, which a newest-first source never serves/],
  ])('a plan with %s is refused, naming the field', (_, over, says) => {
    expect(() => validatePlan({ ...FIVE, ...over })).toThrow(PlanError);
    expect(() => validatePlan({ ...FIVE, ...over })).toThrow(says);
  });

  it('a plan with the quirks it can show is valid', () => {
    for (const kind of NEWEST_FIRST_QUIRKS) expect(validatePlan({ ...FIVE, faults: [{ call: 'fetch', nth: 0, kind }] })).toBeDefined();
  });

  it.each<[unknown, string | null]>([
    [{ order: 'newest-first' }, null],
    [PROFILES.restNewestFirst, null],
    [{ order: 'ascending', resumes: ['after'] }, null],
    [{ order: 'backwards' }, "order must be 'ascending' or 'newest-first'"],
    [{ order: 'newest-first', resumes: ['after'] }, "resumes must be [] with order 'newest-first': such an API resumes only from the start or by token"],
    [{ order: 'newest-first', quirks: ['short', 'repeat'] }, "quirks cannot hold repeat with order 'newest-first': such an API shows only empty, short, stale"],
  ])('profile %j: %s', (profile, problem) => {
    expect(profileProblem(profile)).toBe(problem);
  });

  it('generated worlds of a newest-first profile are all newest-first, with tokens only and no quirk it cannot show; others have no order at all', () => {
    for (const profile of [{ order: 'newest-first' } as SourceProfile, PROFILES.restNewestFirst]) {
      const plans = fc.sample(planArb(worldOptions({ profile })), { numRuns: 300, seed: SEED });
      const quirks = new Set<string>();
      for (const p of plans) {
        expect([p.source.order, p.source.resumes]).toEqual(['newest-first', []]);
        for (const f of p.faults) if (['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'].includes(f.kind)) quirks.add(f.kind);
      }
      expect([...quirks].sort()).toEqual(['empty', 'short', 'stale']);
    }
    for (const p of fc.sample(planArb(worldOptions({ profile: PROFILES.restUpdatedSince })), { numRuns: 100, seed: SEED })) expect('order' in p.source).toBe(false);
  });

  it('a named scenario meets the consumer on its newest-first API; one built on a quirk that API cannot show is skipped, saying so', () => {
    const claims = { profile: { order: 'newest-first' } as SourceProfile };
    const seedExample = findScenario('failed-event-holds-watermark')!.plan;
    expect(planFor(claims, seedExample).source).toEqual({ ...seedExample.source, order: 'newest-first', resumes: [] });
    expect(excludedBy(claims, findScenario('ties-across-page-boundary')!.plan)).toBeNull();
    expect(excludedBy(claims, findScenario('repeated-page')!.plan)).toBe(
      "the consumer's API never serves a repeat page (its profile's quirks: empty, short, stale), and this scenario is built on one",
    );
    expect(excludedBy(claims, findScenario('stale-token')!.plan)).toBeNull();
    // An ascending profile leaves a scenario's source as it was.
    expect(planFor({ profile: PROFILES.sqlKeyset }, seedExample).source.order).toBeUndefined();
  });
});

/** Three events on pages of one, newest first: [e3] [e2] [e1]. */
const THREE: Plan = plan([ev(1), ev(2), ev(3)], [], { source: { pageSize: 1, resumes: [], contract: { kind: 'insertion-stable' }, order: 'newest-first' } });

describe('a consumer that reads down to its bookmark before it commits, and one that does not', () => {
  const mutant = findMutant('checkpoints-mid-newest-first-read')!;

  it('R6 the reference commits once, the newest position, after reaching the end; the next sync reads only down to it', async () => {
    const run = await execute(THREE, referenceConsumer());
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    expect(committedWatermarks(run.history).map((w) => w.value)).toEqual([{ key: [3], id: 'e3' }]);
    const drain = pages(run.history).filter((s) => s.phase === 'drain');
    expect(drain.map((s) => ids(s.result.page))).toEqual([['e3']]);
  });

  it('R6 R8 checkpointing the newest position after the first page is a premature watermark, which the existing check finds at that commit', async () => {
    const run = await execute(THREE, mutant.consumer);
    const first = run.result.verdict.anomalies[0]!;
    expect(first.kind).toBe('premature-watermark');
    // The watermark e3 passes e1 and e2, not read yet.
    const commit = committedWatermarks(run.history)[0]!;
    expect(commit.value).toEqual({ key: [3], id: 'e3' });
    expect(first.steps).toContain(commit.seq);
  });

  it.each<[string, Plan['faults']]>([
    ['a crash in mid-read', [{ call: 'fetch', nth: 1, kind: 'crash-before' }]],
    ['a later page that fails', [{ call: 'fetch', nth: 1, kind: 'error' }]],
  ])('R6 after %s, the checkpoint leaves the older records behind for good; the reference loses none', async (_, faults) => {
    const world: Plan = { ...THREE, faults };
    const lost = await execute(world, mutant.consumer);
    expect(lost.result.verdict.anomalies.map((a) => a.kind)).toEqual(expect.arrayContaining(['premature-watermark', 'omission']));
    expect(lost.result.verdict.anomalies.filter((a) => a.kind === 'omission').flatMap((a) => a.events.map((e) => e.id))).toEqual(expect.arrayContaining(['e1', 'e2']));
    const kept = await execute(world, referenceConsumer());
    expect(kept.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it('the mutant is caught with premature-watermark well within the mutant budget, on every seed tried', async () => {
    for (const seed of [SEED, 1, 2, 3]) {
      const outcome = await checkProperty(mutant.consumer, { runs: MUTANT_BUDGET, seed, searches: 1 });
      expect(outcome.status, `seed ${seed}`).toBe('fail');
      expect(outcome.counterexample!.result.verdict.anomalies.map((a) => a.kind), `seed ${seed}`).toContain('premature-watermark');
    }
  });
});

describe('the newest-first reference variant', () => {
  const variant = builtInConsumer('reference-newest-first') as Consumer;

  it('is registered, and declares a newest-first profile, so that every world it meets is newest-first', () => {
    expect(variant.capabilities.profile).toEqual({ order: 'newest-first' });
  });

  it.each([SEED, 11, 12])('R1-R10 passes 1,000 generated worlds of its profile (seed %i)', async (seed) => {
    const outcome = await checkProperty(variant, { runs: 1000, seed });
    expect({ status: outcome.status, path: outcome.path }).toEqual({ status: 'pass', path: null });
    expect(outcome.runs).toBe(1000);
  });

  it.each([
    referenceConsumer({ name: 'exactly-once, newest first', delivery: 'exactly-once', order: 'newest-first' }),
    referenceConsumer({ name: 'outbox, newest first', delivery: 'outbox', order: 'newest-first' }),
    referenceConsumer({ name: 'cursor bookmark, newest first', bookmark: 'cursor', order: 'newest-first' }),
    { ...referenceConsumer(), name: 'restNewestFirst', capabilities: { delivery: 'at-least-once' as const, profile: PROFILES.restNewestFirst } },
  ])('R1-R10 $name passes 300 generated worlds', async (consumer) => {
    const outcome = await checkProperty(consumer, { runs: 300, seed: SEED });
    expect({ status: outcome.status, path: outcome.path }).toEqual({ status: 'pass', path: null });
  });

  it('passes every named scenario it is not skipped for, and is skipped only for the quirks a newest-first API never shows', async () => {
    const outcomes = await checkScenarios(variant);
    const skipped = outcomes.filter((o) => o.skipped !== undefined);
    for (const o of outcomes) if (o.skipped === undefined) expect(o.execution!.result.verdict.status, o.scenario.name).toBe('pass');
    for (const o of skipped) expect(o.skipped).toMatch(/never serves an? (overlap|repeat|reorder) page/);
    expect(outcomes.length - skipped.length).toBeGreaterThan(ALL_SCENARIOS.length / 2);
  });
});
