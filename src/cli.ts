#!/usr/bin/env node
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALL_SCENARIOS, findScenario } from '../scenarios/named.js';
import { DEFAULT_SIZE } from '../scenarios/arbitraries.js';
import { PlanError } from '../scenarios/validate.js';
import { doing, testing, watched } from './cli/activity.js';
import { loadAdapter, AdapterLoadError } from './adapter/load.js';
import { commandHelp, EXIT, findCommand, globalHelp, MAX_RUNS, parseFlags, UsageError, type Flags } from './cli/spec.js';
import { processConsumer, processStats, type ProcessOptions } from './adapter/process/bridge.js';
import { describeFinalReplays, replayUnderRealKills, type FinalReplay } from './run/final-replay.js';
import { ConsumerUnrunnableError } from './adapter/errors.js';
import { owns, scenarioPlan, scenarioStatus, SEARCHES, whyNot, type Shard, type ShardPeers } from './run/conformance.js';
import { checkJson } from './run/check-json.js';
import type { AnyConsumer } from './adapter/consumer.js';
import type { Io } from './cli/io.js';
import { clearOutputs, guardReport, Outputs, prepareOutput, prepareOutputs, withOutputs } from './cli/outputs.js';
import { Progress } from './cli/progress.js';
import { comparableHash, entriesById, isBuiltIn, ofTarget, pruneRegressions, shortId, readRegressions, recordRegressions, RegressionFileError, versionWarning, type RegressionEntry } from './run/regressions.js';
import { renderJUnit } from './report/junit.js';
import { renderPicture } from './report/picture.js';
import { newRegressions, replayedRegressions, runSuite, UnknownScenarioError, type RegressionOutcome, type SuiteResult } from './run/suite.js';
import { checkedSuite, jobArgv, JobsEnded, runJobs, type CheckedSuite, type JobsOutcome } from './cli/jobs.js';
import { renderCensus } from './selftest/adversity-census.js';
import { findMutant, MUTANTS } from './selftest/mutants.js';
import { BUILT_IN, builtInConsumer } from './selftest/registry.js';
import type { Execution } from './run/execute.js';
import { replayWorld } from './run/replay.js';
import { missedAdversity, onlyLivenessExercised } from './run/exercised.js';
import { rowsOf } from './report/report-md.js';
import { buildReport, reportTasks } from './selftest/report.js';
import { killMatrix } from './selftest/kill-matrix.js';
import { runSearches } from './selftest/search-pool.js';
import type { MutantsJson, ReportShardJson } from './cli/merge.js';
import { formatKillRow, formatReferenceRow, KILL_HEADER, matrixVerdict } from './report/kill-table.js';
import { referenceConsumer } from './selftest/reference.js';
import { renderFailure } from './report/failure.js';
import { runSupervised, SUPERVISED } from './cli/supervised.js';
import { supervise } from './cli/supervisor.js';
import { merge } from './cli/merge-command.js';
import { judge } from './cli/judge-command.js';
import { replayCommand, targetFlag, worldWhat } from './report/replay-command.js';
import { runId, targetDigest, type RunIdentity } from './run/run-identity.js';
import { tidemarkBuild } from './run/build.js';
import { notOurs } from './cli/environment.js';
import { placeOf, type WorldPlace } from './run/world-place.js';
import { connectorFlag, connectorOf, connectorTarget } from './connector/target.js';
import { ConnectorUnjudgedError } from './connector/errors.js';

export type { Io } from './cli/io.js';

export { EXIT } from './cli/spec.js';

