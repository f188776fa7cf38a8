/**
 * The simulated paginated API on its own: the stable order, the bound stream, every resume
 * form, opaque tokens, malformed requests, each page quirk as scenarios/plan.ts describes
 * it, the head, and mutations kept within each stability contract.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isEligible, type Binding } from '../../model/binding.js';
import { positionOf, type SourceEvent } from '../../model/event.js';
import type { Contract, FetchRequest, Page, Resume, ResumeStyle } from '../../model/history.js';
import type { MutationSpec, PageQuirk, SourceSpec } from '../../scenarios/plan.js';
import { comparePositions } from '../../model/order.js';
import { SEED, worldError } from '../support.js';
import { Source } from '../../src/world/source.js';
import { at, ev } from '../model/histories.js';

const ALL: Binding = { scope: 'orders', filter: { kind: 'all' }, ordering: ['seq'], upTo: null };
const ORDERS: Binding = { ...ALL, filter: { kind: 'equals', attr: 'kind', value: 'order' } };
const EVERY_RESUME: readonly ResumeStyle[] = ['after', 'key-gt', 'key-gte', 'offset'];

function spec(over: Partial<SourceSpec> = {}): SourceSpec {
  return { pageSize: 10, resumes: EVERY_RESUME, contract: { kind: 'insertion-stable' }, ...over };
}

function source(events: readonly SourceEvent[], over: Partial<SourceSpec> = {}, seed = 'seed-1'): Source {
  return new Source(events, spec(over), seed);
}

function request(resume: Resume, limit = 10): FetchRequest {
  return { resume, limit };
}

const ids = (page: Page): string[] => page.events.map((e) => e.id);


/** Seven events a..g at keys 1..7. */
const SEVEN = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id, i) => ev(id, i + 1));

/** Fetches the whole bound stream by token, page by page; returns each page's ids. */
function walk(src: Source, binding: Binding = ALL, limit = 10): string[][] {
  const pages: string[][] = [];
  let resume: Resume = { kind: 'start' };
  for (let i = 0; i < 100; i++) {
    const page = src.fetch(binding, request(resume, limit));
    pages.push(ids(page));
    if (page.next === null) return pages;
    resume = { kind: 'token', token: page.next };
  }
  throw new Error('the walk did not end');
}

describe('the stable order and the bound stream', () => {
  it('R1 serves events by key tuple, ties broken by id, whatever order they were given in', () => {
    const src = source([ev('c', 2), ev('a', 2), ev('z', 1), ev('b', 2), ev('B', 2)]);
    // Plain code-unit order: 'B' sorts before 'a'.
    expect(ids(src.fetch(ALL, request({ kind: 'start' })))).toEqual(['z', 'B', 'a', 'b', 'c']);
  });

  it('R1 compares key tuples field by field', () => {
    const src = source([ev('x', [1, 2]), ev('y', [1, 1]), ev('z', [0, 9]), ev('w', [1, 1])]);
    expect(ids(src.fetch(ALL, request({ kind: 'start' })))).toEqual(['z', 'w', 'y', 'x']);
  });

  it('R1 a run of tied events split across pages loses none of them', () => {
    const src = source([ev('t3', 5), ev('t1', 5), ev('t2', 5), ev('u', 6)], { pageSize: 2 });
    expect(walk(src)).toEqual([['t1', 't2'], ['t3', 'u']]);
  });

  it('R2 the source applies the filter and the snapshot bound itself', () => {
    const events = [
      ev('o1', 1, { attrs: { kind: 'order' } }),
      ev('r2', 2, { attrs: { kind: 'refund' } }),
      ev('o3', 3, { attrs: { kind: 'order' } }),
      ev('x4', 4, { attrs: {} }),
      ev('o5', 5, { attrs: { kind: 'order' } }),
      ev('o6', 6, { attrs: { kind: 'order' } }),
    ];
    const src = source(events);
    const page = src.fetch({ ...ORDERS, upTo: 5 }, request({ kind: 'start' }));
    expect(ids(page)).toEqual(['o1', 'o3', 'o5']);
    expect(page.next).toBeNull();
    const either: Binding = { ...ALL, filter: { kind: 'in', attr: 'kind', values: ['refund', 'order'] }, upTo: 3 };
    expect(ids(src.fetch(either, request({ kind: 'start' })))).toEqual(['o1', 'r2', 'o3']);
  });

  it('R2 the page ends where the bound stream ends, not where the source does', () => {
    const src = source(SEVEN, { pageSize: 3 });
    const page = src.fetch({ ...ALL, upTo: 3 }, request({ kind: 'start' }));
    expect(ids(page)).toEqual(['a', 'b', 'c']);
    expect(page.next).toBeNull();
  });
});

