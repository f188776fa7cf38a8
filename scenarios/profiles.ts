import type { Contract, DeliveryOrder, ResumeStyle } from '../model/history.js';
import { TOKEN_KINDS, type TokenKind } from '../model/tokens.js';
import type { PlanOptions } from './arbitraries.js';
import { isPageQuirk, NEWEST_FIRST_QUIRKS, PAGE_QUIRKS, type PageQuirk, type Plan } from './plan.js';

/**
 * The source API a consumer is written against, as its adapter declares it. A consumer
 * for a SQL keyset table never sees an opaque cursor; one for an offset API never resumes
 * after a position; one that stops for an operator on a refused effect does not
 * dead-letter. Generated worlds fix what the profile says and vary only what it leaves
 * open; named scenarios it excludes are skipped, with the reason. Every field is optional:
 * an empty profile leaves everything open, as no profile does.
 */
export interface SourceProfile {
  /**
   * The resume forms the consumer uses, besides the opaque token every source offers:
   * worlds offer exactly these. `[]` means tokens only; `['after']` a keyset API;
   * `['key-gte']` an `updated_since` API; `['offset']` an offset API.
   */
  readonly resumes?: readonly ResumeStyle[];
  /** How many ordering fields a key has: 1 (a timestamp, a sequence number) or 2. */
  readonly keyArity?: 1 | 2;
  /**
   * What the first ordering field holds: `any` finite number (the default: worlds write it
   * as whole numbers, as quarters, or from below zero), or `whole` numbers from 0 only (a
   * sequence number, or a timestamp in whole units, as a connector's cursor is).
   */
  readonly keyValues?: 'any' | 'whole';
  /**
   * Whether records change after they were written (a change is a new version of the
   * record), or the source only ever gains new records. `false`: worlds only insert.
   */
  readonly mutable?: boolean;
  /**
   * What the consumer does when its sink refuses an effect (a poison event): `dead-letter`
   * it and go on (the default); `fail-visibly`, stopping for an operator, which is then the
   * honest outcome rather than a liveness failure; or `never`: its sink never refuses an
   * effect, so worlds have no poison events.
   */
  readonly refusals?: 'dead-letter' | 'fail-visibly' | 'never';
  /** The stability contracts such a source can have; combined with `capabilities.contracts`, both must allow one. */
  readonly contracts?: readonly Contract['kind'][];
  /**
   * The page quirks the API can show: what it guarantees is what it leaves out. `reorder`
   * (a page out of order), `overlap` (a page starting inside the previous one), `repeat`
   * (the previous page again), `empty` (no events, but a token), `short` (fewer than asked
   * although more remain), `stale` (a token rejected as expired). An API with a documented
   * sort order leaves out `reorder`; one whose tokens never expire leaves out `stale`. `[]`:
   * none. Worlds serve only these, and a named scenario built on another is skipped, saying so.
   */
  readonly quirks?: readonly PageQuirk[];
  /**
   * The order the API lists records in: `ascending` (oldest first, the default) or
   * `newest-first` (descending creation time, as many list endpoints do), read from the top
   * down to the consumer's bookmark on every sync. A newest-first API resumes only from the
   * start or by token (`resumes` must be `[]` or absent) and shows only the quirks that mean
   * the same read downwards: `empty`, `short`, `stale`.
   */
  readonly order?: DeliveryOrder;
  /**
   * What a page token is (model/tokens.ts): `continuation` (the default), sent again it
   * serves the same page again; `scroll`, a stateful scroll or cursor the server moves on
   * whenever it serves a page, so a request whose answer was lost cannot be retried, only
   * restarted from the consumer's own watermark; `iterator`, an iterator chain (shard
   * iterators) where a token whose batch came back empty serves that empty batch again
   * every time, and only the batch's own `next` moves on. Ascending APIs only.
   */
  readonly tokens?: TokenKind;
  /**
   * Under a replay window: the widest the API's is, in keys (how far behind the newest
   * record a late one can land). Worlds draw no wider window, and a named scenario with a
   * wider one is skipped, saying so. Undefined: windows as wide as worlds draw them.
   */
  readonly window?: number;
}