/** `peers`: when the command runs supervised, its link to the jobs beside it (a check run as a job of `check --jobs`). */
export async function main(argv: readonly string[], io: Io, peers?: ShardPeers): Promise<number> {
  const [command = '', ...rest] = argv;
  // How to replay the world an error came from, once a check knows its target (see WorldPlace).
  const replayOfPlace: { command?: (place: WorldPlace) => string } = {};
  try {
    if (command === '' || command === '--help' || command === '-h') {
      io.out(globalHelp());
      return command === '' ? EXIT.usage : EXIT.pass;
    }
    if (command === '--version' || command === '-V') {
      io.out(`tidemark ${version()}`);
      return EXIT.pass;
    }
    if (command === 'help') {
      const [asked, ...extra] = rest;
      const topic = asked === '--help' || asked === '-h' ? 'help' : asked;
      if (extra.length > 0) throw new UsageError(`help takes one command name, got ${rest.join(' ')}`);
      if (topic === undefined) {
        io.out(globalHelp());
        return EXIT.pass;
      }
      const spec = findCommand(topic);
      if (!spec) throw new UsageError(`no command named '${topic}'; the commands are listed by 'tidemark help'`);
      io.out(commandHelp(spec));
      return EXIT.pass;
    }
    const spec = findCommand(command);
    if (!spec) throw new UsageError(`unknown command '${command}'`);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(commandHelp(spec));
      return EXIT.pass;
    }
    const flags = parseFlags(spec, rest);
    switch (command) {
      case 'check':
        return await check(flags, io, peers, replayOfPlace);
      case 'replay':
        return await replay(flags, io);
      case 'mutants':
        return await mutants(flags, io);
      case 'report':
        return await report(flags, io);
      case 'regressions':
        return await regressions(flags, io);
      case 'merge':
        return await merge(flags, io);
      case 'judge':
        return judge(flags, io);
      case 'scenarios':
        for (const s of ALL_SCENARIOS) io.out(`${s.name.padEnd(42)} ${s.rules.join(' ')}`);
        return EXIT.pass;
      default:
        // One column as wide as the longest name, so every description starts in it.
        const width = Math.max(...[...BUILT_IN.keys()].map((n) => n.length)) + 2;
        for (const name of BUILT_IN.keys()) {
          const m = MUTANTS.find((x) => x.name === name);
          io.out(m ? `${name.padEnd(width)}mutant, breaks ${m.rule}: ${m.description}` : `${name.padEnd(width)}reference consumer`);
        }
        return EXIT.pass;
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof PlanError || error instanceof UnknownScenarioError || error instanceof RegressionFileError) {
      io.err(`tidemark: ${error.message}`);
      io.err(`Run 'tidemark help${findCommand(command) && command !== 'help' ? ` ${command}` : ''}' for usage.`);
      return EXIT.usage;
    }
    // A connector that speaks another protocol, or prints no record or state: no world can be judged.
    if (error instanceof ConnectorUnjudgedError) {
      io.err(`tidemark: the run could not be judged: ${error.message}`);
      io.out('verdict: unknown');
      return EXIT.unknown;
    }
    // A consumer that cannot be run at all (it dies before its first call, again and again;
    // it speaks another protocol) is a setup problem to fix, not a verdict on its logic.
    const place = placeOf(error);
    const replayIt = place !== null && replayOfPlace.command !== undefined ? `Replay that world: ${replayOfPlace.command(place)}` : null;
    if (error instanceof AdapterLoadError || error instanceof ConsumerUnrunnableError || (error instanceof Error && error.name === 'AdapterError')) {
      io.err(`tidemark: ${error.message}`);
      if (replayIt !== null) io.err(replayIt);
      return EXIT.usage;
    }
    const why = notOurs(error);
    if (why !== null) {
      io.err(`tidemark: the run could not be judged: ${why}`);
      io.out('verdict: unknown');
      return EXIT.unknown;
    }
    io.err(`tidemark: harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (replayIt !== null) io.err(replayIt);
    return EXIT.error;
  }
}

/** The version in tidemark's package.json, found upwards from this module (built or not). */
function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'tidemark' && pkg.version) return pkg.version;
  }
  return 'unknown';
}

/** The consumer a command targets: a built-in by name, an adapter module, or a process; and how replay commands name it. */
interface Target {
  readonly consumer: AnyConsumer;
  /** The flag that names it again, quoted for a shell: `--adapter PATH`, `--command CMD` or `--consumer NAME`. */
  readonly flag: string;
  /** Its key in the regression file, with its options. */
  readonly id: string;
  readonly options: Readonly<Record<string, string>>;
  /** The sha256 of its code, when it is not the one targetDigest computes from the id (a connector's). */
  readonly digest?: string;
  /** A line for the end of a check, when the target has something to say about how it ran. */
  readonly note?: () => string | null;
  /** The consumer's own words in the world of a history (a connector's logs), for its failure text. */
  readonly output?: (history: Execution['history']) => readonly string[];
  /** A process consumer: how many worlds it ran with session crashes, and the same command killed for real. */
  readonly process?: { readonly sessionWorlds: () => number; readonly realKills: () => Promise<AnyConsumer> };
}

interface TargetSpec {
  readonly adapter?: string | undefined;
  readonly command?: string | undefined;
  readonly consumer?: string | undefined;
  readonly singer?: string | undefined;
  readonly airbyte?: string | undefined;
  readonly api?: string | undefined;
  /** `--option KEY=VALUE`, keys in order. */
  readonly options?: Readonly<Record<string, string>>;
}

/**
 * Loads the target. Every consumer is watched (src/activity.ts): its world calls are
 * counted, so that a stuck run can be reported with its last call.
 */
async function target(o: TargetSpec, processOptions: ProcessOptions = {}): Promise<Target> {
  const given = [o.adapter, o.consumer, o.command, o.singer, o.airbyte].filter((x) => x !== undefined).length;
  if (given > 1) throw new UsageError('give one of --adapter, --command, --consumer, --singer or --airbyte, not both');
  const options = o.options ?? {};
  const connector = o.singer !== undefined ? ('singer' as const) : o.airbyte !== undefined ? ('airbyte' as const) : null;
  if ((connector === null) !== (o.api === undefined)) throw new UsageError(connector === null ? '--api is for a --singer tap or an --airbyte source' : `--${connector} needs --api FILE: the HTTP API the connector reads (docs/connectors.md)`);
  if (connector !== null) {
    const command = (o.singer ?? o.airbyte) as string;
    testing(`${connector} connector \`${command}\``, false);
    const c = connectorTarget(connector, command, o.api as string, options, processOptions.stallMs === undefined ? {} : { stallMs: processOptions.stallMs });
    return { consumer: watched(c.consumer), flag: c.flag, id: c.id, options, digest: c.digest, note: c.note, output: c.output };
  }
  if (o.adapter !== undefined) {
    testing(`adapter '${o.adapter}'`, true);
    return { consumer: watched(await loadAdapter(o.adapter, process.cwd(), options)), flag: targetFlag(o.adapter, options), id: o.adapter, options };
  }
  if (o.command !== undefined) {
    testing(`command \`${o.command}\``, false);
    doing('starting the consumer process for its hello');
    const command = o.command;
    // Every process of the run inherits them: its hello process, each incarnation, a spare.
    // Set or removed: a check run in a process that ran another must not hand on that one's options.
    if (Object.keys(options).length > 0) process.env.TIDEMARK_OPTIONS = JSON.stringify(options);
    else delete process.env.TIDEMARK_OPTIONS;
    const consumer = await processConsumer(command, processOptions);
    const real = { ...processOptions, kills: 'real' } as const;
    const proc = { sessionWorlds: () => processStats(consumer)?.sessionWorlds ?? 0, realKills: () => processConsumer(command, real) };
    return { consumer: watched(consumer), flag: targetFlag(`command:${command}`, options), id: `command:${command}`, options, process: proc };
  }
  if (Object.keys(options).length > 0) throw new UsageError('--option is for an --adapter module or a --command process; a built-in consumer takes none');
  const name = o.consumer ?? 'reference';
  const consumer = builtInConsumer(name);
  if (!consumer) throw new UsageError(`no consumer named '${name}'; known: ${[...BUILT_IN.keys()].join(', ')}`);
  testing(`consumer ${name}`, false);
  return { consumer: watched(consumer), flag: targetFlag(`builtin:${name}`), id: `builtin:${name}`, options };
}

/** The flags that name a target, as given. */
function targetFlags(f: Flags): TargetSpec {
  return { adapter: f.string('adapter'), command: f.string('command'), consumer: f.string('consumer'), singer: f.string('singer'), airbyte: f.string('airbyte'), api: f.string('api') };
}

/** The world size asked for, with the default size (asked for or not) as none: both make the same worlds. */
function worldSize(events: number | undefined): number | undefined {
  return events === DEFAULT_SIZE.maxEvents ? undefined : events;
}

/** Whether two fast-check paths lead to the same world: the same numbers, however written (`012` is 12). */
function samePath(a: string, b: string): boolean {
  const norm = (p: string): string => p.split(':').map((n) => String(Number(n))).join(':');
  return norm(a) === norm(b);
}

/** A target's options as its run identity holds them: JSON with keys in order, or null for none. */
function optionsText(options: Readonly<Record<string, string>>): string | null {
  return Object.keys(options).length === 0 ? null : JSON.stringify(options);
}

/**
 * The process flags that mean nothing for a connector, and why (docs/connectors.md, Flags).
 * --stall-ms it honours: a connector may work that long between two HTTP requests or lines.
 */
const NOT_FOR_CONNECTORS: readonly (readonly [string, string])[] = [
  ['hello-ms', 'a connector says no hello; the time from its start to its first request or line counts against --stall-ms'],
  ['kills', 'every sync attempt is its own process, killed with SIGKILL: a connector has no session to crash'],
  ['session-incarnations', 'a connector process serves one sync attempt, so there is no session process to replace'],
  ['session-memory', 'a connector process serves one sync attempt, so there is no session process to replace'],
  ['fork-server', 'a connector is run as it is, started for each sync attempt'],
];

const CHECK_ONLY = ['kills', 'session-incarnations', 'session-memory'];

