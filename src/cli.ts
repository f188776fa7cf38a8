#!/usr/bin/env node
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ALL_SCENARIOS, findScenario } from '../scenarios/named.js';
import { PlanError } from '../scenarios/validate.js';
import { loadAdapter, AdapterLoadError } from './adapter.js';
import { processConsumer } from './process/bridge.js';
import { scenarioStatus, SEARCHES } from './conformance.js';
import type { AnyConsumer } from './consumer.js';
import { isBuiltIn, pruneRegressions, readRegressions, recordRegressions, RegressionFileError, REGRESSIONS_FILE, versionWarning, type RegressionEntry } from './regressions.js';
import { renderJUnit } from './report/junit.js';
import { renderPicture } from './report/picture.js';
import { newRegressions, runSuite, UnknownScenarioError, type SuiteResult } from './suite.js';
import { findMutant, MUTANTS } from './consumers/mutants.js';
import { BUILT_IN, builtInConsumer } from './consumers/registry.js';
import type { Execution } from './execute.js';
import { buildReport, REPORT_SEED, rowsOf } from './report/report-md.js';
import { MUTANT_BUDGET } from './kill-matrix.js';
import { DEFAULT_JOBS, killMatrix } from './search-pool.js';
import { formatKillRow, formatReferenceRow, KILL_HEADER } from './report/kill-table.js';
import { referenceConsumer } from './consumers/reference.js';
import { renderFailure } from './report/failure.js';
import { replayWorld } from './replay.js';

/** Exit codes: the verdict first, then the harness's own trouble. */
export const EXIT = { pass: 0, fail: 1, unknown: 2, usage: 3, error: 4 } as const;

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

class UsageError extends Error {}

const HELP: Record<string, string> = {
  '': `tidemark: conformance harness for consumers of paginated event streams

Usage: tidemark <command> [options]

Commands:
  check       run the named scenarios and generated worlds against a consumer
  replay      replay one world exactly, from a seed and path or a scenario name
  mutants     run every mutant in the catalog and print the kill matrix
  report      regenerate REPORT.md from a real run
  regressions list the regression file, or prune the entries that now pass
  scenarios   list the named scenarios and the rules each covers
  consumers   list the built-in consumers (the reference and the mutants)

Exit codes: 0 pass, 1 fail, 2 unknown (could not be judged), 3 usage or harness error.
Run 'tidemark <command> --help' for a command's options.`,
  check: `Usage: tidemark check [--adapter MODULE | --command CMD | --consumer NAME] [--runs N] [--seed N]
                      [--searches N] [--scenario NAME | --all] [--json FILE] [--junit FILE]
                      [--timeline FILE] [--regressions FILE]

Runs the conformance suite: failures recorded in the regression file first, then the named
scenarios, then generated worlds. A new failure is added to the regression file.

  --adapter MODULE   your consumer: a .ts or .js module exporting it (see docs/adapters.md)
  --command CMD      your consumer as a process in any language, speaking docs/protocol.md
  --consumer NAME    a built-in consumer instead (default: reference); see 'tidemark consumers'
  --runs N           generated worlds to try (default: 1000)
  --seed N           fast-check seed (default: a fresh one, printed)
  --searches N       after a failure, shrink this many searches and show the smallest
                     (default: 3; 1 with --command, where every world spawns processes)
  --scenario NAME    run only this named scenario; --all runs everything (the default)
  --json FILE        write the results as JSON
  --junit FILE       write the results as JUnit XML for CI
  --timeline FILE    write a picture (HTML with SVG) of the first failure
  --regressions FILE the regression file (default: ${REGRESSIONS_FILE})`,
  replay: `Usage: tidemark replay [--adapter MODULE | --command CMD | --consumer NAME] (--seed N --path P | --scenario NAME)
                       [--timeline FILE]

Replays one world exactly and prints its verdict and timeline. The seed and path are the
ones a failing 'tidemark check' printed.`,
  regressions: `Usage: tidemark regressions [--file FILE] [--prune]

Lists the regression file's entries; with --prune, replays each and removes those that now
pass. Nothing is pruned without --prune.`,
  mutants: `Usage: tidemark mutants [--runs N] [--seed N] [--only NAME,NAME] [--json FILE] [--jobs N]

Runs each mutant of the catalog for at most N generated worlds (default: ${MUTANT_BUDGET}) and prints
the kill matrix: the rule it breaks, the anomaly it must produce and the one found, whether
it was killed, the worlds it took, and the size of the shrunk counterexample. The
reference consumer runs under the same seed and budget and must pass. Exit 0 when every
mutant is killed and the reference passes, 1 otherwise.

  --json FILE   also write the matrix as JSON
  --jobs N      search on N threads (default: ${DEFAULT_JOBS}, one per core); the matrix is the same for any N`,
  report: `Usage: tidemark report [--seed N] [--runs N] [--seeds K] [--out FILE] [--jobs N]

Runs the named scenarios against every reference variant, the kill matrix, and each mutant
under K seeds (default 20) for the reliability table, and writes the report as Markdown
(default: REPORT.md). The seed defaults to ${REPORT_SEED}, the one the committed report uses.
--reuse-searches re-renders the report from the per-seed searches it already holds;
--redo NAME,NAME with it searches again for those mutants only. --jobs N searches on N
threads (default: ${DEFAULT_JOBS}, one per core); the report is the same for any N.`,
  scenarios: 'Usage: tidemark scenarios\n\nLists the named scenarios with the rules each covers.',
  consumers: 'Usage: tidemark consumers\n\nLists the built-in consumers: reference variants and mutants.',
};

