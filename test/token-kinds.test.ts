/**
 * What a page token is: a plain continuation (sent again, the same page again), a stateful
 * scroll the server moves on whenever it serves a page, or an iterator chain whose empty
 * batch serves itself again until its own `next` is followed. The world serves each kind,
 * ground truth (model/tokens.ts) replays each from its rule, and the two are held together
 * by a differential property; the reference reads both kinds correctly, a profile declares
 * them, and a consumer that treats either like a continuation is caught.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { check } from '../model/checker.js';
import type { CallStep, FetchRequest, History, Page, Resume, Step } from '../model/history.js';
import { HistoryError, parseHistory } from '../model/parse-history.js';
import { TOKEN_KINDS, type TokenKind } from '../model/tokens.js';
import { planArb } from '../scenarios/arbitraries.js';
import { ALL_SCENARIOS, ev, plan } from '../scenarios/named.js';
import type { Fault, Plan } from '../scenarios/plan.js';
import { excludedBy, planFor, PROFILES, profileProblem, worldOptions, type SourceProfile } from '../scenarios/profiles.js';
import { PlanError, validatePlan } from '../scenarios/validate.js';
import type { Consumer, WorkerWorld } from '../src/adapter/consumer.js';
import { checkProperty, checkScenarios } from '../src/run/conformance.js';
import { execute, hashHistory } from '../src/run/execute.js';
import { findMutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import { builtInConsumer } from '../src/selftest/registry.js';
import { SEED } from './support.js';

/** Six events on pages of two: [e1 e2] [e3 e4] [e5 e6]. */
function six(tokens: TokenKind | undefined, faults: Fault[] = [], resumes: Plan['source']['resumes'] = []): Plan {
  return plan([1, 2, 3, 4, 5, 6].map((n) => ev(n)), faults, { source: { pageSize: 2, resumes, contract: { kind: 'insertion-stable' }, ...(tokens === undefined ? {} : { tokens }) } });
}

type Request = (pages: readonly Page[]) => Resume;

/**
 * A consumer that makes exactly these requests, each built from the pages it got so far
 * (a page lost or refused counts as an empty one), then claims it is caught up; the drain's
 * incarnation makes the `drain` requests, with the same pages in mind.
 */
function scripted(steps: readonly Request[], drain: readonly Request[] = []): Consumer {
  const pages: Page[] = [];
  let lives = 0;
  return {
    name: 'scripted',
    capabilities: { delivery: 'at-least-once' },
    run: async (world: WorkerWorld) => {
      for (const step of lives++ === 0 ? steps : drain) {
        try {
          pages.push(await world.fetch({ resume: step(pages), limit: world.source.pageSize }));
        } catch {
          pages.push({ events: [], next: null, head: null });
        }
      }
      await world.caughtUp();
    },
  };
}

const token = (i: number) => (pages: readonly Page[]): Resume => ({ kind: 'token', token: pages[i]?.next ?? 'none' });
const start = (): Resume => ({ kind: 'start' });

function served(h: History): string[][] {
  return h.steps
    .filter((s: Step): s is CallStep => s.kind === 'call' && s.call.kind === 'fetch')
    .map((s) => (s.result?.kind === 'page' ? s.result.page.events.map((e) => e.id) : [s.outcome.kind === 'error' ? s.outcome.code : s.outcome.kind]));
}

const copy = (h: History): History => JSON.parse(JSON.stringify(h)) as History;
const reasonOf = (h: History): string | undefined => (check(h).verdict as { readonly reason?: string }).reason;