/** --hello-ms and --stall-ms, which only a --command consumer has (a connector, --stall-ms alone); and check's --kills. */
function processOptions(f: Flags, check = false): ProcessOptions {
  const connector = f.has('singer') ? 'singer' : f.has('airbyte') ? 'airbyte' : null;
  if (connector !== null && !f.has('command')) {
    // kills and the session flags are check's alone: replay has no such flags to ask about.
    for (const [name, why] of NOT_FOR_CONNECTORS) if ((check || !CHECK_ONLY.includes(name)) && f.has(name)) throw new UsageError(`--${name} means nothing for a --${connector} connector: ${why}`);
    return { stallMs: f.number('stall-ms') as number };
  }
  if (!f.has('command')) {
    for (const name of ['hello-ms', 'stall-ms', 'fork-server', ...(check ? ['kills', 'session-incarnations', 'session-memory'] : [])]) if (f.has(name)) throw new UsageError(`--${name} applies only to a --command consumer`);
    return {};
  }
  // Only check samples: a replay, one world, always kills for real.
  const kills = check ? f.string('kills') : 'real';
  if (kills !== 'real' && kills !== 'sampled') throw new UsageError(`--kills must be real or sampled, got '${kills}'`);
  const sessions = check ? { sessionIncarnations: f.number('session-incarnations') as number, sessionMemoryMb: f.number('session-memory') as number } : {};
  const forks = f.string('fork-server');
  if (forks !== 'on' && forks !== 'off') throw new UsageError(`--fork-server must be on or off, got '${forks}'`);
  return { helloMs: f.number('hello-ms') as number, stallMs: f.number('stall-ms') as number, kills, forkServer: forks === 'on', ...sessions };
}

function replayOf(t: Target, kind: 'scenario' | 'world', what: string): string {
  return replayCommand(t.flag, kind, what);
}

/** Refuses flags given together that cannot both be meant. */
function conflicts(f: Flags, one: string, others: readonly string[]): void {
  const clash = others.filter((o) => f.has(o));
  if (f.has(one) && clash.length > 0) throw new UsageError(`--${one} cannot be combined with ${clash.map((c) => `--${c}`).join(', ')}: ${one === 'scenario' ? 'a named scenario is one fixed world' : 'they contradict each other'}`);
}

/**
 * What a shard needs: the seed given (every shard must search the same worlds) and a --json
 * file, which is what `tidemark merge` combines.
 */
function shardNeeds(f: Flags, command: string): void {
  if (!f.has('seed') && command !== 'report') throw new UsageError(`--shard needs --seed: every shard of a ${command} must search from the same seed`);
  if (!f.has('json')) throw new UsageError(`--shard needs --json FILE: 'tidemark merge' combines the shards' JSON files into the run's result`);
}

function shardText(shard: Shard): string {
  return `shard ${shard.index} of ${shard.count}`;
}

/** The generated worlds of `runs` that are this shard's (see checkProperty). */
function shareOf(runs: number, shard: Shard): number {
  return runs < shard.index ? 0 : Math.floor((runs - shard.index) / shard.count) + 1;
}