/**
 * Presets for common API shapes. Spread one and override what differs:
 * `{ ...PROFILES.sqlKeyset, refusals: 'fail-visibly' }`.
 */
export const PROFILES = {
  /**
   * A SQL table read by keyset pagination: `WHERE (updated_at, id) > (?, ?) ORDER BY
   * updated_at, id LIMIT n`. It resumes strictly after a full position; rows are updated,
   * each update a new version with a new `updated_at`.
   */
  sqlKeyset: { resumes: ['after'], keyArity: 1, mutable: true, quirks: [] },
  /**
   * A REST API with an inclusive `updated_since` filter and a cursor token for the next
   * page: it resumes by `key-gte` on the timestamp (re-reading the ties, deduplicated) and
   * follows tokens within a sync. Records are updated.
   */
  restUpdatedSince: { resumes: ['key-gte'], keyArity: 1, mutable: true },
  /**
   * The same API with the guarantees its documentation gives: results sorted by
   * `updated_at`, cursors that do not expire, pages that never repeat or overlap. What is
   * left is what such APIs still do: a short page before the end, an empty page with a token.
   */
  restSortedUpdatedSince: { resumes: ['key-gte'], keyArity: 1, mutable: true, quirks: ['short', 'empty'] },
  /**
   * An API paginated by `offset` and `limit` over records that are only ever added: an
   * offset stays put only while nothing changes before it.
   */
  offsetApi: { resumes: ['offset'], mutable: false },
  /**
   * A change log (CDC stream, outbox table, log partition): every change is a new entry at
   * the end, read on after the last entry's position (its sequence number).
   */
  changeLog: { resumes: ['after'], keyArity: 1, mutable: true, contracts: ['insertion-stable'] },
  /**
   * A REST list endpoint that serves the newest records first (`GET /events`, sorted by
   * creation time, descending) and pages on with a cursor token: a sync reads from the top
   * down to its bookmark. Records are only ever added, new ones at the top.
   */
  restNewestFirst: { order: 'newest-first', resumes: [], keyArity: 1, mutable: false, contracts: ['insertion-stable', 'snapshot'], quirks: ['short', 'empty', 'stale'] },
  /**
   * A scroll API (an Elasticsearch scroll, a server-side cursor): a search opens a scroll,
   * and every request with its id gets the next page, the server moving the scroll on as it
   * serves. A sync restarts with a new search from its watermark (`ts >= watermark`); a
   * scroll that is not used in time expires. Documents are updated.
   */
  scrollApi: { tokens: 'scroll', resumes: ['key-gte'], keyArity: 1, mutable: true, quirks: ['short', 'stale'] },
  /**
   * A shard of a stream read through an iterator chain (Kinesis, DynamoDB Streams): each
   * batch carries the iterator for the next one, an empty batch included, and only that one
   * moves on; a restart gets a new iterator after its checkpoint's sequence number. Records
   * are appended; iterators expire.
   */
  shardIterator: { tokens: 'iterator', resumes: ['after'], keyArity: 1, mutable: false, contracts: ['insertion-stable'], quirks: ['empty', 'short', 'stale'] },
} as const satisfies Record<string, SourceProfile>;

/** What a consumer claims that decides its worlds: its contracts and its profile. */
export interface WorldClaims {
  readonly contracts?: readonly Contract['kind'][];
  readonly profile?: SourceProfile;
}

/** The contracts both the claims and the profile allow; undefined when neither restricts them. */
function allowedContracts(claims: WorldClaims): readonly Contract['kind'][] | undefined {
  const { contracts } = claims;
  const fixed = claims.profile?.contracts;
  if (contracts === undefined) return fixed;
  if (fixed === undefined) return contracts;
  return contracts.filter((k) => fixed.includes(k));
}

