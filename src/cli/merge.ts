import { readFileSync, statSync } from 'node:fs';
import { doing } from './activity.js';
import type { AnomalyKind } from '../../model/anomalies.js';
import { ALL_SCENARIOS, findScenario } from '../../scenarios/named.js';
import { UsageError } from './spec.js';
import { onlyLiveness, owns, precedes, summarizeChecks, TALLY_PHASE, type CheckEvidence, type PropertyOutcome, type Shard, type SuiteStatus, type TallyAt } from '../run/conformance.js';
import { executionOf, realVerdictOf, type CheckJson, type CheckShardJson, type FailureJson, type RunJson, type WorldsJson } from '../run/check-json.js';
import { identityDifferences, runId, targetOptions } from '../run/run-identity.js';
import { runOfShard, validateCheckShard } from './shard-validation.js';
import type { Execution } from '../run/execute.js';
import { MUTANTS } from '../selftest/mutants.js';
import type { KillRow } from '../selftest/kill-matrix.js';
import { entriesDigest, type RegressionEntry } from '../run/regressions.js';
import type { JUnitSuite } from '../report/junit.js';
import { reportTasks } from '../selftest/report.js';

/**
 * `tidemark merge`: the results of a run split over N machines (`--shard I/N`), put back
 * together into the result the unsharded run gives. Each shard ran a disjoint share of one
 * run (see owns and checkProperty), so merging is choosing, never re-running: items are put
 * back in order, the generated worlds' result is the failure found first, and each check's
 * verdict is rebuilt from the positions of its evidence (CheckTally).
 */

/** The block every shard's JSON carries: which shard it is, of what. */
export interface ShardBlock extends Shard {
  readonly command: 'check' | 'mutants' | 'report';
  readonly tidemark: string;
}

/** What `mutants --json` writes; with a shard, its share of the rows and of the reference's worlds. */
export interface MutantsJson {
  readonly run: RunJson;
  readonly seed: number;
  readonly runs: number;
  /** Every mutant of the run, in order, whether or not this shard searched it. */
  readonly mutants: readonly string[];
  readonly rows: readonly KillRow[];
  readonly reference: ReferenceJson;
  readonly shard?: ShardBlock & { readonly command: 'mutants' };
}

/** The reference consumer's outcome, without its counterexample's history. */
export type ReferenceJson = Omit<PropertyOutcome, 'counterexample' | 'replayed'> & { readonly ms: number };

/** What `report --shard I/N --json FILE` writes: its share of the report's searches (see reportTasks). */
export interface ReportShardJson {
  readonly run: RunJson;
  readonly seed: number;
  readonly runs: number;
  readonly seeds: number;
  readonly rows: readonly KillRow[];
  readonly shard: ShardBlock & { readonly command: 'report' };
}

interface Read<T> {
  readonly file: string;
  readonly json: T;
}

type ShardJson = (CheckJson & { shard: CheckShardJson }) | (MutantsJson & { shard: ShardBlock }) | ReportShardJson;

export type ReadShards =
  | { readonly command: 'check'; readonly shards: readonly Read<CheckJson & { shard: CheckShardJson }>[] }
  | { readonly command: 'mutants'; readonly shards: readonly Read<MutantsJson & { shard: ShardBlock }>[] }
  | { readonly command: 'report'; readonly shards: readonly Read<ReportShardJson>[] };

/**
 * Reads the shards' files and checks that they are the N shards of one run: one run identity
 * (command, tidemark build, target and its code, seed, runs, N and options), every shard from
 * 1 to N exactly once, and each file well formed, its stated statuses borne out by its
 * histories (src/cli/shard-validation.ts). Returned in shard order.
 */