async function check(f: Flags, io: Io, peers: ShardPeers | undefined, replayOfPlace: { command?: (place: WorldPlace) => string }): Promise<number> {
  if (f.switch('all')) conflicts(f, 'all', ['scenario']);
  conflicts(f, 'scenario', ['runs', 'seed', 'searches', 'time-limit', 'shard', 'events', 'jobs']);
  const shard = f.shard('shard');
  if (shard) shardNeeds(f, 'check');
  const jobs = f.number('jobs') as number;
  if (shard && jobs > 1) {
    throw new UsageError(
      `--jobs cannot be combined with --shard: a shard is one process. To use ${jobs} cores on each machine of a matrix of M, split the run into M x ${jobs} shards, start ${jobs} of them at once on each machine, and merge them all (docs/ci.md)`,
    );
  }
  if (jobs > 1 && f.switch('verbose')) throw new UsageError("--verbose cannot be combined with --jobs: the adversity census is taken of one process's worlds; run it with --jobs 1");
  if (!f.has('adapter') && !f.has('command') && !f.has('consumer') && !f.has('singer') && !f.has('airbyte')) {
    throw new UsageError(
      'check needs a consumer to check, in one of three ways: --adapter MODULE (your consumer in TypeScript or JavaScript), --command CMD (a consumer process in any language) or --consumer NAME (a built-in, such as --consumer reference)',
    );
  }
  const popts = processOptions(f, true);
  prepareOutputs(f);
  const file = f.string('regressions') as string;
  prepareOutput('--regressions', file);
  const stored = readRegressions(file);
  const t = await target({ ...targetFlags(f), options: f.pairs('option') }, popts);
  const runs = f.number('runs') as number;
  const searches = f.number('searches', f.has('command') || f.has('singer') || f.has('airbyte') ? 1 : SEARCHES) as number;
  // The one place a fresh seed is drawn; it is printed first so any run can be repeated.
  const seed = f.number('seed', Math.floor(Math.random() * 0x7fffffff)) as number;
  const limitS = f.number('time-limit');
  const timeLimitMs = limitS === undefined ? undefined : limitS * 1000;
  const scenario = f.string('scenario');
  const named = scenario === undefined ? ALL_SCENARIOS : ALL_SCENARIOS.filter((s) => s.name === scenario);
  if (named.length === 0) throw new UsageError(`no scenario named '${scenario}'; see 'tidemark scenarios'`);
  // With a shard, the lists below are its share: what it runs and prints.
  const scenarios = named.filter((_, j) => owns(shard, j));
  const digest = t.digest ?? targetDigest(t.id);
  const events = worldSize(f.number('events'));
  replayOfPlace.command = (place) => ('scenario' in place ? replayOf(t, 'scenario', place.scenario) : replayOf(t, 'world', worldWhat(place)));
  const identity: RunIdentity = {
    tidemark: tidemarkBuild(),
    command: 'check',
    target: t.id,
    digest,
    seed,
    runs,
    shards: shard?.count ?? 1,
    options: { searches, scenario: scenario ?? null, 'time-limit': limitS ?? null, kills: popts.kills ?? null, option: optionsText(t.options), events: events ?? null },
  };
  const run = { id: runId(identity), identity };
  io.out(
    `tidemark check: consumer ${t.consumer.name} (${t.flag}), seed ${seed}, ${scenario === undefined ? `${runs} generated worlds${limitS === undefined ? '' : ` or ${limitS} s, whichever ends first`}` : `scenario ${scenario}`}${shard ? `, ${shardText(shard)}` : ''}`,
  );

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
    io.out(indent(renderFailure({ consumer: t.consumer.name, execution, replay, ...(provenance ? { provenance } : {}), ...(t.output ? { output: t.output(execution.history) } : {}) })));
    io.out('');
  };

  clearOutputs(f);
  // Results stream: each regression and scenario is printed as it finishes.
  const progress = new Progress(io, { scenarios: scenarios.length, runs: scenario !== undefined ? 0 : shard ? shareOf(runs, shard) : runs, heartbeatMs: (f.number('heartbeat') as number) * 1000, ...(timeLimitMs === undefined ? {} : { timeLimitMs }) });
  const replayed = replayedRegressions(stored.entries, t.id, t.options).filter((_, j) => owns(shard, j));
  progress.regressions(0, replayed.length);
  const regressionReplay = (e: RegressionEntry): string => replayOf(t, e.kind, e.kind === 'scenario' ? e.scenario : worldWhat(e));
  let failingRegressions = 0;
  let unjudgedRegressions = 0;
  let regressionsDone = 0;
  let regressionsSummarized = replayed.length === 0;
  const summarizeRegressions = (): void => {
    if (regressionsSummarized) return;
    regressionsSummarized = true;
    io.out(`regressions (${file}): ${replayed.length} replayed first, ${failingRegressions} still failing${unjudgedRegressions > 0 ? `, ${unjudgedRegressions} could not be judged` : ''}`);
  };
  // Entries of other targets are left to their targets' checks, but never passed over in
  // silence: an entry of this very consumer keyed another way would otherwise vanish.
  const others = stored.entries.filter((e) => !isBuiltIn(e) && !ofTarget(e, t.id, t.options));
  if (others.length > 0 && (shard === undefined || shard.index === 1)) {
    // Named by the flags that select each, as its replay command names it: what a user types to check it.
    const named = [...new Set(others.map((e) => connectorFlag(e.adapter, e.options) ?? targetFlag(e.adapter, e.options)))];
    io.out(`regressions (${file}): ${others.length} recorded failure(s) of other targets not replayed: ${named.slice(0, 3).join(', ')}${named.length > 3 ? `, and ${named.length - 3} more` : ''}`);
  }
  if (replayed.length > 0) {
    io.out(`regressions (${file}): replaying ${replayed.length} recorded failure(s) first`);
    doing('regression 1', regressionReplay(replayed[0]!));
  } else if (scenarios[0]) doing(`scenario ${scenarios[0].name}`, replayOf(t, 'scenario', scenarios[0].name));
  let scenariosDone = 0;
  const scenarioStatuses: string[] = [];
  const onRegression = (r: RegressionOutcome): void => {
    progress.regressions(++regressionsDone, replayed.length);
    if (r.status === 'unknown') unjudgedRegressions++;
    else if (r.status !== 'pass') failingRegressions++;
    const e = r.entry;
    const what = e.kind === 'scenario' ? `scenario ${e.scenario}` : `world seed ${e.seed} path ${e.path}`;
    const why = r.execution?.result.verdict.status === 'unknown' ? `: ${r.execution.result.verdict.reason}` : '';
    io.out(`  ${r.status.padEnd(7)} ${what}${r.status === 'pass' ? ' (fixed: prune it with tidemark regressions --prune)' : why}${r.note ? ` (${r.note})` : ''}`);
    const warning = versionWarning(e);
    if (warning) io.out(`          warning: ${warning}`);
    if (r.status !== 'pass' && r.execution) show(r.execution, regressionReplay(e));
    const next = replayed[regressionsDone];
    if (next) doing(`regression ${regressionsDone + 1}`, regressionReplay(next));
    else if (scenarios[0]) doing(`scenario ${scenarios[0].name}`, replayOf(t, 'scenario', scenarios[0].name));
  };
  const onScenario = (s: CheckedSuite['scenarios'][number]): void => {
    summarizeRegressions();
    progress.scenarios(++scenariosDone, scenarios.length);
    const next = scenarios[scenariosDone];
    if (next) doing(`scenario ${next.name}`, replayOf(t, 'scenario', next.name));
    else if (scenario === undefined) doing('generated worlds (0 done)');
    const v = s.status;
    scenarioStatuses.push(v);
    if (v === 'skipped') io.out(`  ${v.padEnd(8)} ${s.scenario.name}: ${s.skipped}`);
    else {
      io.out(`  ${v.padEnd(8)} ${s.scenario.name} (${s.scenario.rules.join(' ')})${s.untested === undefined ? '' : `: ${s.untested}`}`);
      if (v !== 'pass' && v !== 'untested' && s.execution) show(s.execution, replayOf(t, 'scenario', s.scenario.name));
    }
    if (scenariosDone === scenarios.length) {
      const counted = (x: string): number => scenarioStatuses.filter((y) => y === x).length;
      const ran = scenariosDone - counted('skipped');
      io.out(
        `scenarios: ${counted('pass')} of ${ran} passed${counted('untested') > 0 ? `, ${counted('untested')} untested (their adversity never fired)` : ''}${counted('skipped') > 0 ? `, ${counted('skipped')} skipped` : ''}`,
      );
    }
  };
  // One process runs the suite, printing each result as it comes; or its jobs run it as shards
  // (src/cli/jobs.ts), and their merged results are printed here in the same order, by the same code.
  let result: SuiteResult | null = null;
  let jobsRun: JobsOutcome | null = null;
  let suite: CheckedSuite;
  try {
    if (jobs > 1) {
      jobsRun = await runJobs({ jobs, argv: jobArgv(f, seed), regressions: file, replayed: replayed.length, progress });
      for (const line of jobsRun.stderr) io.err(line);
      for (const r of jobsRun.suite.regressions) onRegression(r);
      for (const s of jobsRun.suite.scenarios) onScenario(s);
      suite = jobsRun.suite;
    } else {
      result = await runSuite(t.consumer, {
      adapter: t.id,
      options: t.options,
      digest,
      ...(events === undefined ? {} : { events }),
      seed,
      runs,
      searches,
      ...(scenario === undefined ? {} : { scenario }),
      ...(timeLimitMs === undefined ? {} : { timeLimitMs }),
      // Run as a job of `check --jobs`, a shard stops at a failure another job found first.
      ...(shard ? { shard, ...(peers === undefined ? {} : { peers }) } : {}),
      ...(f.switch('verbose') ? { census: true } : {}),
      regressions: stored.entries,
      // A process target's regressions are replayed with real kills, as replay replays them.
      ...(t.process ? { realKills: popts.kills === 'real' ? async () => t.consumer : t.process.realKills } : {}),
      onRegression,
      onScenario: (s) => onScenario({ ...s, status: scenarioStatus(s) }),
      progress: (worlds, shrinking) => {
        progress.world(shrinking);
        doing(shrinking ? `shrinking a failure (${worlds} worlds run)` : `generated worlds (${worlds} done)`);
      },
    });
      suite = checkedSuite(result);
    }
  } catch (error) {
    // A job that ended without a result: its words, and the check's exit code for them.
    if (!(error instanceof JobsEnded)) throw error;
    for (const line of error.lines) io.err(line);
    if (error.code === EXIT.unknown) io.out('verdict: unknown');
    return error.code;
  } finally {
    progress.stop();
  }
  // A timer the consumer set during the run fires before the verdict is printed, so that an
  // exception it throws ends this run as unknown instead of being lost to the exit: the
  // world's turns are messages, and the loop can run many of them before it reaches its
  // timers (src/world/turn.ts). Timers due by now run first, in the order they were set.
  await new Promise((resolve) => setTimeout(resolve, 0));
  summarizeRegressions();
  doing('writing outputs');

  const p = suite.property;
  if (p) {
    const within = p.interrupted ? ` (the time limit of ${limitS} s ended the search; --runs asked ${runs})` : '';
    const share = shard ? `; ${p.skipped ?? 0} of them left to the other shards` : '';
    io.out(`generated worlds: ${p.status} after ${p.runs} worlds${within} (${p.calls} world calls${share}), seed ${p.seed}`);
    if (p.counterexample) show(p.counterexample, replayOf(t, 'world', worldWhat(p)), `minimal world, found after ${p.runs} worlds; the smallest of ${p.searches} shrunk failures`);
  }
  if (result?.census) for (const line of renderCensus(result.census)) io.out(line);
  for (const c of suite.checks) if (c.status === 'untested') io.out(`check ${c.anomaly}: untested, ${c.reason}`);
  const sessionWorlds = jobsRun ? jobsRun.sessionWorlds : (t.process?.sessionWorlds() ?? 0);
  const { status, replays } = await finalReplays(suite, t, io, sessionWorlds);

  // Every output is attempted, and the verdict printed, whichever of them fails.
  const outputs = new Outputs(io.err);
  // Merged into the file as it is now, under its lock: other checks may have written since.
  let found: readonly RegressionEntry[] = [];
  // A process target's entry says how its hash was recorded, and, from a check with session
  // crashes, what real kills gave where that differs: a replay kills for real, and is held to it.
  const realRuns = new Map(replays.map((r) => [r.sampled.hash, r.real]));
  const killed = (e: RegressionEntry): { kills?: 'sampled' | 'real'; realHash?: string } => {
    if (!t.process) return {};
    if (sessionWorlds === 0) return { kills: 'real' };
    const real = e.hash === undefined ? undefined : realRuns.get(e.hash)?.hash;
    return { kills: 'sampled', ...(real === undefined || real === e.hash ? {} : { realHash: real }) };
  };
  const entries = newRegressions(suite).map((e) => ({ ...e, ...killed(e), run: run.id, ...(digest === null ? {} : { digest }), ...(Object.keys(t.options).length === 0 ? {} : { options: t.options }) }));
  if (outputs.attempt(`the regression file ${file}`, () => (found = recordRegressions(file, entries))) && found.length > 0) {
    // A replay by ID never runs a command or a module outside this directory (see
    // recordedFailure): for those the replay commands printed above are the way back.
    const refused = found.map((e) => notReplayedById(e.adapter)).find((r) => r !== null) ?? null;
    io.out(`recorded ${found.length} new failure(s) in ${file}; they are replayed first from now on, and ${refused === null ? 'each by its ID with npx tidemark replay ID' : `each by its replay command printed above (a replay by ID never runs ${refused}: the file is data)`}:`);
    for (const e of found) io.out(`  ${e.id ?? shortId(e)}  ${e.kind === 'scenario' ? `scenario ${e.scenario}` : `world seed ${e.seed} path ${e.path}`} (${e.anomaly})`);
  }
  const json = f.string('json');
  if (json !== undefined) {
    const shardJson = shard ? { shard: { ...shard, tidemark: tidemarkBuild(), ...(limitS === undefined ? {} : { timeLimit: limitS }), ...(sessionWorlds > 0 ? { sessionWorlds } : {}) } } : {};
    const written = jobsRun ? jobsRun.json : checkJson(result as SuiteResult, { run, searches, replay: (kind, what) => replayOf(t, kind, what), realRuns, ...shardJson });
    outputs.write('--json', json, () => `${JSON.stringify(written, null, 2)}\n`);
  }
  const junit = f.string('junit');
  if (junit !== undefined) outputs.write('--junit', junit, () => renderJUnit(suite, (kind, what) => replayOf(t, kind, what)));
  const timeline = f.string('timeline');
  if (timeline !== undefined) {
    const failing = firstFailure(suite, t);
    if (!failing) io.out(`no failure, so no timeline picture written to ${timeline}`);
    else if (outputs.write('--timeline', timeline, () => renderPicture(failing.execution, { consumer: t.consumer.name, replay: failing.replay }))) io.out(`timeline picture of the failure: ${timeline}`);
  }
  // Jobs ran the target, so what it has to say about how it ran is theirs.
  for (const note of [t.note?.(), ...(jobsRun?.notes ?? [])]) if (note) io.out(note);
  if (suite.reason !== undefined) io.out(`not a pass: ${suite.reason}`);
  const within = p?.interrupted ? ` (${p.runs} of ${runs} generated worlds ran within --time-limit ${limitS} s)` : '';
  io.out(`verdict: ${status}${within}${shard ? ` (${shardText(shard)} alone: 'tidemark merge' of all ${shard.count} shards' --json gives the run's verdict)` : ''}`);
  return withOutputs(EXIT[status], outputs, io);
}

