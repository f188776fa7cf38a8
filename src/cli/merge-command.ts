import { EXIT, UsageError, type Flags } from './spec.js';
import type { CheckJson } from '../run/check-json.js';
import type { Execution } from '../run/execute.js';
import type { Io } from './io.js';
import { junitSuiteOf, mergeCheck, mergedRegressions, mergeMutants, mergeReport, readShards, type MergedCheck } from './merge.js';
import { guardReport, Outputs, prepareOutputs, withOutputs } from './outputs.js';
import { recordRegressions, unrecordableHere } from '../run/regressions.js';
import { renderFailure } from '../report/failure.js';
import { renderJUnit } from '../report/junit.js';
import { formatKillRow, formatReferenceRow, KILL_HEADER, matrixVerdict } from '../report/kill-table.js';
import { buildReport } from '../selftest/report.js';
import { replayCommand, targetFlag, worldWhat } from '../report/replay-command.js';
import { targetOptions } from '../run/run-identity.js';
import { connectorFlag } from '../connector/target.js';
import { validateMutantsShard } from './shard-validation.js';

/**
 * `tidemark merge FILE...`: the shards' --json files of one check, mutants or report run,
 * combined and printed as the unsharded command prints its result, with its exit code.
 */
export async function merge(f: Flags, io: Io): Promise<number> {
  prepareOutputs(f, f.positionals.map((path) => ({ name: `the shard ${path}`, path })));
  const read = readShards(f.positionals);
  const only = (flags: readonly string[], command: string): void => {
    const wrong = flags.filter((x) => f.has(x));
    if (wrong.length > 0) throw new UsageError(`${wrong.map((x) => `--${x}`).join(', ')} do${wrong.length === 1 ? 'es' : ''} not apply to ${command} shards`);
  };
  const shards = `${read.shards.length} shard${read.shards.length === 1 ? '' : 's'}`;
  if (read.command === 'check') {
    only(['out', 'force'], 'check');
    return mergedCheck(mergeCheck(read.shards), shards, f, io);
  }
  if (read.command === 'mutants') {
    only(['out', 'force', 'junit', 'regressions'], 'mutants');
    for (const s of read.shards) await validateMutantsShard(s.file, s.json);
    const m = mergeMutants(read.shards);
    io.out(`tidemark merge: mutants from ${shards}: ${m.mutants.length} mutants, at most ${m.runs} worlds each, seed ${m.seed}`);
    io.out(KILL_HEADER);
    for (const row of m.rows) io.out(formatKillRow(row));
    io.out(formatReferenceRow(m.reference));
    const outputs = new Outputs(io.err);
    const json = f.string('json');
    if (json !== undefined) outputs.write('--json', json, () => `${JSON.stringify(m, null, 2)}\n`);
    const verdict = matrixVerdict(m.rows, m.reference);
    for (const line of verdict.lines) io.out(line);
    return withOutputs(EXIT[verdict.status], outputs, io);
  }
  only(['json', 'junit', 'regressions'], 'report');
  const out = f.string('out');
  if (out === undefined) throw new UsageError('merging report shards writes the report: give --out FILE (REPORT.md, say)');
  guardReport(out, f.switch('force'));
  const r = mergeReport(read.shards);
  const text = await buildReport({ seed: r.seed, runs: r.runs, seeds: r.seeds, rows: r.rows, timed: true, testDir: 'test', progress: (line) => io.err(`report: ${line}`) });
  const outputs = new Outputs(io.err);
  if (outputs.write('--out', out, () => text)) io.out(`wrote ${out} from ${shards} (seed ${r.seed}, ${r.runs} worlds per search, ${r.seeds} seeds per mutant)`);
  return withOutputs(EXIT.pass, outputs, io);
}