export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [command = '', ...rest] = argv;
  try {
    if (command === '' || command === '--help' || command === '-h' || command === 'help') {
      io.out(HELP['']!);
      return command === '' ? EXIT.usage : EXIT.pass;
    }
    if (!(command in HELP)) throw new UsageError(`unknown command '${command}'`);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(HELP[command]!);
      return EXIT.pass;
    }
    switch (command) {
      case 'check':
        return await check(rest, io);
      case 'replay':
        return await replay(rest, io);
      case 'mutants':
        return await mutants(rest, io);
      case 'report':
        return await report(rest, io);
      case 'regressions':
        return await regressions(rest, io);
      case 'scenarios':
        for (const s of ALL_SCENARIOS) io.out(`${s.name.padEnd(42)} ${s.rules.join(' ')}`);
        return EXIT.pass;
      default:
        for (const name of BUILT_IN.keys()) {
          const m = MUTANTS.find((x) => x.name === name);
          io.out(m ? `${name.padEnd(28)} mutant, breaks ${m.rule}: ${m.description}` : `${name.padEnd(28)} reference consumer`);
        }
        return EXIT.pass;
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof PlanError || error instanceof UnknownScenarioError || error instanceof RegressionFileError) {
      io.err(`tidemark: ${error.message}`);
      io.err(`Run 'tidemark ${command in HELP ? `${command} ` : ''}--help' for usage.`);
      return EXIT.usage;
    }
    if (error instanceof AdapterLoadError || (error instanceof Error && error.name === 'AdapterError')) {
      io.err(`tidemark: ${error.message}`);
      return EXIT.usage;
    }
    io.err(`tidemark: harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return EXIT.usage;
  }
}

function options(args: readonly string[], spec: Record<string, { readonly type: 'string' | 'boolean' }>): Record<string, string | undefined> & { all?: boolean; prune?: boolean } {
  try {
    return parseArgs({ args: [...args], options: spec, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The consumer a command targets: a built-in by name, or an adapter module; and how replay commands name it. */
interface Target {
  readonly consumer: AnyConsumer;
  /** The flag that names it again: `--adapter PATH` or `--consumer NAME`. */
  readonly flag: string;
  /** Its key in the regression file. */
  readonly id: string;
}

async function target(o: Record<string, string | undefined>): Promise<Target> {
  const given = [o.adapter, o.consumer, o.command].filter((x) => x !== undefined).length;
  if (given > 1) throw new UsageError('give one of --adapter, --command or --consumer, not both');
  if (o.adapter !== undefined) return { consumer: await loadAdapter(o.adapter), flag: `--adapter ${o.adapter}`, id: o.adapter };
  if (o.command !== undefined) return { consumer: await processConsumer(o.command), flag: `--command ${shellQuote(o.command)}`, id: `command:${o.command}` };
  const name = o.consumer ?? 'reference';
  const consumer = builtInConsumer(name);
  if (!consumer) throw new UsageError(`no consumer named '${name}'; known: ${[...BUILT_IN.keys()].join(', ')}`);
  return { consumer, flag: `--consumer ${name}`, id: `builtin:${name}` };
}

function integer(value: string | undefined, flag: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be an integer of at least ${min}, got '${value}'`);
  return n;
}