/**
 * After a check with session crashes, every failure it shows runs once more with real kills
 * (src/run/final-replay.ts). Returns the verdict: a failure that only session crashes produced
 * is no verdict on the consumer (unknown).
 */
async function finalReplays(result: CheckedSuite, t: Target, io: Io, sessionWorlds: number): Promise<{ readonly status: SuiteResult['status']; readonly replays: readonly FinalReplay[] }> {
  const status = result.status;
  if (!t.process || sessionWorlds === 0) return { status, replays: [] };
  const failures = [
    ...result.regressions.flatMap((r) => (r.status !== 'pass' && r.execution ? [{ what: r.entry.kind === 'scenario' ? `regression scenario ${r.entry.scenario}` : `regression world seed ${r.entry.seed} path ${r.entry.path}`, execution: r.execution }] : [])),
    ...result.scenarios.flatMap((s) => (s.execution && !['pass', 'untested'].includes(s.status) ? [{ what: `scenario ${s.scenario.name}`, execution: s.execution }] : [])),
    ...(result.property?.counterexample ? [{ what: 'the minimal generated world', execution: result.property.counterexample }] : []),
  ];
  if (failures.length === 0) return { status, replays: [] };
  doing('replaying the failures with real kills');
  const replays = await replayUnderRealKills(failures, await t.process.realKills());
  const { lines, unconfirmed } = describeFinalReplays(replays);
  for (const line of lines) io.out(line);
  if (result.status === 'fail' && unconfirmed === replays.length) {
    io.out('no failure happens under real kills: the failures came from session crashes, so the consumer cannot be judged this way');
    return { status: 'unknown', replays };
  }
  return { status, replays };
}

function firstFailure(result: CheckedSuite, t: Target): { execution: Execution; replay: string } | null {
  for (const r of result.regressions) {
    if (r.status !== 'pass' && r.execution) return { execution: r.execution, replay: replayOf(t, r.entry.kind, r.entry.kind === 'scenario' ? r.entry.scenario : worldWhat(r.entry)) };
  }
  for (const s of result.scenarios) if (s.execution && s.execution.result.verdict.status !== 'pass') return { execution: s.execution, replay: replayOf(t, 'scenario', s.scenario.name) };
  const p = result.property;
  return p?.counterexample ? { execution: p.counterexample, replay: replayOf(t, 'world', worldWhat(p)) } : null;
}

/**
 * The failure a `replay ID` or `replay --last` names, from the regression file: its target
 * (with options) and world, as flags of the replay it stands for. Null without either.
 */