describe('resume forms', () => {
  const tied = [ev('a', 1), ev('b1', 2), ev('b2', 2), ev('c', 3)];

  it('start: from the first event of the bound stream', () => {
    expect(ids(source(tied).fetch(ALL, request({ kind: 'start' }, 2)))).toEqual(['a', 'b1']);
  });

  it('token: continues exactly after the last event of the page that minted it, and ends with null', () => {
    const src = source(SEVEN, { pageSize: 3 });
    expect(walk(src)).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
  });

  it('a request may ask for fewer than the page size, never for more', () => {
    const src = source(SEVEN, { pageSize: 3 });
    expect(ids(src.fetch(ALL, request({ kind: 'start' }, 2)))).toEqual(['a', 'b']);
    expect(ids(src.fetch(ALL, request({ kind: 'start' }, 50)))).toEqual(['a', 'b', 'c']);
  });

  it('after: strictly after a position, by key and then id, even one the stream does not hold', () => {
    const src = source(tied);
    expect(ids(src.fetch(ALL, request({ kind: 'after', position: { key: [2], id: 'b1' } })))).toEqual(['b2', 'c']);
    expect(ids(src.fetch(ALL, request({ kind: 'after', position: { key: [2], id: 'b10' } })))).toEqual(['b2', 'c']);
    expect(ids(src.fetch(ALL, request({ kind: 'after', position: { key: [0], id: 'zz' } })))).toEqual(['a', 'b1', 'b2', 'c']);
  });

  it('after: a point between events, as docs/adapters.md states it: an empty id, a key shorter than the ordering', () => {
    const src = source(tied);
    // The empty id sorts before every id: just before the events at key 2.
    expect(ids(src.fetch(ALL, request({ kind: 'after', position: { key: [2], id: '' } })))).toEqual(['b1', 'b2', 'c']);
    const wide = source([ev('a', [1, 3]), ev('b', [2, 0]), ev('c', [2, 2]), ev('d', [3, 1])]);
    // A shorter key is a prefix that sorts before every key it starts, whatever the id.
    expect(ids(wide.fetch(ALL, request({ kind: 'after', position: { key: [2], id: 'zz' } })))).toEqual(['b', 'c', 'd']);
    expect(ids(wide.fetch(ALL, request({ kind: 'key-gt', key: [2] })))).toEqual(['b', 'c', 'd']);
    expect(ids(wide.fetch(ALL, request({ kind: 'key-gt', key: [2, 2] })))).toEqual(['d']);
  });

  it('R1 key-gt skips every event tied at the key', () => {
    expect(ids(source(tied).fetch(ALL, request({ kind: 'key-gt', key: [2] })))).toEqual(['c']);
  });

  it('R1 key-gte repeats every event tied at the key', () => {
    expect(ids(source(tied).fetch(ALL, request({ kind: 'key-gte', key: [2] })))).toEqual(['b1', 'b2', 'c']);
  });

  it('offset: counts events of the bound stream; past the end is an empty last page', () => {
    const src = source(tied);
    const orders = (e: SourceEvent): SourceEvent => ({ ...e, attrs: { kind: 'order' } });
    const bound = source([...tied.map(orders), ev('r', 0, { attrs: { kind: 'refund' } })]);
    expect(ids(src.fetch(ALL, request({ kind: 'offset', offset: 2 })))).toEqual(['b2', 'c']);
    // The refund at key 0 is filtered out before the offset is counted.
    expect(ids(bound.fetch(ORDERS, request({ kind: 'offset', offset: 2 })))).toEqual(['b2', 'c']);
    const past = src.fetch(ALL, request({ kind: 'offset', offset: 9 }));
    expect(past.events).toEqual([]);
    expect(past.next).toBeNull();
  });
});

describe('tokens', () => {
  it('R8 tokens are opaque: their bytes do not depend on what the page holds', () => {
    const one = source(SEVEN, { pageSize: 2 }, 'same');
    const other = source([ev('zz', 100), ev('yy', 200), ev('xx', 300)], { pageSize: 1 }, 'same');
    const t1 = one.fetch(ALL, request({ kind: 'start' })).next;
    const t2 = other.fetch(ALL, request({ kind: 'start' })).next;
    expect(t1).toMatch(/^[A-Za-z0-9_-]{9}$/);
    expect(t2).toBe(t1);
  });

  it('tokens are deterministic for the same seed, and differ for another seed', () => {
    const tokens = (seed: string): (string | null)[] => {
      const src = source(SEVEN, { pageSize: 2 }, seed);
      const out: (string | null)[] = [];
      let resume: Resume = { kind: 'start' };
      for (;;) {
        const page = src.fetch(ALL, request(resume));
        out.push(page.next);
        if (page.next === null) return out;
        resume = { kind: 'token', token: page.next };
      }
    };
    const first = tokens('alpha');
    expect(first).toHaveLength(4);
    expect(new Set(first.slice(0, 3)).size).toBe(3);
    expect(tokens('alpha')).toEqual(first);
    expect(tokens('beta').slice(0, 3)).not.toEqual(first.slice(0, 3));
  });

  it('R2 a token minted for another binding is a definite stale-token', () => {
    const src = source(SEVEN.map((e) => ({ ...e, attrs: { kind: 'order' } })), { pageSize: 2 });
    const token = src.fetch(ALL, request({ kind: 'start' })).next as string;
    // ORDERS selects the very same events here, yet the token belongs to ALL.
    const error = worldError(() => src.fetch(ORDERS, request({ kind: 'token', token })));
    expect(error.code).toBe('stale-token');
    expect(error.definite).toBe(true);
    // It still works for the binding that minted it.
    expect(ids(src.fetch(ALL, request({ kind: 'token', token })))).toEqual(['c', 'd']);
  });

  it('a token the source never minted is a definite stale-token', () => {
    const error = worldError(() => source(SEVEN).fetch(ALL, request({ kind: 'token', token: 'forged' })));
    expect([error.code, error.definite]).toEqual(['stale-token', true]);
  });
});

