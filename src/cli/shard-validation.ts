import { ANOMALY_KINDS } from '../../model/anomalies.js';
import { UsageError } from './spec.js';
import { validatePlan } from '../../scenarios/validate.js';
import { checkProperty } from '../run/conformance.js';
import { MUTANTS } from '../selftest/mutants.js';
import type { KillRow } from '../selftest/kill-matrix.js';
import { executionOf, realVerdictOf, type CheckJson, type CheckShardJson, type FailureJson, type RunJson } from '../run/check-json.js';
import { ENTRY_FIELDS, ENTRY_SHAPE, isRegressionEntry, ofTarget } from '../run/regressions.js';
import { isRunIdentity, runId, targetOptions } from '../run/run-identity.js';

/**
 * A shard's file is untrusted input: it may come from a CI cache, an older tidemark, or a
 * hand that edited it. `merge` combines only what it has checked here: every field known and
 * well typed, every status one of the words tidemark writes, and every stated status borne
 * out by the history it carries, judged again. A status is never taken on trust: a result
 * that says `pass` while it carries a failing history, or a failure without its history, is
 * refused, so editing a status alone cannot turn a failing run into a passing merge.
 *
 * What cannot be judged again is a pass, which keeps no history (a check keeps histories of
 * failures only): a file edited to drop a failure together with its history and say pass is
 * consistent, and merges. The run identity (src/run/run-identity.ts) ties a result to its
 * run; it guards against mixing runs, not against forgery (docs/ci.md says so).
 */

const SUITE = ['pass', 'fail', 'unknown', 'error'] as const;
const SCENARIO = [...SUITE, 'untested', 'skipped'] as const;
const CHECK_KEYS = new Set(['run', 'consumer', 'adapter', 'seed', 'runs', 'searches', 'verdict', 'reason', 'regressions', 'scenarios', 'worlds', 'checks', 'shard']);
const SHARD_KEYS = new Set(['command', 'index', 'count', 'tidemark', 'regressionsInFile', 'regressionsDigest', 'skipped', 'calls', 'ms', 'evidence', 'timeLimit', 'sessionWorlds', 'stoppedBy']);
const SCENARIO_KEYS = new Set(['name', 'rules', 'status', 'skipped', 'untested', 'replay', 'failure']);
const WORLDS_KEYS = new Set(['status', 'events', 'runs', 'seed', 'path', 'shrinks', 'searches', 'interrupted', 'replay', 'failure']);
// An entry's own fields (a list kept beside the entry's type, so that a field added there is
// not refused here: `format` and `events` once were), and what its replay adds.
const REGRESSION_KEYS = new Set([...ENTRY_FIELDS, 'status', 'note', 'failure']);
const FAILURE_KEYS = new Set(['anomalies', 'plan', 'history', 'hash', 'realHash', 'realHistory']);

/** The run a shard's file says it belongs to, checked to be well formed and unedited. */
export function runOfShard(file: string, json: unknown): RunJson {
  const run = (json as { run?: unknown } | null)?.run as Partial<RunJson> | undefined;
  if (run === undefined) throw new UsageError(`${file} carries no run identity: it was written by an older tidemark; run its shard again with this one`);
  if (typeof run !== 'object' || run === null || typeof run.id !== 'string' || !isRunIdentity(run.identity)) throw new UsageError(`${file}: run must be { id, identity } as tidemark writes it`);
  if (runId(run.identity) !== run.id) throw new UsageError(`${file}: its run id ${run.id} is not the one its identity gives (${runId(run.identity)}): the file was edited`);
  return run as RunJson;
}