function replayOf(t: Target, kind: 'scenario' | 'world', what: string): string {
  if (kind === 'scenario') return `npx tidemark replay ${t.flag} --scenario ${what}`;
  const [seed, path] = what.split('|');
  return `npx tidemark replay ${t.flag} --seed ${seed} --path "${path}"`;
}

/** Quotes a value for a POSIX shell, so a printed replay command can be pasted as it is. */
function shellQuote(value: string): string {
  return /^[\w./:=@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

const CHECK_FLAGS = {
  adapter: { type: 'string' },
  command: { type: 'string' },
  consumer: { type: 'string' },
  runs: { type: 'string' },
  seed: { type: 'string' },
  searches: { type: 'string' },
  scenario: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'string' },
  junit: { type: 'string' },
  timeline: { type: 'string' },
  regressions: { type: 'string' },
} as const;

async function check(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, CHECK_FLAGS);
  if (o.all && o.scenario !== undefined) throw new UsageError('give --scenario NAME or --all, not both');
  const t = await target(o);
  const runs = integer(o.runs, '--runs', 1000, 1);
  const searches = integer(o.searches, '--searches', o.command === undefined ? SEARCHES : 1, 1);
  // The one place a fresh seed is drawn; it is printed first so any run can be repeated.
  const seed = integer(o.seed, '--seed', Math.floor(Math.random() * 0x7fffffff), 0);
  const file = o.regressions ?? REGRESSIONS_FILE;
  const stored = readRegressions(file);
  io.out(`tidemark check: consumer ${t.consumer.name} (${t.flag}), seed ${seed}, ${o.scenario === undefined ? `${runs} generated worlds` : `scenario ${o.scenario}`}`);
  const live = process.stderr.isTTY === true && !process.env.CI;
  const result = await runSuite(t.consumer, {
    adapter: t.id,
    seed,
    runs,
    searches,
    ...(o.scenario === undefined ? {} : { scenario: o.scenario }),
    regressions: stored.entries,
    // A progress line on a terminal; CI logs get the plain lines only.
    ...(live ? { progress: (n: number) => n % 25 === 0 && process.stderr.write(`\r  worlds: ${n}`) } : {}),
  });
  if (live) process.stderr.write('\r\x1b[K');

  let shown = false;
  const show = (execution: Execution, replay: string, provenance?: string): void => {
    // One full report per kind of evidence is enough to act on; the others are a line and a
    // replay command away. The minimal generated world always gets its full report.
    if (shown && provenance === undefined) {
      const a = execution.result.verdict.anomalies[0];
      io.out(`          ${a ? `${a.kind}: ${a.explanation}` : execution.result.verdict.status}`);
      io.out(`          Replay: ${replay}`);
      return;
    }
    shown = true;
    io.out('');
    io.out(indent(renderFailure({ consumer: t.consumer.name, execution, replay, ...(provenance ? { provenance } : {}) })));
    io.out('');
  };
  if (result.regressions.length > 0) {
    const failing = result.regressions.filter((r) => r.status !== 'pass');
    io.out(`regressions (${file}): ${result.regressions.length} replayed first, ${failing.length} still failing`);
    for (const r of result.regressions) {
      const what = r.entry.kind === 'scenario' ? `scenario ${r.entry.scenario}` : `world seed ${r.entry.seed} path ${r.entry.path}`;
      const why = r.execution?.result.verdict.status === 'unknown' ? `: ${r.execution.result.verdict.reason}` : '';
      io.out(`  ${r.status.padEnd(7)} ${what}${r.status === 'pass' ? ' (fixed: prune it with tidemark regressions --prune)' : why}${r.note ? ` (${r.note})` : ''}`);
      const warning = versionWarning(r.entry);
      if (warning) io.out(`          warning: ${warning}`);
      if (r.status !== 'pass' && r.execution) show(r.execution, replayOf(t, r.entry.kind, r.entry.kind === 'scenario' ? r.entry.scenario : `${r.entry.seed}|${r.entry.path}`));
    }
  }
  const statuses = result.scenarios.map(scenarioStatus);
  const counted = (x: string): number => statuses.filter((v) => v === x).length;
  const ran = result.scenarios.filter((s) => s.execution).length;
  io.out(
    `scenarios: ${counted('pass')} of ${ran} passed${counted('untested') > 0 ? `, ${counted('untested')} untested (their adversity never fired)` : ''}${counted('skipped') > 0 ? `, ${counted('skipped')} skipped` : ''}`,
  );
  for (const s of result.scenarios) {
    const v = scenarioStatus(s);
    if (s.execution === undefined) {
      io.out(`  ${v.padEnd(8)} ${s.scenario.name}: ${s.skipped}`);
      continue;
    }
    io.out(`  ${v.padEnd(8)} ${s.scenario.name} (${s.scenario.rules.join(' ')})${s.untested === undefined ? '' : `: ${s.untested}`}`);
    if (v !== 'pass' && v !== 'untested') show(s.execution, replayOf(t, 'scenario', s.scenario.name));
  }
  const p = result.property;
  if (p) {
    io.out(`generated worlds: ${p.status} after ${p.runs} worlds (${p.calls} world calls), seed ${p.seed}`);
    if (p.counterexample) show(p.counterexample, replayOf(t, 'world', `${p.seed}|${p.path}`), `minimal world, found after ${p.runs} worlds; the smallest of ${p.searches} shrunk failures`);
  }
  for (const c of result.checks) if (c.status === 'untested') io.out(`check ${c.anomaly}: untested, ${c.reason}`);

  // Merged into the file as it is now, under its lock: other checks may have written since.
  const found = recordRegressions(file, newRegressions(result));
  if (found.length > 0) io.out(`recorded ${found.length} new failure(s) in ${file}; they are replayed first from now on`);
  if (o.json !== undefined) writeFileSync(o.json, `${JSON.stringify(summarize(result, t), null, 2)}\n`);
  if (o.junit !== undefined) writeFileSync(o.junit, renderJUnit(result, (kind, what) => replayOf(t, kind, what)));
  if (o.timeline !== undefined) {
    const failing = firstFailure(result, t);
    if (failing) {
      writeFileSync(o.timeline, renderPicture(failing.execution, { consumer: t.consumer.name, replay: failing.replay }));
      io.out(`timeline picture of the failure: ${o.timeline}`);
    } else io.out(`no failure, so no timeline picture written to ${o.timeline}`);
  }
  io.out(`verdict: ${result.status}`);
  return EXIT[result.status];
}