describe('bad requests are definite errors', () => {
  it.each(['after', 'key-gt', 'key-gte', 'offset'] as const)('bad-request: resume by %s where the source does not offer it', (style) => {
    const resumes: Record<typeof style, Resume> = {
      after: { kind: 'after', position: { key: [1], id: 'a' } },
      'key-gt': { kind: 'key-gt', key: [1] },
      'key-gte': { kind: 'key-gte', key: [1] },
      offset: { kind: 'offset', offset: 1 },
    };
    const src = source(SEVEN, { resumes: EVERY_RESUME.filter((r) => r !== style) });
    const error = worldError(() => src.fetch(ALL, request(resumes[style])));
    expect([error.code, error.definite]).toEqual(['bad-request', true]);
    expect(error.message).toContain(style);
  });

  it('a source offering nothing else still takes start and its own tokens', () => {
    const src = source(SEVEN, { resumes: [], pageSize: 4 });
    const first = src.fetch(ALL, request({ kind: 'start' }));
    expect(ids(src.fetch(ALL, request({ kind: 'token', token: first.next as string })))).toEqual(['e', 'f', 'g']);
  });

  it.each([
    ['a bare id', 'b'],
    ['a key without an id', { key: [2] }],
    ['a non-numeric key', { key: ['2'], id: 'b' }],
    ['null', null],
  ])('bad-request: resume after %s', (_, position) => {
    const error = worldError(() => source(SEVEN).fetch(ALL, request({ kind: 'after', position })));
    expect([error.code, error.definite]).toEqual(['bad-request', true]);
  });

  it.each([0, -1, 1.5, Number.NaN])('bad-request: page limit %s', (limit) => {
    const error = worldError(() => source(SEVEN).fetch(ALL, request({ kind: 'start' }, limit)));
    expect([error.code, error.definite]).toEqual(['bad-request', true]);
  });

  it.each([-1, 0.5, Number.POSITIVE_INFINITY])('bad-request: offset %s', (offset) => {
    const error = worldError(() => source(SEVEN).fetch(ALL, request({ kind: 'offset', offset })));
    expect([error.code, error.definite]).toEqual(['bad-request', true]);
  });
});