export function readShards(files: readonly string[]): ReadShards {
  if (files.length === 0) throw new UsageError('merge needs the --json files of the shards, one per shard: tidemark merge shard-1.json shard-2.json ...');
  const read: Read<ShardJson>[] = files.map((file) => {
    let json: unknown;
    doing(`reading the shard file ${file}`);
    // A FIFO or a device could be read for ever: a shard's file is a regular file.
    let regular = true;
    try {
      regular = statSync(file).isFile();
    } catch {
      // Missing or unreadable: the read below says which.
    }
    if (!regular) throw new UsageError(`${file} is not a regular file: merge reads the --json files that check, mutants or report wrote`);
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new UsageError(`${file}: cannot read it as JSON: ${(error as Error).message}`);
    }
    const shard = (json as { shard?: Partial<ShardBlock> } | null)?.shard;
    const ok =
      shard !== undefined &&
      ['check', 'mutants', 'report'].includes(shard.command as string) &&
      Number.isInteger(shard.index) &&
      Number.isInteger(shard.count) &&
      typeof shard.tidemark === 'string';
    if (!ok) throw new UsageError(`${file} is not a shard's result: merge reads the --json files that check, mutants or report wrote with --shard I/N`);
    runOfShard(file, json);
    return { file, json: json as ShardJson };
  });
  same(read, (s) => s.json.shard.command, 'they are results of different commands');
  const other = read.find((s) => s.json.run.id !== read[0]!.json.run.id);
  if (other) {
    const first = read[0]!;
    const differ = identityDifferences(first.json.run.identity, other.json.run.identity);
    throw new UsageError(
      `these files are not the shards of one run: ${first.file} is of run ${first.json.run.id} and ${other.file} of run ${other.json.run.id}, which differ in ${differ.join(', ') || 'their identity'}; give the shards of one run, all written by the same command line`,
    );
  }
  if (read[0]!.json.run.identity.shards !== read[0]!.json.shard.count) throw new UsageError(`${read[0]!.file} says it is of ${read[0]!.json.shard.count} shards, but its run has ${read[0]!.json.run.identity.shards}: the file was edited`);
  if (read[0]!.json.shard.command === 'check') for (const s of read) validateCheckShard(s.file, s.json as CheckJson & { shard: CheckShardJson });
  same(read, (s) => s.json.shard.tidemark, 'they were written by different tidemark builds, which may generate different worlds');
  same(read, (s) => s.json.shard.count, 'they split the run into different numbers of shards');
  const count = read[0]!.json.shard.count;
  const sorted: Read<ShardJson>[] = [];
  for (let index = 1; index <= count; index++) {
    const these = read.filter((s) => s.json.shard.index === index);
    if (these.length > 1) throw new UsageError(`shard ${index} of ${count} is given twice (${these.map((s) => s.file).join(', ')})`);
    if (these.length === 0) throw new UsageError(`shard ${index} of ${count} is missing: give all ${count} shards' files (given: ${read.map((s) => `${s.file} is shard ${s.json.shard.index}`).join(', ')})`);
    sorted.push(these[0]!);
  }
  const stray = read.find((s) => s.json.shard.index < 1 || s.json.shard.index > count);
  if (stray) throw new UsageError(`${stray.file} says it is shard ${stray.json.shard.index} of ${count}, which does not exist`);
  return { command: read[0]!.json.shard.command, shards: sorted } as ReadShards;
}

/** The run the shards are the parts of, as the unsharded run names itself: the merge is that run's result. */
function unsharded(run: RunJson): RunJson {
  const identity = { ...run.identity, shards: 1 };
  return { id: runId(identity), identity };
}

/** Refuses shards that disagree on something one run has one value of. */
function same<T>(shards: readonly Read<T>[], value: (s: Read<T>) => unknown, why: string): void {
  const first = shards[0]!;
  const other = shards.find((s) => JSON.stringify(value(s)) !== JSON.stringify(value(first)));
  if (other) throw new UsageError(`these files are not the shards of one run: ${why} (${JSON.stringify(value(first))} in ${first.file}, ${JSON.stringify(value(other))} in ${other.file})`);
}

/** The items of a list split across shards (see owns), put back in order; each shard must hold exactly its share. */
function interleave<T>(shards: readonly Read<unknown>[], total: number, items: (s: Read<unknown>) => readonly T[], what: string): T[] {
  const count = shards.length;
  shards.forEach((s, i) => {
    const share = Array.from({ length: total }, (_, j) => j).filter((j) => owns({ index: i + 1, count }, j)).length;
    if (items(s).length !== share) throw new UsageError(`${s.file} holds ${items(s).length} ${what}, but shard ${i + 1} of ${count} of a run with ${total} has ${share}`);
  });
  return Array.from({ length: total }, (_, j) => items(shards[j % count]!)[Math.floor(j / count)] as T);
}