/** A merged check, printed as `check` prints one: regressions, scenarios, generated worlds, checks, verdict. */
function mergedCheck(merged: MergedCheck, shards: string, f: Flags, io: Io): number {
  const j: CheckJson = merged.json;
  const flag = connectorFlag(j.adapter, targetOptions(j.run.identity)) ?? targetFlag(j.adapter, targetOptions(j.run.identity));
  const replay = (kind: 'scenario' | 'world', what: string): string => replayCommand(flag, kind, what);
  // Every failure is judged again from its history, so a file whose history was edited is
  // refused here, before anything is printed.
  const suite = junitSuiteOf(merged);
  io.out(`tidemark merge: check from ${shards}: consumer ${j.consumer} (${flag}), seed ${j.seed}, ${j.runs} generated worlds`);

  let shown = false;
  const show = (execution: Execution, command: string, provenance?: string): void => {
    // As check does: one full report, then a line and a replay command for each other failure.
    if (shown && provenance === undefined) {
      const a = execution.result.verdict.anomalies[0];
      io.out(`          ${a ? `${a.kind}: ${a.explanation}` : execution.result.verdict.status}`);
      io.out(`          Replay: ${command}`);
      return;
    }
    shown = true;
    io.out('');
    io.out(indent(renderFailure({ consumer: j.consumer, execution, replay: command, ...(provenance ? { provenance } : {}) })));
    io.out('');
  };

  if (suite.regressions.length > 0) io.out(`regressions: ${suite.regressions.length} replayed first, ${suite.regressions.filter((r) => r.status !== 'pass').length} still failing`);
  for (const r of suite.regressions) {
    const e = r.entry;
    const what = e.kind === 'scenario' ? `scenario ${e.scenario}` : `world seed ${e.seed} path ${e.path}`;
    const why = r.execution?.result.verdict.status === 'unknown' ? `: ${r.execution.result.verdict.reason}` : '';
    io.out(`  ${r.status.padEnd(7)} ${what}${r.status === 'pass' ? ' (fixed: prune it with tidemark regressions --prune)' : why}${r.note ? ` (${r.note})` : ''}`);
    if (r.status !== 'pass' && r.execution) show(r.execution, replay(e.kind, e.kind === 'scenario' ? e.scenario : worldWhat(e)));
  }
  for (const s of suite.scenarios) {
    if (s.status === 'skipped') io.out(`  ${s.status.padEnd(8)} ${s.scenario.name}: ${s.skipped}`);
    else {
      io.out(`  ${s.status.padEnd(8)} ${s.scenario.name} (${s.scenario.rules.join(' ')})${s.untested === undefined ? '' : `: ${s.untested}`}`);
      if (s.execution) show(s.execution, replay('scenario', s.scenario.name));
    }
  }
  const counted = (x: string): number => suite.scenarios.filter((s) => s.status === x).length;
  const ran = suite.scenarios.length - counted('skipped');
  io.out(
    `scenarios: ${counted('pass')} of ${ran} passed${counted('untested') > 0 ? `, ${counted('untested')} untested (their adversity never fired)` : ''}${counted('skipped') > 0 ? `, ${counted('skipped')} skipped` : ''}`,
  );
  const p = suite.property;
  if (p) {
    const by = merged.foundBy === null ? '' : `; found by shard ${merged.foundBy}`;
    io.out(`generated worlds: ${p.status} after ${p.runs} worlds${p.interrupted ? ' (a time limit ended some shard early)' : ''} (${p.calls} world calls over all shards${by}), seed ${p.seed}`);
    if (p.counterexample) show(p.counterexample, replay('world', worldWhat(p)), `minimal world, found after ${p.runs} worlds; the smallest of ${p.searches} shrunk failures`);
  }
  for (const c of suite.checks) if (c.status === 'untested') io.out(`check ${c.anomaly}: untested, ${c.reason}`);

  const outputs = new Outputs(io.err);
  const file = f.string('regressions');
  let found: readonly unknown[] = [];
  const record = (): void => {
    const entries = mergedRegressions(j, merged.sessionWorlds);
    const refused = unrecordableHere(entries);
    if (refused !== null) throw new Error(refused);
    found = recordRegressions(file as string, entries);
  };
  if (file !== undefined && outputs.attempt(`the regression file ${file}`, record) && found.length > 0) {
    io.out(`recorded ${found.length} new failure(s) in ${file}; they are replayed first from now on`);
  }
  const json = f.string('json');
  if (json !== undefined) outputs.write('--json', json, () => `${JSON.stringify(j, null, 2)}\n`);
  const junit = f.string('junit');
  if (junit !== undefined) outputs.write('--junit', junit, () => renderJUnit(suite, replay));
  const reason = (j as { reason?: string }).reason;
  if (reason !== undefined) io.out(`not a pass: ${reason}`);
  io.out(`verdict: ${j.verdict}`);
  return withOutputs(EXIT[j.verdict], outputs, io);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}