describe('the world serves each token kind', () => {
  it('a continuation token sent again serves the same page again', async () => {
    const run = await execute(six(undefined), scripted([start, token(0), token(0), token(0)]));
    expect(served(run.history)).toEqual([['e1', 'e2'], ['e3', 'e4'], ['e3', 'e4'], ['e3', 'e4']]);
    expect('tokens' in run.history.header).toBe(false);
  });

  it("a scroll token sent again gets the scroll's next page: the server moved it on when it served the last one", async () => {
    const run = await execute(six('scroll'), scripted([start, token(0), token(0), token(0), start, token(4)]));
    expect(served(run.history)).toEqual([
      ['e1', 'e2'],
      ['e3', 'e4'],
      ['e5', 'e6'],
      // The scroll is over: what follows e6 is nothing, the end.
      [],
      // A new request opens a new scroll, from the start.
      ['e1', 'e2'],
      ['e3', 'e4'],
    ]);
    expect(run.history.header.tokens).toBe('scroll');
    expect(check(run.history).verdict.status).not.toBe('error');
  });

  it('a scroll request that timed out after it was served moved the scroll on: the retry gets the page after the lost one', async () => {
    const run = await execute(six('scroll', [{ call: 'fetch', nth: 1, kind: 'timeout' }]), scripted([start, token(0), token(0)]));
    expect(served(run.history)).toEqual([['e1', 'e2'], ['e3', 'e4'], ['e5', 'e6']]);
    expect(check(run.history).verdict.status).not.toBe('error');
  });

  it('a stale scroll token ends the whole scroll: every token of it is refused after', async () => {
    const run = await execute(six('scroll', [{ call: 'fetch', nth: 2, kind: 'stale' }]), scripted([start, token(0), token(1), token(0)]));
    expect(served(run.history)).toEqual([['e1', 'e2'], ['e3', 'e4'], ['stale-token'], ['stale-token']]);
    expect(check(run.history).verdict.status).not.toBe('error');
  });

  it("an iterator token whose batch came back empty serves that empty batch again, forever, drain included; only the batch's next moves on", async () => {
    const run = await execute(six('iterator', [{ call: 'fetch', nth: 1, kind: 'empty' }]), scripted([start, token(0), token(0)], [token(0), token(3)]));
    const fetches = run.history.steps.filter((s: Step): s is CallStep => s.kind === 'call' && s.call.kind === 'fetch');
    expect(served(run.history)).toEqual([['e1', 'e2'], [], [], [], ['e3', 'e4']]);
    const pages = fetches.map((s) => (s.result?.kind === 'page' ? s.result.page : null));
    // The same empty batch: the same token every time, and the first time only is it the quirk.
    expect(new Set(pages.slice(1, 4).map((p) => p?.next)).size).toBe(1);
    expect(fetches.map((s) => s.fault)).toEqual([undefined, 'empty', undefined, undefined, undefined]);
    expect(run.history.header.tokens).toBe('iterator');
    expect(check(run.history).verdict.status).not.toBe('error');
  });

  it('the same empty quirk on a continuation is a one-off: the token sent again serves the page', async () => {
    const run = await execute(six(undefined, [{ call: 'fetch', nth: 1, kind: 'empty' }]), scripted([start, token(0), token(0)]));
    expect(served(run.history)).toEqual([['e1', 'e2'], [], ['e3', 'e4']]);
  });

  it('the offer tells an incarnation what its tokens are, and only when they are not continuations', async () => {
    const seen: WorkerWorld['source'][] = [];
    const spy: Consumer = { name: 'spy', capabilities: { delivery: 'at-least-once' }, run: async (world) => void seen.push(world.source) };
    await execute(six('scroll'), spy);
    await execute(six(undefined), spy);
    expect(seen[0]?.tokens).toBe('scroll');
    expect(seen.at(-1) !== undefined && 'tokens' in seen.at(-1)!).toBe(false);
  });
});

describe('ground truth replays each token kind from its rule', () => {
  it.each<[string, Plan, readonly Request[], TokenKind, RegExp]>([
    ['a scroll judged as a continuation: the re-sent token must serve its page again', six('scroll'), [start, token(0), token(0)], 'continuation', /from there the eligible stream holds \[e3 e4\]/],
    ['a continuation judged as a scroll: the re-sent token must move on', six(undefined), [start, token(0), token(0)], 'scroll', /from there the eligible stream holds \[e5 e6\]/],
    ['an iterator judged as a continuation: the re-sent token of an empty batch must serve the page', six('iterator', [{ call: 'fetch', nth: 1, kind: 'empty' }]), [start, token(0), token(0)], 'continuation', /from there the eligible stream holds \[e3 e4\]/],
    [
      'a continuation judged as an iterator: the re-sent token of an empty batch must serve it again',
      six(undefined, [{ call: 'fetch', nth: 1, kind: 'empty' }]),
      [start, token(0), token(0)],
      'iterator',
      /served \[e3 e4\], but from there the eligible stream holds \[\]/,
    ],
  ])('%s: a harness error', async (_, p, steps, claimed, why) => {
    const run = await execute(p, scripted(steps));
    expect(check(run.history).verdict.status).not.toBe('error');
    const lie = copy(run.history);
    if (claimed === 'continuation') delete (lie.header as { tokens?: TokenKind }).tokens;
    else (lie.header as { tokens?: TokenKind }).tokens = claimed;
    expect(check(lie).verdict.status).toBe('error');
    expect(reasonOf(lie)).toMatch(why);
  });

  it('an iterator that serves its empty batch again with another token is a harness error', async () => {
    const run = await execute(six('iterator', [{ call: 'fetch', nth: 1, kind: 'empty' }]), scripted([start, token(0), token(0)]));
    const lie = copy(run.history);
    const third = lie.steps.filter((s: Step): s is CallStep => s.kind === 'call' && s.call.kind === 'fetch')[2]!;
    (third.result as { page: Page }).page = { ...(third.result as { page: Page }).page, next: 'elsewhere' };
    expect(check(lie).verdict.status).toBe('error');
    expect(reasonOf(lie)).toMatch(/for a token whose batch came back empty, which serves that empty batch again/);
  });

  it('a recorded history carries its token kind, and only one the model knows', async () => {
    const { history } = await execute(six('scroll'), scripted([start]));
    expect(parseHistory(copy(history)).header.tokens).toBe('scroll');
    const bad = copy(history) as unknown as { header: { tokens: string } };
    bad.header.tokens = 'cursor';
    expect(() => parseHistory(bad)).toThrow(HistoryError);
    expect(() => parseHistory(bad)).toThrow(/header\.tokens/);
  });
});