/** A merged check: the JSON the unsharded check writes, and what was measured on the way (never compared). */
export interface MergedCheck {
  readonly json: CheckJson;
  /** The shard that found the reported counterexample of the generated worlds (from 1); null when none failed. */
  readonly foundBy: number | null;
  readonly calls: number;
  /** Worlds of a process target whose crashes were session crashes, over all shards: 0 when every incarnation was killed for real. */
  readonly sessionWorlds: number;
  readonly ms: { readonly regressions: readonly number[]; readonly scenarios: readonly number[]; readonly worlds: number };
}

export function mergeCheck(shards: readonly Read<CheckJson & { shard: CheckShardJson }>[]): MergedCheck {
  const runOf = (what: string, value: (j: CheckJson & { shard: CheckShardJson }) => unknown): void => same(shards, (s) => value(s.json), `${what} differ`);
  runOf('their adapters', (j) => j.adapter);
  runOf('their consumers', (j) => j.consumer);
  runOf('their seeds', (j) => j.seed);
  runOf('their runs', (j) => j.runs);
  runOf('their searches', (j) => j.searches);
  runOf('their time limits', (j) => j.shard.timeLimit ?? null);
  runOf("their regression files' entries for this consumer", (j) => j.shard.regressionsInFile);
  runOf("their regression files' entries for this consumer (the same number, but not the same entries in the same order)", (j) => j.shard.regressionsDigest);
  const first = shards[0]!.json;
  const regressions = interleave(shards, first.shard.regressionsInFile, (s) => (s as Read<CheckJson>).json.regressions, 'regressions');
  // Put back together, they must be the list every shard says it replayed its share of.
  if (entriesDigest(regressions.map(({ status: _, note: __, failure: ___, ...entry }) => entry as RegressionEntry)) !== first.shard.regressionsDigest) {
    throw new UsageError("the shards' regressions, put back together, are not the entries their files say they replayed: a file was edited, or its shard read another regression file");
  }
  const scenarios = interleave(shards, ALL_SCENARIOS.length, (s) => (s as Read<CheckJson>).json.scenarios, 'scenarios');
  const misplaced = scenarios.findIndex((s, j) => s.name !== ALL_SCENARIOS[j]!.name);
  if (misplaced !== -1) throw new UsageError(`the shards' scenarios are not this tidemark's, in its order (${scenarios[misplaced]!.name} where ${ALL_SCENARIOS[misplaced]!.name} belongs)`);
  const missing = shards.find((s) => s.json.worlds === null);
  if (missing) throw new UsageError(`${missing.file} ran no generated worlds: a sharded check always does`);

  // The unsharded run stops at its first failing world; the shard that owns that world found
  // it at the same index and shrank it as the unsharded run does. Later failures of other
  // shards are worlds the unsharded run never reached.
  const failed = shards.map((s, i) => ({ worlds: s.json.worlds as WorldsJson, index: i + 1 })).filter((w) => w.worlds.status !== 'pass');
  const winner = failed.reduce<(typeof failed)[number] | null>((best, w) => (best === null || w.worlds.runs < best.worlds.runs ? w : best), null);
  // A shard of `check --jobs` that stopped for another's failure at index b ran its share up
  // to b and no more of what the unsharded run needs (src/run/conformance.ts, stoppedBy): that
  // is the unsharded result only if the run's first failure, found by another shard, is at b
  // or before. Else worlds the unsharded run judges were left unrun, or unshrunk.
  shards.forEach((s, i) => {
    const b = s.json.shard.stoppedBy;
    if (b === undefined) return;
    if (winner === null || winner.index === i + 1 || winner.worlds.runs - 1 > b) {
      const first = winner === null ? 'no shard failed' : winner.index === i + 1 ? 'the first failure is its own' : `the first failure is at world ${winner.worlds.runs - 1}`;
      throw new UsageError(`${s.file} stopped at world ${b} for another shard's failure there, but ${first}: what it left undone the run needed, and the file was edited or its run told a failure that was not found`);
    }
  });
  let worlds: WorldsJson;
  if (winner) worlds = winner.worlds;
  else {
    // All passed: every world asked was run by its shard, unless a time limit cut some short,
    // and then only the worlds before the first one left unrun count.
    const all = shards.map((s) => s.json.worlds as WorldsJson);
    const interrupted = all.some((w) => w.interrupted === true);
    const { interrupted: _, ...pass } = all[0]!;
    worlds = { ...pass, runs: Math.min(...all.map((w) => w.runs)), ...(interrupted ? { interrupted: true } : {}) };
  }
  // Evidence counts from the worlds the unsharded run judged: those before its first failure,
  // or, when a time limit cut a shard short, those before the first world left unrun.
  const cutoff = winner ? winner.worlds.runs - 1 : worlds.interrupted === true ? worlds.runs : null;
  const checks = summarizeChecks((kind) => evidenceOf(kind, shards.map((s, i) => ({ evidence: s.json.shard.evidence, winner: winner?.index === i + 1 })), cutoff));

  const statuses: SuiteStatus[] = [
    ...regressions.map((r) => r.status),
    ...scenarios.flatMap((s): SuiteStatus[] => (s.status === 'skipped' ? [] : s.status === 'untested' ? ['pass'] : [s.status])),
    worlds.status,
  ];
  let verdict: SuiteStatus = statuses.includes('error') ? 'error' : statuses.includes('fail') ? 'fail' : statuses.includes('unknown') ? 'unknown' : 'pass';
  // The unsharded run's rules for a pass that exercised nothing (src/run/suite.ts), over all
  // the shards: no world ran in any shard, and nothing else was judged, or a time limit cut
  // the search short before the first world of the run: worlds other shards ran past a
  // world left unrun are not the run's (the unsharded run would not have reached them).
  const ran = shards.reduce((sum, s) => sum + ((s.json.worlds?.runs ?? 0) - s.json.shard.skipped), 0);
  const judged = regressions.some((r) => r.failure !== undefined || r.status === 'pass') || scenarios.some((s) => s.status !== 'skipped' && s.status !== 'untested') || ran > 0;
  const reason =
    verdict === 'pass' && !judged ? 'nothing was exercised: no scenario was judged (each was skipped, untested or left to another shard), and no generated world ran in any shard'
    : verdict === 'pass' && worlds.runs === 0 && worlds.interrupted === true
      ? `no generated world ran within the time limit${ran === 0 ? ' in any shard' : ': a shard left the run\'s first world unrun, and what other shards ran after it does not count'}: give a longer --time-limit, or none`
      : verdict === 'pass' ? (onlyLiveness(checks) ?? undefined)
      : undefined;
  if (reason !== undefined) verdict = 'unknown';
  // The check's rule after its final replays (src/cli.ts, finalReplays): when the target's
  // crashes were session crashes and not one failure shown fails under real kills, the
  // failures came from the session crashes, and the consumer cannot be judged that way.
  const sessionWorlds = shards.reduce((sum, s) => sum + (s.json.shard.sessionWorlds ?? 0), 0);
  const shown = [...regressions.map((r) => r.failure), ...scenarios.map((s) => s.failure), worlds.failure].filter((f): f is FailureJson => f !== undefined);
  const borneOut = (f: FailureJson): boolean => {
    const real = realVerdictOf(f);
    return real === null || real !== 'pass';
  };
  const unborne = verdict === 'fail' && sessionWorlds > 0 && shown.length > 0 && !shown.some(borneOut);
  const reasonAfter = unborne ? 'no failure happens under real kills: the failures came from session crashes, so the consumer cannot be judged this way' : reason;
  if (unborne) verdict = 'unknown';
  return {
    json: { run: unsharded(first.run), consumer: first.consumer, adapter: first.adapter, seed: first.seed, runs: first.runs, searches: first.searches, verdict, ...(reasonAfter === undefined ? {} : { reason: reasonAfter }), regressions, scenarios, worlds, checks },
    foundBy: winner?.index ?? null,
    calls: shards.reduce((sum, s) => sum + s.json.shard.calls, 0),
    sessionWorlds,
    ms: {
      regressions: interleave(shards, first.shard.regressionsInFile, (s) => (s as Read<CheckJson & { shard: CheckShardJson }>).json.shard.ms.regressions, 'regression timings'),
      scenarios: interleave(shards, ALL_SCENARIOS.length, (s) => (s as Read<CheckJson & { shard: CheckShardJson }>).json.shard.ms.scenarios, 'scenario timings'),
      worlds: shards.reduce((sum, s) => sum + s.json.shard.ms.worlds, 0),
    },
  };
}

