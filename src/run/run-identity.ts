import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * What makes two results parts of one run: the tidemark build that ran them, the target and the
 * code behind it, and every option that decides which worlds run. A shard, a `--json` result
 * and a regression entry carry it, so that `merge` can refuse shards of different runs (a CI
 * cache holding shard 3 of yesterday's consumer beside today's shards 1 and 2) and a replay
 * can tell a consumer that changed from one that is not deterministic.
 *
 * It is a consistency check, not a signature: whoever can edit a shard file can edit its
 * identity too. Its job is to make the careless mix impossible, never to authenticate.
 */
export interface RunIdentity {
  /** The tidemark build: its version and the sha256 of its code (src/run/build.ts). */
  readonly tidemark: string;
  readonly command: 'check' | 'mutants' | 'report';
  /** The target as the regression file keys it: an adapter path, `command:...` or `builtin:...`; null for mutants and report. */
  readonly target: string | null;
  /** The sha256 of the code behind the target (see targetDigest); null for a built-in. */
  readonly digest: string | null;
  readonly seed: number;
  readonly runs: number;
  /** Shards the run was split into (1: not split). */
  readonly shards: number;
  /** Every other option that decides what runs, by its flag name. */
  readonly options: Readonly<Record<string, string | number | boolean | null>>;
}

/** A short, stable name of an identity: the first 16 hex digits of the sha256 of its canonical JSON. */
export function runId(identity: RunIdentity): string {
  return sha256(canonical(identity)).slice(0, 16);
}

/**
 * The sha256 of the code a target runs, as far as tidemark can see it: an adapter module's
 * file, or every word of a command that names a file (`python3 my_consumer.py` hashes
 * my_consumer.py). Code those files import is not included: a change there leaves the digest
 * as it was, which docs/ci.md says.
 */
export function targetDigest(target: string): string | null {
  if (target.startsWith('builtin:')) return null;
  return filesDigest(target, target.startsWith('command:') ? commandFiles(target.slice('command:'.length)) : [target]);
}

/** The words of a command line that name files: the code a command runs, as far as it says. */
export function commandFiles(command: string): string[] {
  return command.split(/\s+/).filter(isFile);
}

/** The sha256 of a target's key and the files behind it, each named and read in turn; one that cannot be read counts as such. */
export function filesDigest(target: string, files: readonly string[]): string {
  const h = createHash('sha256');
  h.update(target);
  for (const file of files) {
    h.update('\0');
    h.update(file);
    h.update('\0');
    try {
      h.update(readFileSync(resolve(file)));
    } catch {
      h.update('(unreadable)');
    }
  }
  return h.digest('hex');
}

/** The target's `--option` pairs an identity holds (null or JSON of string values, keys in order). */
export function targetOptions(identity: RunIdentity): Readonly<Record<string, string>> {
  const text = identity.options.option;
  if (typeof text !== 'string') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string')) return value as Record<string, string>;
  } catch {
    // Refused below.
  }
  throw new Error(`the run's option is not JSON of string values: ${text}`);
}

/** Which fields of two identities differ, for a message naming them. */
export function identityDifferences(a: RunIdentity, b: RunIdentity): string[] {
  const out: string[] = [];
  for (const key of ['tidemark', 'command', 'target', 'digest', 'seed', 'runs', 'shards'] as const) {
    if (canonical(a[key]) === canonical(b[key])) continue;
    out.push(key === 'digest' ? "the target's code (its sha256)" : key === 'tidemark' ? `the tidemark that ran them (${a.tidemark} and ${b.tidemark}: builds that may draw other worlds, or judge them by another rule)` : key);
  }
  const keys = new Set([...Object.keys(a.options ?? {}), ...Object.keys(b.options ?? {})]);
  for (const key of [...keys].sort()) if (canonical(a.options?.[key] ?? null) !== canonical(b.options?.[key] ?? null)) out.push(`--${key}`);
  return out;
}

/** Whether a value read from a file has the shape of an identity (a shard's file is read as untrusted JSON). */
export function isRunIdentity(value: unknown): value is RunIdentity {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const optionsOk =
    typeof v.options === 'object' &&
    v.options !== null &&
    !Array.isArray(v.options) &&
    Object.values(v.options).every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x));
  return (
    typeof v.tidemark === 'string' &&
    (v.command === 'check' || v.command === 'mutants' || v.command === 'report') &&
    (v.target === null || typeof v.target === 'string') &&
    (v.digest === null || (typeof v.digest === 'string' && /^[0-9a-f]{64}$/.test(v.digest))) &&
    Number.isSafeInteger(v.seed) &&
    Number.isSafeInteger(v.runs) &&
    Number.isSafeInteger(v.shards) &&
    optionsOk
  );
}

function isFile(word: string): boolean {
  if (word === '' || word.startsWith('-')) return false;
  try {
    return statSync(resolve(word)).isFile();
  } catch {
    return false;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, so that equal identities hash equally whatever the order their fields were built in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