describe('page quirks, as scenarios/plan.ts describes them', () => {
  /** A source of a..g with pages of 3, and the token that follows the first page [a b c]. */
  function afterFirstPage(): { src: Source; token: string } {
    const src = source(SEVEN, { pageSize: 3 });
    const first = src.fetch(ALL, request({ kind: 'start' }));
    expect(ids(first)).toEqual(['a', 'b', 'c']);
    return { src, token: first.next as string };
  }

  const next = (src: Source, page: Page): string[] => ids(src.fetch(ALL, request({ kind: 'token', token: page.next as string })));

  it('R4 overlap: the page repeats the end of the previous page before the new events', () => {
    const { src, token } = afterFirstPage();
    const page = src.fetch(ALL, request({ kind: 'token', token }), 'overlap');
    expect(ids(page)).toEqual(['b', 'c', 'd', 'e', 'f']);
    expect(next(src, page)).toEqual(['g']);
  });

  it('R4 overlap at the start of the stream has nothing to repeat', () => {
    expect(ids(source(SEVEN, { pageSize: 3 }).fetch(ALL, request({ kind: 'start' }), 'overlap'))).toEqual(['a', 'b', 'c']);
  });

  it('R9 repeat: the previous page of this binding is served again, token and all', () => {
    const { src, token } = afterFirstPage();
    const again = src.fetch(ALL, request({ kind: 'token', token }), 'repeat');
    expect(ids(again)).toEqual(['a', 'b', 'c']);
    expect(again.next).toBe(token);
    // The request it answered instead is still good.
    expect(ids(src.fetch(ALL, request({ kind: 'token', token })))).toEqual(['d', 'e', 'f']);
  });

  it('R10 repeat never serves a page from before a change: the insert it would hide shows on a re-read', () => {
    const src = source(SEVEN, { pageSize: 3, contract: { kind: 'replay-window', window: 7 } });
    src.fetch(ALL, request({ kind: 'start' }));
    src.mutate({ before: { call: 'commit', nth: 0 }, kind: 'insert', target: 0, back: 7 }, ALL);
    expect(ids(src.fetch(ALL, request({ kind: 'start' }), 'repeat'))).toEqual(['m0', 'a', 'b']);
    expect(src.quirked).toBe(false);
  });

  it('R9 repeat never serves a page that starts past the request: asked from the start, the start is served', () => {
    const { src, token } = afterFirstPage();
    src.fetch(ALL, request({ kind: 'token', token }));
    expect(ids(src.fetch(ALL, request({ kind: 'start' }), 'repeat'))).toEqual(['a', 'b', 'c']);
    expect(src.quirked).toBe(false);
  });

  it('R9 repeat is per binding, and with no previous page the request is served', () => {
    const events = SEVEN.map((e, i) => ({ ...e, attrs: { kind: i % 2 === 0 ? 'order' : 'refund' } }));
    const src = source(events, { pageSize: 2 });
    expect(ids(src.fetch(ORDERS, request({ kind: 'start' }), 'repeat'))).toEqual(['a', 'c']);
    src.fetch(ALL, request({ kind: 'start' }));
    expect(ids(src.fetch(ORDERS, request({ kind: 'offset', offset: 2 }), 'repeat'))).toEqual(['a', 'c']);
  });

  it('R9 empty: no events, yet a token that resumes exactly where the request did', () => {
    const { src, token } = afterFirstPage();
    const empty = src.fetch(ALL, request({ kind: 'token', token }), 'empty');
    expect(empty.events).toEqual([]);
    expect(empty.next).not.toBeNull();
    expect(empty.next).not.toBe(token);
    expect(next(src, empty)).toEqual(['d', 'e', 'f']);
    const fromStart = src.fetch(ALL, request({ kind: 'start' }), 'empty');
    expect(fromStart.events).toEqual([]);
    expect(next(src, fromStart)).toEqual(['a', 'b', 'c']);
  });

  it('R9 empty at the end of the stream is the ordinary end', () => {
    const src = source(SEVEN);
    const end = src.fetch(ALL, request({ kind: 'offset', offset: 7 }), 'empty');
    expect(end).toEqual({ events: [], next: null, head: 7 });
  });

  it('R9 stale: the token is rejected as expired, definitely, and never accepted again', () => {
    const { src, token } = afterFirstPage();
    const error = worldError(() => src.fetch(ALL, request({ kind: 'token', token }), 'stale'));
    expect([error.code, error.definite]).toEqual(['stale-token', true]);
    expect(worldError(() => src.fetch(ALL, request({ kind: 'token', token }))).code).toBe('stale-token');
    // Only that token expired; a request without one is served as usual.
    expect(ids(src.fetch(ALL, request({ kind: 'after', position: { key: [3], id: 'c' } }), 'stale'))).toEqual(['d', 'e', 'f']);
  });

  it('R1 reorder: the same events in another order, and the token still follows the greatest', () => {
    const { src, token } = afterFirstPage();
    // Three events: rotated, the first last, as a page sorted by something else comes; so
    // that a consumer which only turns a backwards page round reads it out of order.
    const page = src.fetch(ALL, request({ kind: 'token', token }), 'reorder');
    expect(ids(page)).toEqual(['e', 'f', 'd']);
    expect(next(src, page)).toEqual(['g']);
    // An even number of events: reversed, as a page served newest first.
    const two = src.fetch(ALL, request({ kind: 'start' }, 2), 'reorder');
    expect(ids(two)).toEqual(['b', 'a']);
  });

  it('R9 short: fewer events than asked although more remain, with a token to the rest', () => {
    const { src, token } = afterFirstPage();
    const page = src.fetch(ALL, request({ kind: 'token', token }), 'short');
    expect(ids(page)).toEqual(['d']);
    expect(page.next).not.toBeNull();
    expect(next(src, page)).toEqual(['e', 'f', 'g']);
  });

  it('R9 short on the last event is just the last page', () => {
    const page = source(SEVEN).fetch(ALL, request({ kind: 'offset', offset: 6 }), 'short');
    expect(ids(page)).toEqual(['g']);
    expect(page.next).toBeNull();
  });

  it.each(['overlap', 'repeat', 'empty', 'stale', 'reorder', 'short'] as PageQuirk[])('%s still refuses a malformed request', (quirk) => {
    expect(worldError(() => source(SEVEN).fetch(ALL, request({ kind: 'start' }, 0), quirk)).code).toBe('bad-request');
  });
});

describe('the head', () => {
  it('is the largest first ordering field the source holds, eligible or not; null when it holds nothing', () => {
    const src = source([ev('a', [3, 9]), ev('b', [7, 0], { attrs: { kind: 'refund' } }), ev('c', [5, 5])]);
    expect(src.head()).toBe(7);
    expect(src.fetch(ORDERS, request({ kind: 'start' })).head).toBe(7);
    expect(source([]).head()).toBeNull();
    expect(source([]).fetch(ALL, request({ kind: 'start' }))).toEqual({ events: [], next: null, head: null });
  });

  it.each<[string, Contract]>([
    ['snapshot', { kind: 'snapshot' }],
    ['insertion-stable', { kind: 'insertion-stable' }],
    ['replay-window', { kind: 'replay-window', window: 3 }],
    ['none', { kind: 'none' }],
  ])('R10 only grows under mutation (%s), and covers every event held', (_, contract) => {
    const src = source(SEVEN, { contract });
    const kinds = ['insert', 'move', 'flip'] as const;
    let head = src.head() as number;
    for (let i = 0; i < 30; i++) {
      const { event } = src.mutate({ before: { call: 'commit', nth: i }, kind: kinds[i % 3] as MutationSpec['kind'], target: i * 5, back: (i * 7) % 11 }, { ...ALL, upTo: 9 });
      const now = src.head() as number;
      expect(now).toBeGreaterThanOrEqual(head);
      expect(now).toBeGreaterThanOrEqual(event.key[0] as number);
      head = now;
    }
    const all = src.fetch(ALL, request({ kind: 'start' }, 1000));
    expect(Math.max(...all.events.map((e) => e.key[0] as number))).toBeLessThanOrEqual(head);
  });
});