function firstFailure(result: SuiteResult, t: Target): { execution: Execution; replay: string } | null {
  for (const r of result.regressions) {
    if (r.status !== 'pass' && r.execution) return { execution: r.execution, replay: replayOf(t, r.entry.kind, r.entry.kind === 'scenario' ? r.entry.scenario : `${r.entry.seed}|${r.entry.path}`) };
  }
  for (const s of result.scenarios) if (s.execution && s.execution.result.verdict.status !== 'pass') return { execution: s.execution, replay: replayOf(t, 'scenario', s.scenario.name) };
  const p = result.property;
  return p?.counterexample ? { execution: p.counterexample, replay: replayOf(t, 'world', `${p.seed}|${p.path}`) } : null;
}

/** The suite for machines: verdicts, anomalies and replay commands; histories only for failures. */
function summarize(result: SuiteResult, t: Target): unknown {
  const failure = (e: Execution | null | undefined) =>
    e && e.result.verdict.status !== 'pass' ? { anomalies: e.result.verdict.anomalies, plan: e.plan, history: e.history, hash: e.hash } : undefined;
  return {
    consumer: result.consumer,
    adapter: t.id,
    seed: result.seed,
    verdict: result.status,
    regressions: result.regressions.map((r) => ({ ...r.entry, status: r.status, failure: failure(r.execution) })),
    scenarios: result.scenarios.map((s) => ({
      name: s.scenario.name,
      rules: s.scenario.rules,
      status: scenarioStatus(s),
      ...(s.skipped ? { skipped: s.skipped } : {}),
      ...(s.untested ? { untested: s.untested } : {}),
      ...(s.execution && s.execution.result.verdict.status !== 'pass' ? { replay: replayOf(t, 'scenario', s.scenario.name), failure: failure(s.execution) } : {}),
    })),
    worlds: result.property && {
      status: result.property.status,
      runs: result.property.runs,
      seed: result.property.seed,
      path: result.property.path,
      ...(result.property.counterexample ? { replay: replayOf(t, 'world', `${result.property.seed}|${result.property.path}`), failure: failure(result.property.counterexample) } : {}),
    },
    checks: result.checks,
  };
}