/**
 * One check's evidence in the unsharded run, from the shards'. The unsharded run judged the
 * regressions, the scenarios, the generated worlds before its first failure (index below
 * `cutoff`), and then shrank that failure: so evidence counts from every shard's regressions
 * and scenarios, from every shard's worlds below the cutoff, and from what came after the
 * first failure only in the shard that found it. Each shard keeps only its first evidence of
 * each kind, which is enough: what counts of a shard is everything before some position in
 * its order (or all of it), so if anything of it counts, its first does.
 */
function evidenceOf(kind: AnomalyKind, shards: readonly { evidence: Partial<Record<AnomalyKind, CheckEvidence>>; winner: boolean }[], cutoff: number | null): CheckEvidence {
  const counts = (at: TallyAt, winner: boolean): boolean =>
    at[0] < TALLY_PHASE.world || (at[0] === TALLY_PHASE.world && (cutoff === null || at[1] < cutoff)) || (at[0] === TALLY_PHASE.after && winner);
  let exercised: TallyAt | undefined;
  let found: TallyAt | undefined;
  let untested: { at: TallyAt; reason: string } | undefined;
  const first = (a: TallyAt | undefined, b: TallyAt | undefined): boolean => a !== undefined && (b === undefined || precedes(a, b));
  for (const s of shards) {
    const e = s.evidence[kind];
    if (!e) continue;
    if (e.exercised && counts(e.exercised, s.winner) && first(e.exercised, exercised)) exercised = e.exercised;
    if (e.found && counts(e.found, s.winner) && first(e.found, found)) found = e.found;
    if (e.untested && counts(e.untested.at, s.winner) && first(e.untested.at, untested?.at)) untested = e.untested;
  }
  return { ...(exercised ? { exercised } : {}), ...(found ? { found } : {}), ...(untested ? { untested } : {}) };
}