describe('mutations keep the contract', () => {
  const m = (kind: MutationSpec['kind'], target: number, back: number): MutationSpec => ({ before: { call: 'commit', nth: 0 }, kind, target, back });
  const everything = (src: Source): SourceEvent[] => [...src.fetch(ALL, request({ kind: 'start' }, 1000)).events];
  const orderly = SEVEN.map((e, i) => ({ ...e, attrs: { kind: i % 2 === 0 ? 'order' : 'refund' } }));

  it.each(['insert', 'move', 'flip'] as const)('R10 snapshot: a %s becomes an insert beyond the bound, and nothing within it changes', (kind) => {
    const src = source(orderly, { contract: { kind: 'snapshot' }, pageSize: 1000 });
    const bound: Binding = { ...ALL, upTo: 9 };
    const before = src.fetch(bound, request({ kind: 'start' }));
    const firsts: number[] = [];
    for (const back of [0, 3, 100]) {
      const { event, mutation } = src.mutate(m(kind, 2, back), bound);
      expect(mutation).toBe('insert');
      expect(event.version).toBe(1);
      firsts.push(event.key[0] as number);
    }
    // Beyond both the bound (9) and the head (7), then beyond each new head.
    expect(firsts).toEqual([10, 11, 12]);
    expect(src.fetch(bound, request({ kind: 'start' })).events).toEqual(before.events);
  });

  it('R10 snapshot without an upper bound: new events land after the head', () => {
    const src = source(SEVEN, { contract: { kind: 'snapshot' } });
    expect(src.mutate(m('move', 1, 5), ALL).event.key).toEqual([8]);
  });

  it.each(['insert', 'move', 'flip'] as const)('R10 insertion-stable: a %s that asks for nothing (back 0) lands right after the head', (kind) => {
    const src = source(orderly, { contract: { kind: 'insertion-stable' } });
    const { event, mutation } = src.mutate(m(kind, 2, 0), ALL);
    expect(mutation).toBe(kind);
    expect(event.key).toEqual([8]);
    expect(src.head()).toBe(8);
    if (kind === 'insert') return;
    // A new version of the target c (the 3rd event in the order), which replaces it.
    expect(event).toMatchObject({ id: 'c', version: 2 });
    expect(event.attrs.kind).toBe(kind === 'flip' ? 'refund' : 'order');
    const held = everything(src).filter((e) => e.id === 'c');
    expect(held).toEqual([event]);
  });

  it('R10 insertion-stable: a change that asks to land back ties at the newest key when its id sorts after the newest one, else lands after the head', () => {
    const src = source(orderly, { contract: { kind: 'insertion-stable' } });
    // The newest event is g at 7; m0 sorts after g, so it lands at 7 too: a new row with the newest row's timestamp.
    expect(src.mutate(m('insert', 0, 5), ALL).event).toMatchObject({ id: 'm0', version: 1, key: [7] });
    expect(src.head()).toBe(7);
    // c sorts before m0, the newest now: it cannot tie, so it ticks the clock.
    expect(src.mutate(m('move', 2, 5), ALL).event).toMatchObject({ id: 'c', version: 2, key: [8] });
    // c is the newest now, and no id sorts after itself: a change of c lands after the head again.
    expect(src.mutate(m('flip', 7, 1), ALL).event).toMatchObject({ id: 'c', version: 3, key: [9] });
    // m1 ties with c at 9.
    expect(src.mutate(m('insert', 1, 1), ALL).event).toMatchObject({ id: 'm1', key: [9] });
    // With two ordering fields the tie takes the newest event's whole key.
    const wide = source([ev('a', [1, 4]), ev('b', [2, 3])], { contract: { kind: 'insertion-stable' } });
    expect(wide.mutate(m('insert', 0, 2), { ...ALL, ordering: ['day', 'seq'] }).event.key).toEqual([2, 3]);
  });

  it('R10 insertion-stable: whatever is asked, every change lands after every position the source held', () => {
    const src = source(orderly, { contract: { kind: 'insertion-stable' } });
    const kinds = ['insert', 'move', 'flip'] as const;
    let ties = 0;
    for (let i = 0; i < 60; i++) {
      const held = everything(src);
      const { event } = src.mutate(m(kinds[i % 3] as MutationSpec['kind'], (i * 5) % 9, i % 4), ALL);
      for (const e of held) if (e.id !== event.id || e.version !== event.version) expect(comparePositions(positionOf(event), positionOf(e))).toBeGreaterThan(0);
      if (held.some((e) => e.key[0] === event.key[0])) ties++;
    }
    // Ties at the newest key do happen, not only clock ticks.
    expect(ties).toBeGreaterThanOrEqual(3);
  });

  it('R10 replay-window(n): no change lands more than n behind the head', () => {
    const src = source(orderly, { contract: { kind: 'replay-window', window: 2 } });
    const inserted = src.mutate(m('insert', 0, 100), ALL).event;
    expect(inserted.key).toEqual([5]); // head 7, window 2
    const near = src.mutate(m('insert', 0, 1), ALL).event;
    expect(near.key).toEqual([6]);
    const moved = src.mutate(m('move', 0, 100), ALL).event; // target a, at 1
    expect(moved).toMatchObject({ id: 'a', version: 2, key: [5] });
    expect(src.head()).toBe(7);
  });

  it.each([['replay-window', { kind: 'replay-window', window: 2 }], ['none', { kind: 'none' }]] as const)(
    'R10 %s: a change that asks to land nowhere behind the head (back 0) is a new record past it, and the head moves on',
    (_, contract) => {
      const src = source(orderly, { contract });
      const fresh = src.mutate(m('insert', 0, 0), ALL).event;
      expect(fresh.key).toEqual([8]); // head 7
      expect(src.head()).toBe(8);
      // Later ones are late against the new head.
      expect(src.mutate(m('insert', 0, 1), ALL).event.key).toEqual([7]);
      expect(src.mutate(m('move', 3, 0), ALL).event.key).toEqual([9]);
      expect(src.head()).toBe(9);
    },
  );

  it('R10 replay-window(n): a flip happens in place only inside the window', () => {
    const src = source(orderly, { contract: { kind: 'replay-window', window: 2 } });
    const inside = src.mutate(m('flip', 5, 100), ALL).event; // f, at 6: inside the window
    expect(inside).toMatchObject({ id: 'f', version: 2, key: [6], attrs: { kind: 'order' } });
    const outside = src.mutate(m('flip', 0, 100), ALL).event; // a, at 1: far outside
    expect(outside).toMatchObject({ id: 'a', version: 2, key: [5], attrs: { kind: 'refund' } });
  });

  it('R10 none: a change may land anywhere behind the head, and a flip stays in place', () => {
    const src = source(orderly, { contract: { kind: 'none' } });
    expect(src.mutate(m('insert', 0, 100), ALL).event.key).toEqual([0]);
    expect(src.mutate(m('insert', 0, 4), ALL).event.key).toEqual([3]);
    const moved = src.mutate(m('move', 6, 6), ALL).event; // the 7th in order: e, since two inserts sort first
    expect(moved).toMatchObject({ id: 'e', version: 2, key: [1] });
    const flipped = src.mutate(m('flip', 1, 0), ALL).event; // the 2nd in order: a, at 1, far behind the head
    expect(flipped).toMatchObject({ id: 'a', version: 2, key: [1], attrs: { kind: 'refund' } });
    expect(src.head()).toBe(7);
  });

  it('R10 none and replay-window: in a world whose keys run from below zero, a change lands as far behind the head as in one from zero', () => {
    const below = orderly.map((e) => ({ ...e, key: [(e.key[0] as number) - 10] })); // -9 to -3
    const none = source(below, { contract: { kind: 'none' } });
    // As far back as the lowest key the world started with, as a world from 0 lands at 0.
    expect(none.mutate(m('insert', 0, 100), ALL).event.key).toEqual([-9]);
    expect(none.mutate(m('move', 3, 4), ALL).event.key).toEqual([-7]);
    const window = source(below, { contract: { kind: 'replay-window', window: 2 } });
    expect(window.mutate(m('insert', 0, 100), ALL).event.key).toEqual([-5]);
    // A world from zero still lands no lower than 0.
    expect(source(orderly.map((e) => ({ ...e, key: [(e.key[0] as number) + 10] })), { contract: { kind: 'none' } }).mutate(m('insert', 0, 100), ALL).event.key).toEqual([0]);
  });

  it('R10 a mutation keeps the width of the ordering tuple', () => {
    const src = source([ev('a', [1, 4]), ev('b', [2, 8])], { contract: { kind: 'insertion-stable' } });
    expect(src.mutate(m('insert', 0, 0), { ...ALL, ordering: ['day', 'seq'] }).event.key).toEqual([3, 0]);
  });

  it('R1 inserted ids never collide with existing ones', () => {
    const src = source([ev('m0', 1), ev('m1', 2), ev('m3', 3), ev('x', 4)], { contract: { kind: 'none' } });
    const fresh = Array.from({ length: 4 }, (_, i) => src.mutate(m('insert', i, i), ALL).event.id);
    expect(fresh).toEqual(['m2', 'm4', 'm5', 'm6']);
    const held = everything(src).map((e) => e.id);
    expect(new Set(held).size).toBe(held.length);
    expect(held).toHaveLength(8);
  });
});