async function replay(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { adapter: { type: 'string' }, command: { type: 'string' }, consumer: { type: 'string' }, seed: { type: 'string' }, path: { type: 'string' }, scenario: { type: 'string' }, timeline: { type: 'string' } });
  const t = await target(o);
  let execution: Execution | null;
  let replayed: string;
  if (o.scenario !== undefined) {
    const scenario = findScenario(o.scenario);
    if (!scenario) throw new UsageError(`no scenario named '${o.scenario}'; see 'tidemark scenarios'`);
    execution = (await replayWorld(t.consumer, { plan: scenario.plan }))?.execution ?? null;
    replayed = replayOf(t, 'scenario', scenario.name);
  } else {
    if (o.seed === undefined || o.path === undefined) throw new UsageError('replay needs --seed and --path, or --scenario');
    if (!/^\d+(:\d+)*$/.test(o.path)) throw new UsageError(`--path must look like 12:0:3, got '${o.path}'`);
    const seed = integer(o.seed, '--seed', 0, 0);
    // Twice, and compared: a consumer that is not deterministic gets unknown, never a PASS.
    execution = (await replayWorld(t.consumer, { seed, path: o.path }))?.execution ?? null;
    replayed = replayOf(t, 'world', `${seed}|${o.path}`);
    if (execution?.result.verdict.status === 'pass') {
      io.out(`PASS  ${t.consumer.name}: the world at seed ${seed}, path ${o.path} passes`);
      return EXIT.pass;
    }
  }
  if (execution === null) throw new UsageError('the seed and path lead to no world');
  io.out(renderFailure({ consumer: t.consumer.name, execution, replay: replayed }));
  if (o.timeline !== undefined) writeFileSync(o.timeline, renderPicture(execution, { consumer: t.consumer.name, replay: replayed }));
  return EXIT[execution.result.verdict.status];
}

async function regressions(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { file: { type: 'string' }, prune: { type: 'boolean' } });
  const file = o.file ?? REGRESSIONS_FILE;
  const stored = readRegressions(file);
  if (!o.prune) {
    io.out(`${file}: ${stored.entries.length} entries`);
    for (const e of stored.entries) io.out(`  ${e.adapter}: ${e.kind === 'scenario' ? `scenario ${e.scenario}` : `world seed ${e.seed} path ${e.path}`} (${e.anomaly})`);
    return EXIT.pass;
  }
  const passing: RegressionEntry[] = [];
  for (const entry of stored.entries) {
    if (isBuiltIn(entry)) {
      io.out(`  prune ${entry.adapter}: ${entry.kind === 'scenario' ? `scenario ${entry.scenario}` : `world seed ${entry.seed} path ${entry.path}`} (a built-in consumer, not yours)`);
      passing.push(entry);
      continue;
    }
    const t = await target(
      entry.adapter.startsWith('builtin:') ? { consumer: entry.adapter.slice('builtin:'.length) }
      : entry.adapter.startsWith('command:') ? { command: entry.adapter.slice('command:'.length) }
      : { adapter: entry.adapter },
    );
    const result = await runSuite(t.consumer, { adapter: entry.adapter, seed: 0, runs: 1, scenario: ALL_SCENARIOS[0]!.name, regressions: [entry] });
    const still = result.regressions[0]?.status !== 'pass';
    io.out(`  ${still ? 'keep ' : 'prune'} ${entry.adapter}: ${entry.kind === 'scenario' ? `scenario ${entry.scenario}` : `world seed ${entry.seed} path ${entry.path}`}`);
    if (!still) passing.push(entry);
  }
  // Removed from the file as it is now: entries recorded while these replayed stay.
  const { removed, kept } = pruneRegressions(file, passing);
  io.out(`pruned ${removed} passing entr${removed === 1 ? 'y' : 'ies'}; ${kept} kept`);
  return EXIT.pass;
}