/**
 * The merged check as the JUnit report reads it. Failures are rebuilt from their plan and
 * history (see executionOf); passing scenarios keep no execution, and need none.
 */
export function junitSuiteOf(merged: MergedCheck): JUnitSuite {
  const j = merged.json;
  const rebuilt = (f: FailureJson | undefined, what: string): Execution | undefined => {
    if (f === undefined) return undefined;
    const e = executionOf(f);
    if (e === null) throw new UsageError(`the history of ${what} is not the one its hash names: the file was edited or cut`);
    return e;
  };
  const w = j.worlds;
  return {
    consumer: j.consumer,
    adapter: j.adapter,
    seed: j.seed,
    runs: j.runs,
    status: j.verdict,
    ...(j.reason === undefined ? {} : { reason: j.reason }),
    regressions: j.regressions.map((r, i) => {
      const { status, note, failure, ...entry } = r;
      return { entry: entry as RegressionEntry, status, execution: rebuilt(failure, `regression ${i + 1}`) ?? null, ms: merged.ms.regressions[i] ?? 0, ...(note ? { note } : {}) };
    }),
    scenarios: j.scenarios.map((s, i) => {
      const execution = rebuilt(s.failure, `scenario ${s.name}`);
      return {
        scenario: findScenario(s.name) ?? { name: s.name, rules: s.rules },
        status: s.status,
        ...(execution ? { execution } : {}),
        ...(s.skipped ? { skipped: s.skipped } : {}),
        ...(s.untested ? { untested: s.untested } : {}),
        ms: merged.ms.scenarios[i] ?? 0,
      };
    }),
    property: w && {
      status: w.status,
      ...(w.events === undefined ? {} : { events: w.events }),
      runs: w.runs,
      seed: w.seed,
      path: w.path,
      shrinks: w.shrinks,
      counterexample: rebuilt(w.failure, 'the generated worlds\' counterexample') ?? null,
      calls: merged.calls,
      searches: w.searches,
      ...(w.interrupted ? { interrupted: true } : {}),
      ms: merged.ms.worlds,
    },
    checks: j.checks,
  };
}