function recordedFailure(f: Flags): { readonly entry: RegressionEntry; readonly spec: TargetSpec } | null {
  const ids = f.positionals;
  if (ids.length === 0 && !f.switch('last')) return null;
  if (ids.length > 1) throw new UsageError(`replay takes one ID, got ${ids.join(' ')}`);
  const named = ['adapter', 'command', 'consumer', 'option', 'seed', 'path', 'scenario'].filter((x) => f.has(x));
  if (named.length > 0) throw new UsageError(`an ID (or --last) names the target and the world itself: not with ${named.map((x) => `--${x}`).join(', ')}`);
  const file = f.string('regressions') as string;
  const entries = readRegressions(file).entries;
  let entry: RegressionEntry | undefined;
  if (ids.length === 0) {
    entry = entries.at(-1);
    if (entry === undefined) throw new UsageError(`--last: ${file} holds no failure`);
  } else {
    const id = ids[0]!;
    if (f.switch('last')) throw new UsageError('give an ID or --last, not both');
    if (!/^[0-9a-fA-F]{4,}$/.test(id)) throw new UsageError(`'${id}' is not an ID: the short ids a check prints are hex digits, like 3f9a2c1b (4 or more of them)`);
    const found = entriesById(entries, id);
    if (found.length === 0) throw new UsageError(`no failure with ID ${id} in ${file} (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}; 'tidemark regressions' lists them)`);
    if (found.length > 1) throw new UsageError(`ID ${id} names ${found.length} failures in ${file}: give more of its digits (${found.map((e) => e.id ?? shortId(e)).join(', ')})`);
    entry = found[0]!;
  }
  const a = entry.adapter;
  // The file is data (it may come from a cache or another branch): an ID never makes it run a
  // shell command, nor a module outside this directory. Those entries print the replay
  // command they stand for, to be run by whoever reads it.
  const full = replayCommand(connectorFlag(a, entry.options) ?? targetFlag(a, entry.options), entry.kind, entry.kind === 'scenario' ? entry.scenario : worldWhat(entry));
  const refused = notReplayedById(a);
  if (refused !== null) {
    throw new UsageError(`the failure ${entry.id ?? shortId(entry)} names ${refused}, which a replay by ID never runs: what a regression file says is data. Its replay command, to run yourself if you trust it: ${full}`);
  }
  const connector = connectorOf(a);
  const target = connector ? { [connector.kind]: connector.command, api: connector.api } : a.startsWith('builtin:') ? { consumer: a.slice('builtin:'.length) } : a.startsWith('command:') ? { command: a.slice('command:'.length) } : { adapter: a };
  return { entry, spec: { ...target, options: entry.options ?? {} } };
}

/**
 * What a replay by ID refuses to run for a regression entry's target (a command, or a module
 * outside this directory), or null when it replays it.
 */
function notReplayedById(adapter: string): string | null {
  if (adapter.startsWith('builtin:')) return null;
  if (adapter.startsWith('command:') || connectorOf(adapter) !== null) return 'a command';
  return relative(process.cwd(), resolve(adapter)).startsWith('..') ? 'a module outside this directory' : null;
}

async function replay(f: Flags, io: Io): Promise<number> {
  conflicts(f, 'scenario', ['seed', 'path', 'events']);
  const recordedEntry = recordedFailure(f);
  const popts = recordedEntry?.spec.command !== undefined ? { ...processOptions(f), kills: 'real' as const } : processOptions(f);
  prepareOutputs(f);
  if (recordedEntry) io.out(`replaying ${recordedEntry.entry.id ?? shortId(recordedEntry.entry)}: ${replayCommand(connectorFlag(recordedEntry.entry.adapter, recordedEntry.entry.options) ?? targetFlag(recordedEntry.entry.adapter, recordedEntry.entry.options), recordedEntry.entry.kind, recordedEntry.entry.kind === 'scenario' ? recordedEntry.entry.scenario : worldWhat(recordedEntry.entry))}`);
  const scenarioName = recordedEntry ? (recordedEntry.entry.kind === 'scenario' ? recordedEntry.entry.scenario : undefined) : f.string('scenario');
  let world: { seed: number; path: string; events?: number | undefined } | null = null;
  if (recordedEntry?.entry.kind === 'world') {
    world = { seed: recordedEntry.entry.seed, path: recordedEntry.entry.path, events: recordedEntry.entry.events };
  } else if (scenarioName === undefined) {
    const path = f.string('path');
    if (!f.has('seed') || path === undefined) throw new UsageError('replay needs --seed and --path, or --scenario, or the ID of a recorded failure');
    if (!/^\d+(:\d+)*$/.test(path)) throw new UsageError(`--path must look like 12:0:3 (numbers separated by colons), got '${path}'`);
    // fast-check walks to the first index one generated world at a time: a huge one would take hours.
    const first = Number(path.split(':')[0]);
    if (!(first < MAX_RUNS)) throw new UsageError(`--path ${path} starts beyond any run: its first number must be below ${MAX_RUNS}, the most worlds a check generates`);
    world = { seed: f.number('seed') as number, path, events: worldSize(f.number('events')) };
  } else if (!findScenario(scenarioName)) throw new UsageError(`no scenario named '${scenarioName}'; see 'tidemark scenarios'`);
  const t = await target(recordedEntry?.spec ?? { ...targetFlags(f), options: f.pairs('option') }, popts);
  // A failure the regression file recorded for this target and world must replay as recorded
  // while the target's code is unchanged (src/run/replay.ts).
  const file = f.string('regressions') as string;
  const entry = readRegressions(file).entries.find((e) =>
    ofTarget(e, t.id, t.options) &&
    e.hash !== undefined &&
    (world === null ? e.kind === 'scenario' && e.scenario === scenarioName : e.kind === 'world' && e.seed === world.seed && samePath(e.path, world.path) && worldSize(e.events) === world.events),
  );
  // A process target's replay kills for real: it is held to the history real kills gave.
  const hash = entry === undefined ? undefined : comparableHash(entry, t.process !== undefined);
  const recorded = hash === undefined ? undefined : { hash, digest: entry?.digest, current: t.digest ?? targetDigest(t.id) };
  clearOutputs(f);
  let execution: Execution;
  let replayed: string;
  // Each replay runs the world twice and compares (src/run/replay.ts): a consumer that is not
  // deterministic gets unknown, never a PASS.
  if (world === null) {
    const scenario = findScenario(scenarioName as string)!;
    // As check skips it: a world its API never makes (a quirk it never shows) judges nothing of it, pass or fail.
    const skipped = whyNot(t.consumer, scenario);
    if (skipped !== null) {
      io.out(`SKIPPED  ${t.consumer.name}: scenario ${scenario.name} does not apply: ${skipped}`);
      return EXIT.unknown;
    }
    replayed = replayOf(t, 'scenario', scenario.name);
    doing(`scenario ${scenario.name}`, replayed);
    execution = (await replayWorld(t.consumer, { plan: scenarioPlan(t.consumer, scenario) }, { recorded }))!.execution;
  } else {
    replayed = replayOf(t, 'world', worldWhat(world));
    doing(`the world at seed ${world.seed}, path ${world.path}`, replayed);
    const nowhere = (why: string): UsageError =>
      new UsageError(`--path ${world!.path} does not lead to a world at seed ${world!.seed}${why}; give the seed and path exactly as a failing check printed them`);
    let found;
    try {
      found = await replayWorld(t.consumer, { seed: world.seed, path: world.path, events: world.events }, { recorded });
    } catch (error) {
      // fast-check refuses a path that leaves its shrink tree before the last step.
      if (error instanceof Error && /Unable to replay/.test(error.message)) throw nowhere('');
      throw error;
    }
    // A path past the end of its last shrink step leads to no world at all: nothing ran, which is no pass.
    if (found === null) throw nowhere(' (its last step is beyond the worlds there)');
    execution = found.execution;
  }
  const outputs = new Outputs(io.err);
  const json = f.string('json');
  const { status, ...verdict } = execution.result.verdict;
  // A scenario that ran clean but whose adversity never fired tested nothing: no PASS, here or in the JSON.
  const missed = world === null && status === 'pass' ? missedAdversity(execution.plan, execution.history) : [];
  // A world that exercised only liveness judged nothing of what the consumer handles: no PASS either.
  const idle = missed.length === 0 ? onlyLivenessExercised(execution.result) : null;
  const what = world === null ? `scenario ${scenarioName}` : `the world at seed ${world.seed}, path ${world.path}`;
  if (json !== undefined) {
    const base = { consumer: t.consumer.name, adapter: t.id, replay: replayed, ...(world ?? { scenario: scenarioName }) };
    const said =
      missed.length > 0 ? { verdict: 'unknown', reason: `the adversity the scenario exists for never fired: ${missed.join('; ')}` }
      : idle !== null ? { verdict: 'unknown', reason: idle }
      : { verdict: status, ...verdict };
    outputs.write('--json', json, () => `${JSON.stringify({ ...base, ...said, hash: execution.hash, plan: execution.plan, history: execution.history }, null, 2)}\n`);
  }
  if (missed.length > 0) io.out(`UNTESTED  ${t.consumer.name}: scenario ${scenarioName} broke no rule, but the adversity it exists for never fired: ${missed.join('; ')}`);
  else if (idle !== null) io.out(`UNTESTED  ${t.consumer.name}: ${what} broke no rule, but ${idle}`);
  else if (world !== null && status === 'pass') io.out(`PASS  ${t.consumer.name}: ${what} passes`);
  else io.out(renderFailure({ consumer: t.consumer.name, execution, replay: replayed, ...(t.output ? { output: t.output(execution.history) } : {}) }));
  const timeline = f.string('timeline');
  if (timeline !== undefined) outputs.write('--timeline', timeline, () => renderPicture(execution, { consumer: t.consumer.name, replay: replayed }));
  return withOutputs(missed.length > 0 || idle !== null ? EXIT.unknown : EXIT[execution.result.verdict.status], outputs, io);
}