/** Checks a check shard's file field by field, and judges every failure it carries again. */
export function validateCheckShard(file: string, json: CheckJson & { shard: CheckShardJson }): void {
  const at = new Where(file);
  at.keys('', json, CHECK_KEYS);
  at.oneOf('verdict', json.verdict, SUITE);
  at.text('consumer', json.consumer);
  at.text('adapter', json.adapter);
  if (json.run.identity.target !== json.adapter) at.fail('adapter', `is ${JSON.stringify(json.adapter)}, but the run's target is ${JSON.stringify(json.run.identity.target)}`);
  let options: Readonly<Record<string, string>> = {};
  try {
    options = targetOptions(json.run.identity);
  } catch (error) {
    at.fail('run.identity.options.option', (error as Error).message);
  }
  at.keys('shard', json.shard, SHARD_KEYS);
  for (const key of ['regressionsInFile', 'skipped', 'calls'] as const) at.count(`shard.${key}`, json.shard[key]);
  if (typeof json.shard.regressionsDigest !== 'string' || !/^[0-9a-f]{64}$/.test(json.shard.regressionsDigest)) {
    at.fail('shard.regressionsDigest', `must be the sha256 of the regression entries the shard replayed, in hex${json.shard.regressionsDigest === undefined ? ' (a shard written by an earlier tidemark has none: write the shards again with this one)' : ''}`);
  }
  if (json.shard.sessionWorlds !== undefined) at.count('shard.sessionWorlds', json.shard.sessionWorlds);
  if (json.shard.stoppedBy !== undefined) at.count('shard.stoppedBy', json.shard.stoppedBy);
  at.evidence('shard.evidence', json.shard.evidence);
  at.list('regressions', json.regressions).forEach((r, i) => {
    const where = `regressions[${i}]`;
    at.keys(where, r, REGRESSION_KEYS);
    const { status, note: _, failure: __, ...entry } = r;
    if (!isRegressionEntry(entry)) at.fail(where, ENTRY_SHAPE);
    if (!ofTarget(r, json.adapter, options)) at.fail(`${where}.adapter`, `is ${JSON.stringify(r.adapter)}${r.options ? ` with options ${JSON.stringify(r.options)}` : ''}, not the run's target ${JSON.stringify(json.adapter)}: a shard replays only its own target's regressions`);
    at.oneOf(`${where}.status`, status, SUITE);
    // A regression whose seed and path lead nowhere is unknown with a note and no history.
    at.judged(where, status, r.failure, status === 'unknown' && typeof r.note === 'string');
  });
  at.list('scenarios', json.scenarios).forEach((s, i) => {
    const where = `scenarios[${i}]`;
    at.keys(where, s, SCENARIO_KEYS);
    at.text(`${where}.name`, s.name);
    at.oneOf(`${where}.status`, s.status, SCENARIO);
    if (s.status === 'skipped') at.text(`${where}.skipped`, s.skipped);
    if (s.status === 'untested') at.text(`${where}.untested`, s.untested);
    if (s.status === 'skipped' || s.status === 'untested' || s.status === 'pass') {
      if (s.failure !== undefined) at.fail(`${where}.failure`, `is there, but a scenario that is ${s.status} keeps no failure`);
    } else at.judged(where, s.status, s.failure, false);
  });
  const w = json.worlds;
  if (w !== null) {
    at.keys('worlds', w, WORLDS_KEYS);
    at.oneOf('worlds.status', w.status, SUITE);
    at.count('worlds.runs', w.runs);
    // Generated worlds that are unknown without a counterexample ran out of time or budget.
    at.judged('worlds', w.status, w.failure, w.status === 'unknown');
  }
}

/**
 * Checks a mutants shard: its mutants are this tidemark's, in catalog order; each row is its
 * mutant's, with the catalog's rule and expected anomalies; and every kill it claims is judged
 * again by replaying the row's counterexample (tidemark's own mutants, no user code, one world
 * each). A row that says killed without a counterexample that shows it is refused.
 */
export async function validateMutantsShard(file: string, json: { readonly mutants: readonly string[]; readonly rows: readonly KillRow[] }): Promise<void> {
  // Typed, so that at.fail, which never returns, narrows what follows it.
  const at: Where = new Where(file);
  const mutants = at.list('mutants', json.mutants);
  if (mutants.length === 0) at.fail('mutants', 'names no mutant: a mutants run has at least one');
  const order = MUTANTS.map((m) => m.name);
  let last = -1;
  for (const [i, name] of mutants.entries()) {
    const k = order.indexOf(name);
    if (k === -1) at.fail(`mutants[${i}]`, `is ${JSON.stringify(name)}, not a mutant of this tidemark`);
    if (k <= last) at.fail(`mutants[${i}]`, 'is out of the catalog order, or repeated');
    last = k;
  }
  for (const [i, row] of at.list('rows', json.rows).entries()) {
    const where = `rows[${i}]`;
    const mutant = MUTANTS.find((m) => m.name === row?.mutant);
    if (mutant === undefined) at.fail(`${where}.mutant`, `is ${JSON.stringify(row?.mutant)}, not a mutant of this tidemark`);
    const expected = [mutant.expect, ...mutant.also];
    if (row.rule !== mutant.rule || JSON.stringify(row.expected) !== JSON.stringify(expected)) at.fail(where, `does not carry ${mutant.name}'s rule and expected anomalies`);
    if (typeof row.killed !== 'boolean') at.fail(`${where}.killed`, 'must be true or false');
    if (!row.killed) continue;
    if (row.found === null || !expected.includes(row.found) || row.replay === null) at.fail(where, 'says killed without an expected anomaly and a counterexample to replay');
    let again;
    try {
      again = await checkProperty(mutant.consumer, { seed: row.replay.seed, path: row.replay.path });
    } catch (error) {
      at.fail(`${where}.replay`, `cannot be replayed: ${(error as Error).message}`);
    }
    const kinds = again.replayed?.result.verdict.anomalies.map((a) => a.kind) ?? [];
    if (!kinds.includes(row.found)) at.fail(`${where}.killed`, `is true, but its counterexample, replayed, shows ${kinds.length === 0 ? 'no anomaly' : kinds.join(', ')}, not ${row.found}`);
  }
}