/** The generator options for a consumer's claims, on top of any the caller gives. */
export function worldOptions(claims: WorldClaims, options: PlanOptions = {}): PlanOptions {
  const contracts = allowedContracts(claims);
  return { ...options, ...(contracts === undefined ? {} : { contracts }), ...(claims.profile === undefined ? {} : { profile: claims.profile }) };
}

/**
 * A named scenario's world as a consumer with these claims meets it. A scenario is defined by
 * its adversity (where a fault lands, which quirk, which change, which competition), not by
 * the resume forms its source happens to offer: so the source offers the consumer's resume
 * forms too, and a `key-gte` consumer meets the seed's 41/42/43 example like any other.
 */
export function planFor(claims: WorldClaims, plan: Plan): Plan {
  // A newest-first API lists its records in that order and resumes by token only: the
  // scenario's adversity, on the API the consumer reads.
  if (claims.profile?.order === 'newest-first') return { ...plan, source: { ...plan.source, order: 'newest-first', resumes: [] } };
  const missing = (claims.profile?.resumes ?? []).filter((r) => !plan.source.resumes.includes(r));
  const offered = missing.length === 0 ? plan : { ...plan, source: { ...plan.source, resumes: [...plan.source.resumes, ...missing] } };
  // Its tokens are what the consumer's API's tokens are: the same adversity, met with them.
  const tokens = claims.profile?.tokens;
  return tokens === undefined || tokens === 'continuation' ? offered : { ...offered, source: { ...offered.source, tokens } };
}

/** Why a named scenario's world is not one the consumer is written for, or null if it is (see planFor). */
export function excludedBy(claims: WorldClaims, plan: Plan): string | null {
  plan = planFor(claims, plan);
  const contracts = allowedContracts(claims);
  const kind = plan.source.contract.kind;
  if (contracts !== undefined && !contracts.includes(kind)) return `the consumer does not support ${kind} sources`;
  const profile = claims.profile;
  if (profile === undefined) return null;
  const missing = (profile.resumes ?? []).filter((r) => !plan.source.resumes.includes(r));
  if (missing.length > 0) {
    const offered = plan.source.resumes.length === 0 ? 'opaque tokens only' : `resume by token or ${plan.source.resumes.join(', ')}`;
    return `the consumer resumes by ${missing.join(', ')}, and this scenario's source offers ${offered}`;
  }
  const arity = plan.binding.ordering.length;
  if (profile.keyArity !== undefined && profile.keyArity !== arity) {
    return `the consumer's keys have ${profile.keyArity} ordering field(s), and this scenario orders by ${arity}`;
  }
  const changes = kind === 'snapshot' ? [] : plan.mutations.filter((m) => m.kind !== 'insert');
  if (profile.mutable === false && changes.length > 0) {
    return `the consumer's source only gains records, and this scenario changes one (${changes[0]?.kind})`;
  }
  if (profile.refusals === 'never' && plan.poison.length > 0) return "the consumer's sink never refuses an effect, and this scenario has a poison event";
  const contract = plan.source.contract;
  if (contract.kind === 'replay-window' && profile.window !== undefined && contract.window > profile.window) {
    return `the consumer's API replays at most ${profile.window} key(s) behind its newest record (its profile's window), and this scenario's window is ${contract.window}`;
  }
  const quirks = quirksOf(profile);
  const quirk = quirks === undefined ? undefined : plan.faults.find((f) => isPageQuirk(f.kind) && !quirks.includes(f.kind));
  if (quirk !== undefined) return `the consumer's API never serves ${/^[aeiou]/.test(quirk.kind) ? 'an' : 'a'} ${quirk.kind} page (its profile's quirks: ${quirks!.length === 0 ? 'none' : quirks!.join(', ')}), and this scenario is built on one`;
  return null;
}

/** The page quirks a profile's API can show; undefined when it leaves them all open. A newest-first API shows at most NEWEST_FIRST_QUIRKS. */
function quirksOf(profile: SourceProfile | undefined): readonly PageQuirk[] | undefined {
  if (profile?.order !== 'newest-first') return profile?.quirks;
  return profile.quirks ?? NEWEST_FIRST_QUIRKS;
}