describe('kept streams stay what a fresh filter and sort would serve', () => {
  // The source keeps each binding's stream and updates it on every mutation; the model's own
  // filter and order, run from scratch over the events it holds, say what it must serve.
  const kinds = ['order', 'refund', 'other'] as const;
  const eventsArb = fc.uniqueArray(
    fc.record({ id: fc.constantFrom('a', 'A', 'ab', 'b', 'B', 'ba', 'c', 'm0', 'm1', 'x'), key: fc.integer({ min: 0, max: 4 }), kind: fc.constantFrom(...kinds) }),
    { selector: (e) => e.id, maxLength: 9 },
  );
  const bindingArb = fc.record({
    filter: fc.constantFrom<Binding['filter']>({ kind: 'all' }, { kind: 'equals', attr: 'kind', value: 'order' }, { kind: 'in', attr: 'kind', values: ['refund', 'other'] }),
    upTo: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
  });
  const mutationArb = fc.record({ kind: fc.constantFrom('insert', 'move', 'flip') as fc.Arbitrary<MutationSpec['kind']>, target: fc.nat(12), back: fc.nat(6), read: fc.nat(2) });
  const contractArb = fc.constantFrom<Contract>({ kind: 'insertion-stable' }, { kind: 'replay-window', window: 2 }, { kind: 'none' });

  it('after any mutations, under every binding read so far or read for the first time', () => {
    fc.assert(
      fc.property(eventsArb, fc.array(bindingArb, { minLength: 1, maxLength: 3 }), fc.array(mutationArb, { maxLength: 8 }), contractArb, fc.integer({ min: 1, max: 4 }), (draws, bounds, changes, contract, pageSize) => {
        const initial = draws.map((d) => ev(d.id, d.key, { attrs: { kind: d.kind } }));
        const src = source(initial, { contract, pageSize });
        const bindings = bounds.map((b): Binding => ({ ...ALL, ...b }));
        const held = new Map(initial.map((e) => [e.id, e]));
        const expected = (b: Binding): string[] => [...held.values()].filter((e) => isEligible(b, e)).sort((x, y) => comparePositions(at(x), at(y))).map((e) => `${e.id}@${e.version}`);
        const walkVersions = (b: Binding): string[] => {
          const out: string[] = [];
          let resume: Resume = { kind: 'start' };
          for (;;) {
            const page = src.fetch(b, request(resume, pageSize));
            out.push(...page.events.map((e) => `${e.id}@${e.version}`));
            if (page.next === null) return out;
            resume = { kind: 'token', token: page.next };
          }
        };
        expect(walkVersions(bindings[0]!)).toEqual(expected(bindings[0]!));
        for (const change of changes) {
          const { event } = src.mutate({ before: { call: 'fetch', nth: 0 }, kind: change.kind, target: change.target, back: change.back }, bindings[0]!);
          held.set(event.id, event);
          // Read under some of the bindings between changes, so that some streams are kept and others built late.
          const b = bindings[change.read % bindings.length]!;
          expect(walkVersions(b)).toEqual(expected(b));
        }
        for (const b of bindings) expect(walkVersions(b)).toEqual(expected(b));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('what the source serves cannot be changed by whoever holds it', () => {
  it('a page, its event list and its events are frozen, and the plan\u2019s events are not the ones served', () => {
    const initial = SEVEN.map((e) => ({ ...e, attrs: { kind: 'order' } }));
    const src = source(initial);
    const page = src.fetch(ALL, request({ kind: 'start' }, 3));
    const e = page.events[0]!;
    expect(Object.isFrozen(page) && Object.isFrozen(page.events) && Object.isFrozen(e) && Object.isFrozen(e.key) && Object.isFrozen(e.attrs)).toBe(true);
    expect(() => ((e.key as number[])[0] = 99)).toThrow(TypeError);
    expect(() => ((page.events as SourceEvent[]).length = 0)).toThrow(TypeError);
    expect(initial.some((i) => i === e)).toBe(false);
    expect(Object.isFrozen(initial[0])).toBe(false);
    expect(ids(src.fetch(ALL, request({ kind: 'start' }, 3)))).toEqual(['a', 'b', 'c']);
  });
});

describe('a newest-first source', () => {
  const newestFirst = (events: readonly SourceEvent[], over: Partial<SourceSpec> = {}): Source => source(events, { pageSize: 3, resumes: [], order: 'newest-first', ...over });

  it('start gives the newest page, each token the next older one, and the oldest page ends the stream', () => {
    expect(walk(newestFirst(SEVEN))).toEqual([
      ['g', 'f', 'e'],
      ['d', 'c', 'b'],
      ['a'],
    ]);
    // A page that ends exactly at the oldest event ends the stream: no empty page after it.
    expect(walk(newestFirst(SEVEN.slice(0, 6)))).toEqual([
      ['f', 'e', 'd'],
      ['c', 'b', 'a'],
    ]);
    expect(walk(newestFirst([]))).toEqual([[]]);
  });

  it('R1 ties are served newest first too: by key, then id, descending', () => {
    expect(walk(newestFirst([ev('b', 2), ev('a', 2), ev('c', 1), ev('d', 2)]), ALL, 2)).toEqual([
      ['d', 'b'],
      ['a', 'c'],
    ]);
  });

  it('R2 it applies the filter and the snapshot bound itself', () => {
    const src = newestFirst(SEVEN.map((e, i) => ({ ...e, attrs: { kind: i % 2 === 0 ? 'order' : 'refund' } })));
    expect(walk(src, ORDERS)).toEqual([['g', 'e', 'c'], ['a']]);
    expect(walk(src, { ...ALL, upTo: 4 })).toEqual([['d', 'c', 'b'], ['a']]);
  });

  it('an event inserted at the top is not on the older pages of a read under way; the next read from the start begins with it', () => {
    const src = newestFirst(SEVEN);
    const first = src.fetch(ALL, request({ kind: 'start' }));
    const { event } = src.mutate({ before: { call: 'fetch', nth: 0 }, kind: 'insert', target: 0, back: 0 }, ALL);
    expect(event.key).toEqual([8]);
    expect(ids(src.fetch(ALL, request({ kind: 'token', token: first.next as string })))).toEqual(['d', 'c', 'b']);
    expect(ids(src.fetch(ALL, request({ kind: 'start' })))).toEqual([event.id, 'g', 'f']);
  });

  it.each(['after', 'key-gt', 'key-gte', 'offset'] as const)('resumes only from the start or by token: %s is a bad request, even were it listed', (style) => {
    const resume: Resume =
      style === 'after' ? { kind: 'after', position: { key: [3], id: 'c' } } : style === 'offset' ? { kind: 'offset', offset: 1 } : { kind: style, key: [3] };
    const error = worldError(() => newestFirst(SEVEN, { resumes: [style] }).fetch(ALL, request(resume)));
    expect([error.code, error.definite]).toEqual(['bad-request', true]);
  });

  it('R2 a token minted for another binding, or never minted, is a definite stale-token', () => {
    const src = newestFirst(SEVEN);
    const token = src.fetch(ALL, request({ kind: 'start' })).next as string;
    expect(worldError(() => src.fetch(ORDERS, request({ kind: 'token', token }))).code).toBe('stale-token');
    expect(worldError(() => src.fetch(ALL, request({ kind: 'token', token: 'never-minted' }))).code).toBe('stale-token');
  });

  it('R9 empty: no events, yet a token that resumes exactly where the request did', () => {
    const src = newestFirst(SEVEN);
    const empty = src.fetch(ALL, request({ kind: 'start' }), 'empty');
    expect([empty.events, src.quirked]).toEqual([[], true]);
    const after = src.fetch(ALL, request({ kind: 'token', token: empty.next as string }));
    expect(ids(after)).toEqual(['g', 'f', 'e']);
    const again = src.fetch(ALL, request({ kind: 'token', token: after.next as string }), 'empty');
    expect(ids(src.fetch(ALL, request({ kind: 'token', token: again.next as string })))).toEqual(['d', 'c', 'b']);
  });

  it('R9 empty with nothing left below is the ordinary end', () => {
    expect(newestFirst([]).fetch(ALL, request({ kind: 'start' }), 'empty')).toEqual({ events: [], next: null, head: null });
    // The only older event moves to the top while the read is under way: below the token, nothing is left.
    const src = newestFirst([ev('a', 1), ev('b', 2)], { pageSize: 1 });
    const token = src.fetch(ALL, request({ kind: 'start' })).next as string;
    src.mutate({ before: { call: 'fetch', nth: 0 }, kind: 'move', target: 0, back: 0 }, ALL);
    expect([src.fetch(ALL, request({ kind: 'token', token }), 'empty'), src.quirked]).toEqual([{ events: [], next: null, head: 3 }, false]);
  });

  it('R9 short: the newest event alone although more remain, with a token to the rest; on the oldest event it is just the last page', () => {
    const src = newestFirst(SEVEN);
    const page = src.fetch(ALL, request({ kind: 'start' }), 'short');
    expect([ids(page), src.quirked]).toEqual([['g'], true]);
    expect(ids(src.fetch(ALL, request({ kind: 'token', token: page.next as string })))).toEqual(['f', 'e', 'd']);
    const last = newestFirst(SEVEN.slice(0, 1)).fetch(ALL, request({ kind: 'start' }), 'short');
    expect([ids(last), last.next]).toEqual([['a'], null]);
  });

  it('R9 stale: the token is rejected as expired, definitely, and never accepted again', () => {
    const src = newestFirst(SEVEN);
    const token = src.fetch(ALL, request({ kind: 'start' })).next as string;
    expect(worldError(() => src.fetch(ALL, request({ kind: 'token', token }), 'stale')).code).toBe('stale-token');
    expect(worldError(() => src.fetch(ALL, request({ kind: 'token', token }))).code).toBe('stale-token');
  });

  it.each(['overlap', 'repeat', 'reorder'] as PageQuirk[])('%s, a page it never serves, does not fire: the page is the ordinary one', (quirk) => {
    const src = newestFirst(SEVEN);
    const token = src.fetch(ALL, request({ kind: 'start' })).next as string;
    expect([ids(src.fetch(ALL, request({ kind: 'token', token }), quirk)), src.quirked]).toEqual([['d', 'c', 'b'], false]);
  });

  it('R1 over any stream and any changes, a read from the start serves the bound stream exactly, newest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(6), fc.nat(2)), { maxLength: 14 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.record({ kind: fc.constantFrom('insert', 'move', 'flip'), target: fc.nat(20), back: fc.nat(4) }), { maxLength: 5 }),
        (keys, pageSize, changes) => {
          const events = keys.map(([k, kind], i) => ({ ...ev(`e${String(i).padStart(2, '0')}`, k), attrs: { kind: kind === 0 ? 'refund' : 'order' } }));
          const src = newestFirst(events, { pageSize, contract: { kind: 'none' } });
          const held = new Map<string, SourceEvent>(events.map((e) => [e.id, e]));
          const expected = (b: Binding): string[] => [...held.values()].filter((e) => isEligible(b, e)).sort(comparePositions).reverse().map((e) => `${e.id}@${e.version}`);
          const read = (b: Binding): string[] => {
            const out: string[] = [];
            let resume: Resume = { kind: 'start' };
            for (;;) {
              const page = src.fetch(b, request(resume));
              expect(page.events.length).toBeLessThanOrEqual(pageSize);
              out.push(...page.events.map((e) => `${e.id}@${e.version}`));
              if (page.next === null) return out;
              resume = { kind: 'token', token: page.next };
            }
          };
          for (const b of [ALL, ORDERS]) expect(read(b)).toEqual(expected(b));
          for (const change of changes) {
            const { event } = src.mutate({ before: { call: 'fetch', nth: 0 }, kind: change.kind as MutationSpec['kind'], target: change.target, back: change.back }, ALL);
            held.set(event.id, event);
            for (const b of [ALL, ORDERS]) expect(read(b)).toEqual(expected(b));
          }
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });
});