async function regressions(f: Flags, io: Io): Promise<number> {
  const file = f.string('file') as string;
  const stored = readRegressions(file);
  if (!f.switch('prune')) {
    io.out(`${file}: ${stored.entries.length} entries`);
    for (const e of stored.entries) io.out(`  ${e.adapter}: ${e.kind === 'scenario' ? `scenario ${e.scenario}` : `world seed ${e.seed} path ${e.path}`} (${e.anomaly})`);
    return EXIT.pass;
  }
  prepareOutput('--file', file);
  // The file is data, perhaps from a cache or another branch: what it names is never run.
  // Only the target given on the command line is, and only its entries are replayed.
  if (!f.has('adapter') && !f.has('command') && !f.has('consumer') && !f.has('singer') && !f.has('airbyte')) {
    const targets = [...new Set(stored.entries.filter((e) => !isBuiltIn(e)).map((e) => e.adapter))];
    throw new UsageError(
      `--prune replays entries, which runs their consumer: name it as check takes it (--adapter MODULE, --command CMD or --consumer NAME), and only its entries are replayed${targets.length > 0 ? `; ${file} holds entries of ${targets.map((x) => JSON.stringify(x)).join(', ')}` : ''}`,
    );
  }
  const t = await target({ ...targetFlags(f), options: f.pairs('option') }, processOptions(f));
  const digest = t.digest ?? targetDigest(t.id);
  const passing: RegressionEntry[] = [];
  let others = 0;
  for (const entry of stored.entries) {
    const what = entry.kind === 'scenario' ? `scenario ${entry.scenario}` : `world seed ${entry.seed} path ${entry.path}`;
    if (isBuiltIn(entry) && !ofTarget(entry, t.id, t.options)) {
      // Removing one runs nothing: a built-in consumer's failures are tidemark's demonstrations.
      io.out(`  prune ${entry.adapter}: ${what} (a built-in consumer, not yours)`);
      passing.push(entry);
      continue;
    }
    if (!ofTarget(entry, t.id, t.options)) {
      others++;
      continue;
    }
    doing(`replaying the regression ${what}`);
    // A process target here kills for real (only check samples), as replay does.
    const result = await runSuite(t.consumer, { adapter: t.id, options: t.options, digest, seed: 0, runs: 1, scenario: ALL_SCENARIOS[0]!.name, regressions: [entry], ...(t.process ? { realKills: async () => t.consumer } : {}) });
    const r = result.regressions[0];
    const still = r?.status !== 'pass';
    const why = r?.execution?.result.verdict.status === 'unknown' ? `: ${r.execution.result.verdict.reason}` : r?.note !== undefined ? `: ${r.note}` : '';
    io.out(`  ${still ? 'keep ' : 'prune'} ${entry.adapter}: ${what}${still ? why : ''}`);
    if (!still) passing.push(entry);
  }
  if (others > 0) io.out(`  ${others} entr${others === 1 ? 'y' : 'ies'} of other targets left as they are`);
  // Removed from the file as it is now, under its lock: entries recorded while these replayed stay.
  const outputs = new Outputs(io.err);
  let pruned = { removed: 0, kept: 0 };
  if (outputs.attempt(`the regression file ${file}`, () => (pruned = pruneRegressions(file, passing)))) {
    io.out(`pruned ${pruned.removed} passing entr${pruned.removed === 1 ? 'y' : 'ies'}; ${pruned.kept} kept`);
  }
  return withOutputs(EXIT.pass, outputs, io);
}

async function mutants(f: Flags, io: Io): Promise<number> {
  const shard = f.shard('shard');
  if (shard) shardNeeds(f, 'mutants');
  prepareOutputs(f);
  const runs = f.number('runs') as number;
  const seed = f.number('seed', Math.floor(Math.random() * 0x7fffffff)) as number;
  const names = f.string('only')?.split(',').map((n) => n.trim()) ?? null;
  const unknown = names?.filter((n) => !findMutant(n)) ?? [];
  if (unknown.length > 0) throw new UsageError(`no mutant named ${unknown.map((n) => `'${n}'`).join(', ')}; see 'tidemark consumers'`);
  const chosen = names === null ? MUTANTS : MUTANTS.filter((m) => names.includes(m.name));
  const share = shard ? `; ${shardText(shard)}: ${chosen.filter((_, j) => owns(shard, j)).length} of them, and its share of the reference's worlds` : '';
  clearOutputs(f);
  io.out(`tidemark mutants: ${chosen.length} mutants, at most ${runs} worlds each, seed ${seed}${share}`);
  io.out(KILL_HEADER);
  const jobs = f.number('jobs') as number;
  const matrix = await killMatrix(chosen, referenceConsumer({ name: 'reference' }), { runs, seed, jobs, ...(shard ? { shard } : {}) }, (row) => io.out(formatKillRow(row)));
  io.out(formatReferenceRow(matrix.reference));
  const outputs = new Outputs(io.err);
  const json = f.string('json');
  if (json !== undefined) {
    // The counterexample's history is left out: the row's seed and path replay it.
    const { counterexample: _, replayed: __, ...reference } = matrix.reference;
    const identity: RunIdentity = { tidemark: tidemarkBuild(), command: 'mutants', target: null, digest: null, seed, runs, shards: shard?.count ?? 1, options: { only: names?.join(',') ?? null } };
    const written: MutantsJson = { run: { id: runId(identity), identity }, seed, runs, mutants: chosen.map((m) => m.name), rows: matrix.rows, reference, ...(shard ? { shard: { command: 'mutants', ...shard, tidemark: tidemarkBuild() } } : {}) };
    outputs.write('--json', json, () => `${JSON.stringify(written, null, 2)}\n`);
  }
  const verdict = matrixVerdict(matrix.rows, matrix.reference, shard ? ` (${shardText(shard)} alone: 'tidemark merge' of all ${shard.count} shards' --json gives the run's verdict)` : '');
  for (const line of verdict.lines) io.out(line);
  return withOutputs(EXIT[verdict.status], outputs, io);
}