async function mutants(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { runs: { type: 'string' }, seed: { type: 'string' }, only: { type: 'string' }, json: { type: 'string' }, jobs: { type: 'string' } });
  const runs = integer(o.runs, '--runs', MUTANT_BUDGET, 1);
  const seed = integer(o.seed, '--seed', Math.floor(Math.random() * 0x7fffffff), 0);
  const names = o.only?.split(',').map((n) => n.trim()) ?? null;
  const unknown = names?.filter((n) => !findMutant(n)) ?? [];
  if (unknown.length > 0) throw new UsageError(`no mutant named ${unknown.map((n) => `'${n}'`).join(', ')}; see 'tidemark consumers'`);
  const chosen = names === null ? MUTANTS : MUTANTS.filter((m) => names.includes(m.name));
  io.out(`tidemark mutants: ${chosen.length} mutants, at most ${runs} worlds each, seed ${seed}`);
  io.out(KILL_HEADER);
  const jobs = integer(o.jobs, '--jobs', DEFAULT_JOBS, 1);
  const matrix = await killMatrix(chosen, referenceConsumer({ name: 'reference' }), { runs, seed, jobs }, (row) => io.out(formatKillRow(row)));
  io.out(formatReferenceRow(matrix.reference));
  if (o.json !== undefined) writeFileSync(o.json, `${JSON.stringify(matrix, (k, v: unknown) => (k === 'counterexample' ? undefined : v), 2)}\n`);
  const killed = matrix.rows.filter((r) => r.killed).length;
  const ok = killed === matrix.rows.length && matrix.reference.status === 'pass';
  io.out(`verdict: ${killed} of ${matrix.rows.length} mutants killed, reference ${matrix.reference.status}`);
  for (const r of matrix.rows.filter((x) => !x.killed)) {
    io.out(`  not killed: ${r.mutant}${r.found ? ` (found ${r.found}, expected ${r.expected.join(' or ')})` : ''}; replay with --seed ${r.seed}`);
  }
  return ok ? EXIT.pass : EXIT.fail;
}

async function report(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { seed: { type: 'string' }, runs: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' }, 'reuse-searches': { type: 'boolean' }, redo: { type: 'string' }, jobs: { type: 'string' } });
  const seed = integer(o.seed, '--seed', REPORT_SEED, 0);
  const runs = integer(o.runs, '--runs', MUTANT_BUDGET, 1);
  const seeds = integer(o.seeds, '--seeds', 20, 1);
  const out = o.out ?? 'REPORT.md';
  const jobs = integer(o.jobs, '--jobs', DEFAULT_JOBS, 1);
  // Reusing the searches of the existing report only re-renders it; the staleness test's
  // sample of re-run searches still says whether those searches are current.
  const previous = o['reuse-searches'] && existsSync(out) ? readFileSync(out, 'utf8') : undefined;
  const rows = previous === undefined ? undefined : rowsOf(previous);
  for (const name of o.redo?.split(',') ?? []) {
    if (!findMutant(name.trim())) throw new UsageError(`no mutant named '${name.trim()}'`);
    rows?.delete(name.trim());
  }
  const text = await buildReport({ seed, runs, seeds, jobs, testDir: 'test', progress: (line) => io.err(`report: ${line}`), ...(rows ? { rows, previous } : {}) });
  writeFileSync(out, text);
  io.out(`wrote ${out} (seed ${seed}, ${runs} worlds per search, ${seeds} seeds per mutant)`);
  return EXIT.pass;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  // A closed pipe (| head) ends the output, not the process with a stack trace.
  process.stdout.on('error', () => process.exit(process.exitCode ?? 0));
  const io: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };
  main(process.argv.slice(2), io).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`tidemark: harness error: ${String(error)}\n`);
      process.exitCode = EXIT.usage;
    },
  );
}