/** Where in a file a field is, and the one way to say what is wrong with it. */
class Where {
  constructor(private readonly file: string) {}

  fail(path: string, problem: string): never {
    throw new UsageError(`${this.file}: ${path || 'the file'} ${problem}; merge reads the files that check, mutants or report wrote, unedited`);
  }

  keys(path: string, value: unknown, known: ReadonlySet<string>): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(path, 'must be an object');
    const unknown = Object.keys(value).find((k) => !known.has(k));
    if (unknown !== undefined) this.fail(path ? `${path}.${unknown}` : unknown, 'is not a field tidemark writes');
  }

  oneOf(path: string, value: unknown, allowed: readonly string[]): void {
    if (!allowed.includes(value as string)) this.fail(path, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }

  text(path: string, value: unknown): void {
    if (typeof value !== 'string') this.fail(path, `must be a string, got ${JSON.stringify(value)}`);
  }

  count(path: string, value: unknown): void {
    if (!Number.isSafeInteger(value) || (value as number) < 0) this.fail(path, `must be an integer >= 0, got ${JSON.stringify(value)}`);
  }

  list<T>(path: string, value: readonly T[]): readonly T[] {
    if (!Array.isArray(value)) this.fail(path, 'must be an array');
    return value;
  }

  evidence(path: string, value: unknown): void {
    this.keys(path, value, new Set(ANOMALY_KINDS));
    const isAt = (x: unknown): boolean => Array.isArray(x) && x.length === 2 && x.every((n) => Number.isSafeInteger(n) && n >= 0);
    for (const [kind, e] of Object.entries(value as Record<string, Record<string, unknown>>)) {
      this.keys(`${path}.${kind}`, e, new Set(['exercised', 'found', 'untested']));
      for (const key of ['exercised', 'found'] as const) if (e[key] !== undefined && !isAt(e[key])) this.fail(`${path}.${kind}.${key}`, 'must be [phase, index]');
      const u = e.untested as { at?: unknown; reason?: unknown } | undefined;
      if (u !== undefined && (!isAt(u.at) || typeof u.reason !== 'string')) this.fail(`${path}.${kind}.untested`, 'must be { at: [phase, index], reason }');
    }
  }

  /**
   * A stated status against the history that comes with it: a failure must carry its history,
   * the history must be the one its hash names, and judged again it must give the stated
   * status. `unknown` may stand over any history (a replay that was not deterministic keeps
   * its first history, which may judge otherwise); it never yields a pass.
   */
  judged(path: string, status: string, failure: FailureJson | undefined, mayLackFailure: boolean): void {
    if (failure === undefined) {
      if (status !== 'pass' && !mayLackFailure) this.fail(`${path}.failure`, `is missing: a result that is ${status} carries the history it was judged on`);
      return;
    }
    if (status === 'pass') this.fail(`${path}.status`, 'is pass, but the result carries a failing history');
    this.keys(`${path}.failure`, failure, FAILURE_KEYS);
    if (failure.realHash !== undefined && !(typeof failure.realHash === 'string' && /^[0-9a-f]{64}$/.test(failure.realHash) && failure.realHash !== failure.hash)) {
      this.fail(`${path}.failure.realHash`, 'must be the sha256 (in hex) of the history real kills gave, other than hash');
    }
    if (failure.realHistory !== undefined) {
      let real;
      try {
        real = realVerdictOf(failure);
      } catch (error) {
        this.fail(`${path}.failure.realHistory`, `cannot be judged: ${(error as Error).message}`);
      }
      if (real === 'edited') this.fail(`${path}.failure.realHistory`, 'is not the one realHash names: the file was edited or cut');
    } else if (failure.realHash !== undefined) this.fail(`${path}.failure.realHistory`, 'is missing: a failure that real kills replayed otherwise carries the history they gave');
    try {
      validatePlan(failure.plan);
    } catch (error) {
      this.fail(`${path}.failure.plan`, `is not a plan: ${(error as Error).message}`);
    }
    let execution;
    try {
      execution = executionOf(failure);
    } catch (error) {
      this.fail(`${path}.failure.history`, `cannot be judged: ${(error as Error).message}`);
    }
    if (execution === null) this.fail(`${path}.failure.history`, 'is not the one its hash names: the file was edited or cut');
    const judged = execution.result.verdict.status;
    if (status !== 'unknown' && judged !== status) this.fail(`${path}.status`, `is ${status}, but its history, judged again, is ${judged}`);
  }
}