/** Whether a generated world may serve this fault: a page quirk only if the profile lets its API show it. */
export function quirkAllowed(profile: SourceProfile | undefined, kind: string): boolean {
  const quirks = quirksOf(profile);
  return quirks === undefined || !isPageQuirk(kind as PageQuirk) || quirks.includes(kind as PageQuirk);
}

const PROFILE_KEYS = ['resumes', 'keyArity', 'keyValues', 'mutable', 'refusals', 'contracts', 'quirks', 'order', 'tokens', 'window'];
const RESUME_STYLES = ['token', 'after', 'key-gt', 'key-gte', 'offset'];
const CONTRACT_KINDS = ['snapshot', 'insertion-stable', 'replay-window', 'none'];

/** What is wrong with a profile an adapter declared, or null: it comes from outside, maybe from another language. */
export function profileProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object';
  const p = value as Record<string, unknown>;
  const unknown = Object.keys(p).find((k) => !PROFILE_KEYS.includes(k));
  if (unknown !== undefined) return `has no field ${JSON.stringify(unknown)} (fields: ${PROFILE_KEYS.join(', ')})`;
  if (p.resumes !== undefined && !(Array.isArray(p.resumes) && p.resumes.every((r) => RESUME_STYLES.includes(r as string) && r !== 'token'))) {
    return `resumes must list some of ${RESUME_STYLES.filter((r) => r !== 'token').join(', ')} ([] for tokens only)`;
  }
  if (p.keyArity !== undefined && p.keyArity !== 1 && p.keyArity !== 2) return 'keyArity must be 1 or 2';
  if (p.keyValues !== undefined && p.keyValues !== 'any' && p.keyValues !== 'whole') return "keyValues must be 'any' or 'whole'";
  if (p.mutable !== undefined && typeof p.mutable !== 'boolean') return 'mutable must be true or false';
  if (p.refusals !== undefined && !['dead-letter', 'fail-visibly', 'never'].includes(p.refusals as string)) return "refusals must be 'dead-letter', 'fail-visibly' or 'never'";
  if (p.contracts !== undefined && !(Array.isArray(p.contracts) && p.contracts.length > 0 && p.contracts.every((k) => CONTRACT_KINDS.includes(k as string)))) {
    return `contracts must list some of ${CONTRACT_KINDS.join(', ')}`;
  }
  if (p.quirks !== undefined && !(Array.isArray(p.quirks) && p.quirks.every((q) => (PAGE_QUIRKS as readonly unknown[]).includes(q)))) {
    return `quirks must list some of ${PAGE_QUIRKS.join(', ')} ([] for none)`;
  }
  if (p.order !== undefined && p.order !== 'ascending' && p.order !== 'newest-first') return "order must be 'ascending' or 'newest-first'";
  if (p.order === 'newest-first') {
    if (Array.isArray(p.resumes) && p.resumes.length > 0) return "resumes must be [] with order 'newest-first': such an API resumes only from the start or by token";
    const other = Array.isArray(p.quirks) ? p.quirks.find((q) => !NEWEST_FIRST_QUIRKS.includes(q as PageQuirk)) : undefined;
    if (other !== undefined) return `quirks cannot hold ${String(other)} with order 'newest-first': such an API shows only ${NEWEST_FIRST_QUIRKS.join(', ')}`;
  }
  if (p.tokens !== undefined && !(TOKEN_KINDS as readonly unknown[]).includes(p.tokens)) return `tokens must be one of ${TOKEN_KINDS.map((k) => `'${k}'`).join(', ')}`;
  if (p.order === 'newest-first' && p.tokens !== undefined && p.tokens !== 'continuation') return "tokens must be 'continuation' with order 'newest-first'";
  if (p.window !== undefined && !(Number.isSafeInteger(p.window) && (p.window as number) >= 1)) return 'window must be a whole number of keys, 1 or more';
  if (p.window !== undefined && Array.isArray(p.contracts) && !p.contracts.includes('replay-window')) return "window is the width of a replay window, and contracts has no 'replay-window'";
  return null;
}