/**
 * A consumer that sends whatever the draw says: from the start, after an event it was served,
 * by any token it was ever handed (spent, re-sent, expired), or by key. Nothing a real
 * consumer would do, and so the widest set of requests to hold the world and the replay to.
 */
function chaotic(choices: readonly number[]): Consumer {
  return {
    name: 'chaotic',
    capabilities: { delivery: 'at-least-once' },
    run: async (world) => {
      const tokens: string[] = [];
      const events: Page['events'][number][] = [];
      for (const c of choices) {
        const offered = world.source.resumes;
        const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(c / 8) % Math.max(1, list.length)];
        let resume: Resume = { kind: 'start' };
        const t = pick(tokens);
        const e = pick(events);
        if (c % 4 !== 0 && t !== undefined) resume = { kind: 'token', token: t };
        else if (c % 8 === 4 && e !== undefined && offered.includes('after')) resume = { kind: 'after', position: { key: e.key, id: e.id } };
        else if (c % 8 === 4 && e !== undefined && offered.includes('key-gte')) resume = { kind: 'key-gte', key: e.key };
        const request: FetchRequest = { resume, limit: 1 + (c % 3) };
        try {
          const page = await world.fetch(request);
          if (page.next !== null) tokens.push(page.next);
          events.push(...page.events);
        } catch {
          // Refused or lost: the next request is drawn all the same.
        }
      }
      await world.fail('done');
    },
  };
}

describe('the world and ground truth agree on every page, for every token kind (differential)', () => {
  it.each(TOKEN_KINDS.map((k) => [k] as const))('%s: whatever is requested, ground truth reproduces every page served', async (kind) => {
    const profile: SourceProfile = { tokens: kind, resumes: kind === 'scroll' ? ['key-gte'] : ['after'] };
    await fc.assert(
      fc.asyncProperty(planArb(worldOptions({ profile })), fc.array(fc.nat(63), { minLength: 1, maxLength: 30 }), async (p, choices) => {
        expect(p.source.tokens ?? 'continuation').toBe(kind);
        const run = await execute(p, chaotic(choices));
        const verdict = check(run.history).verdict as { status: string; reason?: string };
        expect(verdict.reason ?? '').toBe('');
        expect(verdict.status).not.toBe('error');
      }),
      { numRuns: 150, seed: SEED },
    );
  });

  it('a continuation world is byte for byte what it was: its plan and history carry no token kind', () => {
    fc.assert(
      fc.property(planArb(), (p) => {
        expect('tokens' in p.source).toBe(false);
      }),
      { numRuns: 200, seed: SEED },
    );
  });
});

describe('the reference reads every token kind correctly', () => {
  it.each([
    ['scroll', PROFILES.scrollApi],
    ['scroll, tokens only', { ...PROFILES.scrollApi, resumes: [] } as SourceProfile],
    ['iterator', PROFILES.shardIterator],
    ['iterator, tokens only', { ...PROFILES.shardIterator, resumes: [] } as SourceProfile],
  ] as const)('%s: generated worlds pass', async (_, profile) => {
    const outcome = await checkProperty(referenceConsumer({ profile }), { runs: 300, seed: SEED });
    expect(outcome.counterexample?.result.verdict ?? null).toBeNull();
    expect(outcome.status).toBe('pass');
  });

  it('on a scroll, a lost answer sends it back to its watermark, never to a scroll token', async () => {
    const run = await execute(six('scroll', [{ call: 'fetch', nth: 1, kind: 'timeout' }], ['key-gte']), referenceConsumer());
    expect(run.result.verdict).toEqual({ status: 'pass', anomalies: [] });
    const anchors = run.history.steps.flatMap((s) => (s.kind === 'call' && s.call.kind === 'commit' ? s.call.ops.filter((o) => o.op === 'anchor') : []));
    expect(anchors.length).toBeGreaterThan(0);
    expect(anchors.every((o) => o.op === 'anchor' && o.token === null)).toBe(true);
  });

  it('the built-in variants reference-scroll and reference-iterator declare the presets', () => {
    expect(builtInConsumer('reference-scroll')?.capabilities.profile).toEqual(PROFILES.scrollApi);
    expect(builtInConsumer('reference-iterator')?.capabilities.profile).toEqual(PROFILES.shardIterator);
  });
});

