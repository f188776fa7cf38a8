#!/usr/bin/env node
import { realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ALL_SCENARIOS, findScenario } from '../scenarios/named.js';
import { PlanError } from '../scenarios/validate.js';
import { checkProperty, checkScenarios, type PropertyOutcome, type SuiteStatus } from './conformance.js';
import type { Consumer } from './consumer.js';
import { findMutant, MUTANTS } from './consumers/mutants.js';
import { BUILT_IN, builtInConsumer } from './consumers/registry.js';
import { execute } from './execute.js';
import { buildReport, REPORT_SEED } from './report/report-md.js';
import { killMatrix } from './kill-matrix.js';
import { formatKillRow, formatReferenceRow, KILL_HEADER } from './report/kill-table.js';
import { referenceConsumer } from './consumers/reference.js';
import { renderFailure } from './report/failure.js';

/** Exit codes: the verdict first, then the harness's own trouble. */
export const EXIT = { pass: 0, fail: 1, unknown: 2, usage: 3 } as const;

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
  scenarios   list the named scenarios and the rules each covers
  consumers   list the built-in consumers (the reference and the mutants)

Exit codes: 0 pass, 1 fail, 2 unknown (could not be judged), 3 usage or harness error.
Run 'tidemark <command> --help' for a command's options.`,
  check: `Usage: tidemark check [--consumer NAME] [--runs N] [--seed N]

  --consumer NAME  a built-in consumer (default: reference); see 'tidemark consumers'
  --runs N         generated worlds to try (default: 1000)
  --seed N         fast-check seed (default: a fresh one, printed)`,
  replay: `Usage: tidemark replay --consumer NAME (--seed N --path P | --scenario NAME)

Replays one world exactly and prints its verdict and timeline. The seed and path are the
ones a failing 'tidemark check' printed.`,
  mutants: `Usage: tidemark mutants [--runs N] [--seed N] [--only NAME,NAME] [--json FILE]

Runs each mutant of the catalog for at most N generated worlds (default: 1000) and prints
the kill matrix: the rule it breaks, the anomaly it must produce and the one found, whether
it was killed, the worlds it took, and the size of the shrunk counterexample. The
reference consumer runs under the same seed and budget and must pass. Exit 0 when every
mutant is killed and the reference passes, 1 otherwise.

  --json FILE   also write the matrix as JSON`,
  report: `Usage: tidemark report [--seed N] [--runs N] [--seeds K] [--out FILE]

Runs the named scenarios against every reference variant, the kill matrix, and each mutant
under K seeds (default 20) for the reliability table, and writes the report as Markdown
(default: REPORT.md). The seed defaults to ${REPORT_SEED}, the one the committed report uses.`,
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
    if (error instanceof UsageError || error instanceof PlanError) {
      io.err(`tidemark: ${error.message}`);
      io.err(`Run 'tidemark ${command in HELP ? `${command} ` : ''}--help' for usage.`);
      return EXIT.usage;
    }
    io.err(`tidemark: harness error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return EXIT.usage;
  }
}

function options(args: readonly string[], spec: Record<string, { type: 'string' }>): Record<string, string | undefined> {
  try {
    return parseArgs({ args: [...args], options: spec, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function consumerNamed(name: string | undefined): Consumer {
  const consumer = builtInConsumer(name ?? 'reference');
  if (!consumer) throw new UsageError(`no consumer named '${name}'; known: ${[...BUILT_IN.keys()].join(', ')}`);
  return consumer;
}

function integer(value: string | undefined, flag: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be an integer of at least ${min}, got '${value}'`);
  return n;
}

function replayCommand(consumer: string, outcome: PropertyOutcome): string {
  return `npx tidemark replay --consumer ${consumer} --seed ${outcome.seed} --path "${outcome.path}"`;
}