async function report(f: Flags, io: Io): Promise<number> {
  const seed = f.number('seed') as number;
  const runs = f.number('runs') as number;
  const seeds = f.number('seeds') as number;
  const out = f.string('out') as string;
  const jobs = f.number('jobs') as number;
  const shard = f.shard('shard');
  if (shard) return reportShard(f, io, shard, { seed, runs, seeds, jobs });
  if (f.has('json')) throw new UsageError("report --json is for a shard's searches (with --shard I/N); the report itself goes to --out");
  // Checked before the computation, which takes minutes: the output can be written, and
  // it is not someone's file that merely shares the name.
  prepareOutput('--out', out);
  guardReport(out, f.switch('force'));
  // Reusing the searches of the existing report only re-renders it; the staleness test's
  // sample of re-run searches still says whether those searches are current.
  const previous = f.switch('reuse-searches') && existsSync(out) ? readFileSync(out, 'utf8') : undefined;
  const rows = previous === undefined ? undefined : rowsOf(previous);
  for (const name of f.string('redo')?.split(',') ?? []) {
    if (!findMutant(name.trim())) throw new UsageError(`no mutant named '${name.trim()}'`);
    rows?.delete(name.trim());
  }
  const text = await buildReport({ seed, runs, seeds, jobs, testDir: 'test', progress: (line) => io.err(`report: ${line}`), ...(rows ? { rows, previous } : {}) });
  const outputs = new Outputs(io.err);
  if (outputs.write('--out', out, () => text)) {
    io.out(`wrote ${out} (seed ${seed}, ${runs} worlds per search, ${seeds} seeds per mutant)`);
    return EXIT.pass;
  }
  // Minutes of computation are not thrown away with the failed write.
  const rescue = join(tmpdir(), `tidemark-report-${process.pid}.md`);
  try {
    writeFileSync(rescue, text);
    io.err(`tidemark: the report was saved to ${rescue} instead`);
  } catch {
    io.out(text);
  }
  return EXIT.error;
}

/**
 * One shard of a report: its share of the report's searches (see reportTasks), written as
 * JSON. The report itself is written by `tidemark merge` from all the shards' files.
 */
async function reportShard(f: Flags, io: Io, shard: Shard, o: { readonly seed: number; readonly runs: number; readonly seeds: number; readonly jobs: number }): Promise<number> {
  conflicts(f, 'shard', ['out', 'force', 'reuse-searches', 'redo']);
  shardNeeds(f, 'report');
  prepareOutputs(f);
  const json = f.string('json') as string;
  const tasks = reportTasks(o).filter((_, j) => owns(shard, j));
  clearOutputs(f);
  io.out(`tidemark report: ${shardText(shard)}, ${tasks.length} of ${MUTANTS.length * o.seeds} searches (seed ${o.seed}, ${o.runs} worlds per search, ${o.seeds} seeds per mutant)`);
  const left = new Map<string, number>();
  for (const t of tasks) left.set(t.mutant, (left.get(t.mutant) ?? 0) + 1);
  const rows = await runSearches(tasks, o.jobs, (row) => {
    left.set(row.mutant, (left.get(row.mutant) ?? 0) - 1);
    if (left.get(row.mutant) === 0) io.err(`report: mutant ${row.mutant}`);
  });
  const identity: RunIdentity = { tidemark: tidemarkBuild(), command: 'report', target: null, digest: null, seed: o.seed, runs: o.runs, shards: shard.count, options: { seeds: o.seeds } };
  const written: ReportShardJson = { run: { id: runId(identity), identity }, seed: o.seed, runs: o.runs, seeds: o.seeds, rows, shard: { command: 'report', ...shard, tidemark: tidemarkBuild() } };
  const outputs = new Outputs(io.err);
  if (!outputs.write('--json', json, () => `${JSON.stringify(written, null, 2)}\n`)) return EXIT.error;
  io.out(`wrote ${json}: ${rows.length} searches of ${shardText(shard)}; 'tidemark merge' of all ${shard.count} shards' files writes the report`);
  return EXIT.pass;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}

/**
 * Commands that run under the supervisor when started as `tidemark`: those that run a
 * consumer, and merge, which reads files from CI caches and artifacts: any of them may hang,
 * and the watchdog ends that as unknown rather than waiting for CI's own timeout.
 */
const SUPERVISED_COMMANDS = ['check', 'replay', 'regressions', 'merge'];

/** stdout and stderr, with a status line on stderr when a person watches a terminal. */
function processIo(): Io {
  // A terminal that cannot erase a line (TERM=dumb: an editor's shell, some CI logs) gets plain lines only.
  const live = process.stderr.isTTY === true && !process.env.CI && process.env.TERM !== 'dumb';
  let status = false;
  const clear = (): void => {
    if (status) process.stderr.write('\r\x1b[K');
    status = false;
  };
  return {
    out: (l) => {
      clear();
      process.stdout.write(`${l}\n`);
    },
    err: (l) => {
      clear();
      process.stderr.write(`${l}\n`);
    },
    ...(live
      ? {
          status: (l: string | null) => {
            if (l === null) return clear();
            process.stderr.write(`\r\x1b[K${l.slice(0, (process.stderr.columns ?? 80) - 1)}`);
            status = true;
          },
        }
      : {}),
  };
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
  const argv = process.argv.slice(2);
  // A closed pipe (| head) ends the output, not the run: the exit code still tells the verdict.
  process.stdout.on('error', () => {});
  if (process.env[SUPERVISED] === '1' && process.send !== undefined) {
    runSupervised((io, peers) => main(argv, io, peers), processIo());
  } else if (SUPERVISED_COMMANDS.includes(argv[0] ?? '') && !argv.includes('--help') && !argv.includes('-h')) {
    supervise(fileURLToPath(import.meta.url), argv);
  } else {
    const end = (code: number): void => {
      process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
    };
    main(argv, processIo()).then(end, (error: unknown) => {
      process.stderr.write(`tidemark: harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      end(EXIT.error);
    });
  }
}