describe('a consumer that treats a scroll or an iterator like a continuation is caught', () => {
  it('R8 retries-served-scroll-request: the retry after a lost answer skips the lost page', async () => {
    const mutant = findMutant('retries-served-scroll-request')!;
    const run = await execute(six('scroll', [{ call: 'fetch', nth: 1, kind: 'timeout' }], ['key-gte']), mutant.consumer);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toContain('premature-watermark');
    // The same consumer on a continuation: the retry is served the same page, and it passes.
    const plain = await execute(six(undefined, [{ call: 'fetch', nth: 1, kind: 'timeout' }], ['key-gte']), mutant.consumer);
    expect(plain.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });

  it('R9 retries-empty-iterator-batch: sending an empty batch again never progresses', async () => {
    const mutant = findMutant('retries-empty-iterator-batch')!;
    const run = await execute(six('iterator', [{ call: 'fetch', nth: 1, kind: 'empty' }]), mutant.consumer);
    expect(run.result.verdict.anomalies.map((a) => a.kind)).toEqual(['liveness']);
    const plain = await execute(six(undefined, [{ call: 'fetch', nth: 1, kind: 'empty' }]), mutant.consumer);
    expect(plain.result.verdict).toEqual({ status: 'pass', anomalies: [] });
  });
});

describe('a profile states what its tokens are', () => {
  it.each<[unknown, string | null]>([
    [{ tokens: 'scroll' }, null],
    [{ tokens: 'iterator', resumes: ['after'] }, null],
    [{ tokens: 'continuation', order: 'newest-first' }, null],
    [{ tokens: 'cursor' }, "tokens must be one of 'continuation', 'scroll', 'iterator'"],
    [{ tokens: 'scroll', order: 'newest-first' }, "tokens must be 'continuation' with order 'newest-first'"],
  ])('%j: %s', (profile, problem) => {
    expect(profileProblem(profile)).toBe(problem);
  });

  it('every preset is a valid profile, and its worlds have its tokens', () => {
    for (const profile of Object.values(PROFILES)) expect(profileProblem(profile)).toBeNull();
    fc.assert(
      fc.property(planArb(worldOptions({ profile: PROFILES.scrollApi })), planArb(worldOptions({ profile: PROFILES.shardIterator })), (s, i) => {
        expect(s.source.tokens).toBe('scroll');
        expect(i.source.tokens).toBe('iterator');
      }),
      { numRuns: 50, seed: SEED },
    );
  });

  it('a plan with tokens of no known kind, or a newest-first source with other than continuations, is refused', () => {
    const scroll = six('scroll');
    expect(validatePlan(scroll)).toBe(scroll);
    expect(() => validatePlan({ ...scroll, source: { ...scroll.source, tokens: 'cursor' as TokenKind } })).toThrow(PlanError);
    expect(() => validatePlan({ ...scroll, source: { ...scroll.source, order: 'newest-first' } })).toThrow(/source\.tokens/);
  });
});

describe('named scenarios meet a scroll or an iterator API with its own tokens', () => {
  it.each([
    ['scrollApi', PROFILES.scrollApi],
    ['shardIterator', PROFILES.shardIterator],
  ] as const)('%s: every scenario runs with its tokens or is skipped for an adversity its API cannot show, and the reference passes', async (_, profile) => {
    const reference = referenceConsumer({ profile });
    for (const s of ALL_SCENARIOS) {
      const why = excludedBy({ profile }, s.plan);
      if (why === null) expect(planFor({ profile }, s.plan).source.tokens).toBe(profile.tokens);
      // What excludes a scenario is what the API cannot show: a quirk, a change, a key arity, a contract.
      else expect(why).toMatch(/never serves|only gains records|ordering field|does not support/);
    }
    const ran = (await checkScenarios(reference)).filter((r) => r.execution !== undefined);
    expect(ran.length).toBeGreaterThan(0);
    for (const r of ran) {
      expect(r.execution?.history.header.tokens).toBe(profile.tokens);
      expect(r.execution?.result.verdict, r.scenario.name).toEqual({ status: 'pass', anomalies: [] });
    }
  });
});

describe('continuation worlds are unchanged', () => {
  it('a plan without a token kind and one that says continuation make the same history', async () => {
    const a = await execute(six(undefined, [{ call: 'fetch', nth: 1, kind: 'timeout' }]), referenceConsumer());
    const b = await execute(six('continuation', [{ call: 'fetch', nth: 1, kind: 'timeout' }]), referenceConsumer());
    expect(hashHistory(b.history)).toBe(hashHistory(a.history));
  });
});