/** The failures of a merged check that belong in the regression file, as `check` records them. */
export function mergedRegressions(j: CheckJson, sessionWorlds: number): RegressionEntry[] {
  const options = targetOptions(j.run.identity);
  // The run and the target's code as check records them: a replay of unchanged code must give the recorded history.
  const of = { run: j.run.id, ...(j.run.identity.digest === null ? {} : { digest: j.run.identity.digest }), ...(Object.keys(options).length === 0 ? {} : { options }) };
  // A process target's entries say how the shards killed, and what real kills gave, as check records them.
  const killed = (f: FailureJson): { kills?: 'sampled' | 'real'; realHash?: string } => {
    if (!j.adapter.startsWith('command:')) return {};
    if (sessionWorlds === 0) return { kills: 'real' };
    return { kills: 'sampled', ...(f.realHash === undefined ? {} : { realHash: f.realHash }) };
  };
  const out: RegressionEntry[] = [];
  for (const s of j.scenarios) {
    if (s.failure) out.push({ adapter: j.adapter, ...of, kind: 'scenario', scenario: s.name, anomaly: s.failure.anomalies[0]?.kind ?? s.status, hash: s.failure.hash, ...killed(s.failure) });
  }
  const w = j.worlds;
  if (w?.failure && w.path !== null) {
    out.push({ adapter: j.adapter, ...of, kind: 'world', seed: w.seed, path: w.path, ...(w.events === undefined ? {} : { events: w.events }), anomaly: w.failure.anomalies[0]?.kind ?? w.status, hash: w.failure.hash, ...killed(w.failure) });
  }
  return out;
}

/** A merged kill matrix: the rows in the run's order, and the reference's outcome over all its worlds. */
export function mergeMutants(shards: readonly Read<MutantsJson & { shard: ShardBlock }>[]): MutantsJson {
  same(shards, (s) => s.json.seed, 'their seeds differ');
  same(shards, (s) => s.json.runs, 'their runs differ');
  same(shards, (s) => s.json.mutants, 'their lists of mutants differ');
  const first = shards[0]!.json;
  const rows = interleave(shards, first.mutants.length, (s) => (s as Read<MutantsJson>).json.rows, 'kill rows');
  const misplaced = rows.findIndex((r, j) => r.mutant !== first.mutants[j]);
  if (misplaced !== -1) throw new UsageError(`the shards' rows are not the run's mutants in its order (${rows[misplaced]!.mutant} where ${first.mutants[misplaced]} belongs)`);
  // The reference's worlds were shared out as a check's are: the failure found first is the
  // unsharded run's (see mergeCheck).
  const references = shards.map((s) => s.json.reference);
  const failed = references.filter((r) => r.status !== 'pass').sort((a, b) => a.runs - b.runs);
  const { skipped: _, ...chosen } = failed[0] ?? { ...references[0]!, runs: Math.min(...references.map((r) => r.runs)), interrupted: references.some((r) => r.interrupted === true) };
  const reference = { ...chosen, calls: references.reduce((sum, r) => sum + r.calls, 0), ms: references.reduce((sum, r) => sum + r.ms, 0) };
  return { run: unsharded(first.run), seed: first.seed, runs: first.runs, mutants: first.mutants, rows, reference };
}

/** A merged report's searches: by mutant, one row per seed in seed order, as buildReport takes them. */
export function mergeReport(shards: readonly Read<ReportShardJson>[]): { readonly seed: number; readonly runs: number; readonly seeds: number; readonly rows: Map<string, KillRow[]> } {
  same(shards, (s) => s.json.seed, 'their seeds differ');
  same(shards, (s) => s.json.runs, 'their runs differ');
  same(shards, (s) => s.json.seeds, 'their seeds per mutant differ');
  const { seed, runs, seeds } = shards[0]!.json;
  const tasks = reportTasks({ seed, runs, seeds });
  const found = interleave(shards, tasks.length, (s) => (s as Read<ReportShardJson>).json.rows, 'searches');
  const misplaced = found.findIndex((r, j) => r.mutant !== tasks[j]!.mutant || r.seed !== tasks[j]!.seed);
  if (misplaced !== -1) throw new UsageError(`the shards' searches are not the report's in its order (${found[misplaced]!.mutant} at seed ${found[misplaced]!.seed} where ${tasks[misplaced]!.mutant} at seed ${tasks[misplaced]!.seed} belongs)`);
  const rows = new Map<string, KillRow[]>(MUTANTS.map((m) => [m.name, found.filter((r) => r.mutant === m.name)]));
  return { seed, runs, seeds, rows };
}
