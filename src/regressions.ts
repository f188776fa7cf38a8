import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * The regression file: every failure a check finds is kept in the user's repository and
 * replayed first on every later run, until it passes and someone prunes it on purpose (as
 * proptest-regressions and Hypothesis's example database do). It is JSON, versioned, with
 * one entry per failure, in the order found, so that it diffs well in review.
 */
export const REGRESSIONS_FILE = 'tidemark-regressions.json';
const VERSION = 1;

/**
 * `hash` is the sha256 of the failing history when it was recorded: a replay that differs
 * from it says so, and one that differs from itself is a consumer that is not deterministic.
 */
export type RegressionEntry =
  | { readonly adapter: string; readonly kind: 'world'; readonly seed: number; readonly path: string; readonly anomaly: string; readonly hash?: string }
  | { readonly adapter: string; readonly kind: 'scenario'; readonly scenario: string; readonly anomaly: string; readonly hash?: string };

export interface RegressionFile {
  readonly version: 1;
  readonly entries: readonly RegressionEntry[];
}

export class RegressionFileError extends Error {
  override name = 'RegressionFileError';
}

export function readRegressions(path: string): RegressionFile {
  if (!existsSync(path)) return { version: VERSION, entries: [] };
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new RegressionFileError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const file = data as Partial<RegressionFile>;
  if (file.version !== VERSION) throw new RegressionFileError(`${path} has version ${JSON.stringify(file.version)}; this tidemark reads version ${VERSION}`);
  if (!Array.isArray(file.entries)) throw new RegressionFileError(`${path} has no entries array`);
  file.entries.forEach((e, i) => {
    const ok =
      typeof e?.adapter === 'string' &&
      ((e.kind === 'world' && Number.isSafeInteger(e.seed) && typeof e.path === 'string' && /^\d+(:\d+)*$/.test(e.path)) ||
        (e.kind === 'scenario' && typeof e.scenario === 'string'));
    if (!ok) throw new RegressionFileError(`${path}: entries[${i}] must be { adapter, kind: 'world', seed, path } or { adapter, kind: 'scenario', scenario }`);
  });
  return file as RegressionFile;
}

export function writeRegressions(path: string, file: RegressionFile): void {
  writeFileSync(
    path,
    `${JSON.stringify({ version: VERSION, about: 'Failures found by tidemark check, replayed first on every run. Prune fixed ones with: tidemark regressions --prune', entries: file.entries }, null, 2)}\n`,
  );
}

export function sameEntry(a: RegressionEntry, b: RegressionEntry): boolean {
  if (a.adapter !== b.adapter || a.kind !== b.kind) return false;
  return a.kind === 'world' && b.kind === 'world' ? a.seed === b.seed && a.path === b.path : a.kind === 'scenario' && b.kind === 'scenario' && a.scenario === b.scenario;
}