async function check(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { consumer: { type: 'string' }, runs: { type: 'string' }, seed: { type: 'string' } });
  const name = o.consumer ?? 'reference';
  const consumer = consumerNamed(name);
  const runs = integer(o.runs, '--runs', 1000, 1);
  // The one place a fresh seed is drawn; it is printed first so any run can be repeated.
  const seed = integer(o.seed, '--seed', Math.floor(Math.random() * 0x7fffffff), 0);
  io.out(`tidemark check: consumer ${name}, seed ${seed}, ${runs} generated worlds`);

  let status: SuiteStatus = 'pass';
  const scenarios = await checkScenarios(consumer);
  const passed = scenarios.filter((s) => s.execution.result.verdict.status === 'pass').length;
  io.out(`scenarios: ${passed} of ${scenarios.length} passed`);
  let shown = false;
  for (const { scenario, execution } of scenarios) {
    const v = execution.result.verdict.status;
    io.out(`  ${v.padEnd(7)} ${scenario.name} (${scenario.rules.join(' ')})`);
    if (v !== 'pass') {
      status = worse(status, v);
      // One full report is enough to act on; the others are a replay command away.
      if (shown) continue;
      shown = true;
      io.out('');
      io.out(indent(renderFailure({ consumer: name, execution, replay: `npx tidemark replay --consumer ${name} --scenario ${scenario.name}` })));
      io.out('');
    }
  }

  const property = await checkProperty(consumer, { runs, seed });
  status = worse(status, property.status);
  io.out(`generated worlds: ${property.status} after ${property.runs} worlds (${property.calls} world calls), seed ${property.seed}`);
  if (property.counterexample) {
    io.out('');
    io.out(
      indent(
        renderFailure({
          consumer: name,
          execution: property.counterexample,
          replay: replayCommand(name, property),
          provenance: `minimal world, found after ${property.runs} worlds and ${property.shrinks} shrinks`,
        }),
      ),
    );
    io.out('');
  }
  io.out(`verdict: ${status}`);
  return EXIT[status];
}

async function replay(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { consumer: { type: 'string' }, seed: { type: 'string' }, path: { type: 'string' }, scenario: { type: 'string' } });
  const name = o.consumer ?? 'reference';
  const consumer = consumerNamed(name);
  if (o.scenario !== undefined) {
    const scenario = findScenario(o.scenario);
    if (!scenario) throw new UsageError(`no scenario named '${o.scenario}'; see 'tidemark scenarios'`);
    const execution = await execute(scenario.plan, consumer);
    io.out(renderFailure({ consumer: name, execution, replay: `npx tidemark replay --consumer ${name} --scenario ${scenario.name}` }));
    return EXIT[execution.result.verdict.status];
  }
  if (o.seed === undefined || o.path === undefined) throw new UsageError('replay needs --seed and --path, or --scenario');
  if (!/^\d+(:\d+)*$/.test(o.path)) throw new UsageError(`--path must look like 12:0:3, got '${o.path}'`);
  const seed = integer(o.seed, '--seed', 0, 0);
  const outcome = await checkProperty(consumer, { seed, path: o.path });
  if (!outcome.counterexample) {
    io.out(`PASS  ${name}: the world at seed ${seed}, path ${o.path} passes`);
    return EXIT.pass;
  }
  io.out(renderFailure({ consumer: name, execution: outcome.counterexample, replay: replayCommand(name, outcome) }));
  return EXIT[outcome.status];
}

async function mutants(args: readonly string[], io: Io): Promise<number> {
  const o = options(args, { runs: { type: 'string' }, seed: { type: 'string' }, only: { type: 'string' }, json: { type: 'string' } });
  const runs = integer(o.runs, '--runs', 1000, 1);
  const seed = integer(o.seed, '--seed', Math.floor(Math.random() * 0x7fffffff), 0);
  const names = o.only?.split(',').map((n) => n.trim()) ?? null;
  const unknown = names?.filter((n) => !findMutant(n)) ?? [];
  if (unknown.length > 0) throw new UsageError(`no mutant named ${unknown.map((n) => `'${n}'`).join(', ')}; see 'tidemark consumers'`);
  const chosen = names === null ? MUTANTS : MUTANTS.filter((m) => names.includes(m.name));
  io.out(`tidemark mutants: ${chosen.length} mutants, at most ${runs} worlds each, seed ${seed}`);
  io.out(KILL_HEADER);
  const matrix = await killMatrix(chosen, referenceConsumer({ name: 'reference' }), runs, seed, (row) => io.out(formatKillRow(row)));
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
  const o = options(args, { seed: { type: 'string' }, runs: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' } });
  const seed = integer(o.seed, '--seed', REPORT_SEED, 0);
  const runs = integer(o.runs, '--runs', 1000, 1);
  const seeds = integer(o.seeds, '--seeds', 20, 1);
  const out = o.out ?? 'REPORT.md';
  const text = await buildReport({ seed, runs, seeds, testDir: 'test', progress: (line) => io.err(`report: ${line}`) });
  writeFileSync(out, text);
  io.out(`wrote ${out} (seed ${seed}, ${runs} worlds per search, ${seeds} seeds per mutant)`);
  return EXIT.pass;
}

function worse(a: SuiteStatus, b: SuiteStatus): SuiteStatus {
  const rank = { pass: 0, unknown: 1, fail: 2 } as const;
  return rank[b] > rank[a] ? b : a;
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
