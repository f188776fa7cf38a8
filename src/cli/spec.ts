import { parseArgs } from 'node:util';
import { DEFAULT_SIZE, MAX_PAGE_SIZE } from '../../scenarios/arbitraries.js';
import { MUTANT_BUDGET } from '../selftest/kill-matrix.js';
import { REGRESSIONS_FILE } from '../run/regressions.js';
import { REPORT_SEED } from '../report/report-md.js';
import { DEFAULT_JOBS } from '../selftest/search-pool.js';
import { BOUNDS, MAX_JOBS, MAX_RUNS, numberProblem, shardProblem, UsageError } from '../run/options.js';

/**
 * The commands and their flags, as data. The parser reads flags from this table and every
 * command's help is printed from it, so what `--help` says and what the parser accepts
 * cannot drift apart.
 */

/**
 * Exit codes: the verdict first, then the command line's trouble, then tidemark's own.
 * 0 is returned only after a passing verdict was printed.
 */
export const EXIT = { pass: 0, fail: 1, unknown: 2, usage: 3, error: 4 } as const;

/** A bad command line: exit 3, with the message and a pointer to the command's help. Also what a bad option to the package's API throws. */
export { UsageError } from '../run/options.js';

/** What a flag's value is; the help prints it, and the parser checks it. */
export type FlagType =
  | 'switch' // no value
  | 'text'
  | 'file' // an input file
  | 'output' // a file written: its directory is created and checked before the run
  | 'integer'
  | 'seed' // a 32-bit integer, as fast-check takes it
  | 'seconds' // a number of seconds, fractions allowed
  | 'ms' // whole milliseconds
  | 'shard' // I/N: the Ith of N shares of a run, I from 1
  | 'pairs'; // KEY=VALUE, repeatable

export interface Flag {
  readonly name: string;
  readonly type: FlagType;
  /** The value's placeholder in help (`N`, `FILE`). */
  readonly value?: string;
  readonly description: string;
  /** The value used when the flag is absent; absent when there is none or it depends on other flags (see `shownDefault`). */
  readonly default?: number | string;
  /** The default as help prints it, when it is not just `default`. */
  readonly shownDefault?: string;
  /** Bounds for numbers, inclusive. */
  readonly min?: number;
  readonly max?: number;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly about: string;
  readonly flags: readonly Flag[];
  /** The arguments that are not flags, as help shows them (`FILE...`); absent when there are none. */
  readonly positionals?: string;
}

// The bounds of every number flag are declared once, in src/run/options.ts, which the
// package's API checks its options by too: the two front doors cannot drift apart.
export { MAX_RUNS, MAX_SHARDS, SEED_MAX, SEED_MIN } from '../run/options.js';

/** --events: worlds the size of what connectors read. */
const EVENTS: Flag = {
  name: 'events',
  value: 'N',
  description: `generated worlds of up to N events, with pages of up to N/10 (at most ${MAX_PAGE_SIZE}) and a step budget that grows with them, so that a consumer checkpointing every so many records is seen between checkpoints`,
  shownDefault: `${DEFAULT_SIZE.maxEvents}, pages of up to ${DEFAULT_SIZE.maxPageSize}`,
  ...BOUNDS.events,
};

const TARGET: readonly Flag[] = [
  { name: 'adapter', type: 'file', value: 'MODULE', description: 'your consumer: a .ts or .js module exporting it (docs/adapters.md)' },
  { name: 'command', type: 'text', value: 'CMD', description: 'your consumer as a process in any language, speaking docs/protocol.md' },
  { name: 'consumer', type: 'text', value: 'NAME', description: "a built-in consumer: reference, or a mutant (see 'tidemark consumers')" },
  { name: 'singer', type: 'text', value: 'CMD', description: 'a Singer tap, unmodified, run against a fake of its HTTP API that --api describes (docs/connectors.md)' },
  { name: 'airbyte', type: 'text', value: 'CMD', description: 'an Airbyte source, unmodified, run against a fake of its HTTP API that --api describes (docs/connectors.md)' },
  { name: 'api', type: 'file', value: 'FILE', description: 'with --singer or --airbyte: the HTTP API the connector reads, as JSON (schema/api.schema.json)' },
  {
    name: 'option',
    type: 'pairs',
    value: 'KEY=VALUE',
    description: 'an option of the target, repeatable: handed to the function an --adapter module exports, as { KEY: VALUE }; to a --command process as TIDEMARK_OPTIONS, JSON, in its environment; part of every replay command and regression entry',
  },
];

/** A process consumer's hello and stall limits when no flag says otherwise (the bridge's own defaults). */
export const PROCESS_LIMIT_MS = 10_000;

const PROCESS: readonly Flag[] = [
  { name: 'hello-ms', value: 'MS', description: 'with --command: how long a process may take to say hello', default: PROCESS_LIMIT_MS, ...BOUNDS['hello-ms'] },
  { name: 'stall-ms', value: 'MS', description: 'with --command, --singer or --airbyte: how long a process may work between world calls (a connector: between HTTP requests and lines) before it is declared stalled', default: PROCESS_LIMIT_MS, ...BOUNDS['stall-ms'] },
  {
    name: 'fork-server',
    type: 'text',
    value: 'on|off',
    description:
      "with --command: on: when the consumer's hello offers forks, the command is started once, as a fork server, and each incarnation's process is forked from it (docs/protocol.md, Fork servers); off: the command is started for each. The histories are the same",
    default: 'on',
  },
];

const WATCHDOG: Flag = {
  name: 'watchdog',
  value: 'S',
  description: 'end the run as unknown (exit 2) when it makes no progress (no world call, no new world) for S seconds; never shorter than --hello-ms plus --stall-ms plus 10 s; 0 turns it off; also TIDEMARK_WATCHDOG',
  default: 60,
  ...BOUNDS.watchdog,
};

function shardFlag(share: string): Flag {
  return {
    name: 'shard',
    type: 'shard',
    value: 'I/N',
    description: `run only the Ith of N shares of ${share}, for N machines of a CI matrix; needs --json, whose files 'tidemark merge' combines into the unsharded result (docs/ci.md)`,
  };
}

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'check',
    summary: 'run the named scenarios and generated worlds against a consumer',
    usage: 'tidemark check (--adapter MODULE | --command CMD | --consumer NAME) [options]',
    about: `Runs the conformance suite: failures recorded in the regression file first, then the named
scenarios, then generated worlds. Each line is printed as it finishes. A new failure is added
to the regression file. Give exactly one target: --adapter, --command or --consumer.`,
    flags: [
      ...TARGET,
      { name: 'runs', value: 'N', description: 'generated worlds to try', default: 1000, ...BOUNDS.runs },
      { name: 'seed', type: 'seed', value: 'N', description: 'fast-check seed', shownDefault: 'a fresh one, printed' },
      { name: 'searches', value: 'N', description: 'after a failure, shrink this many searches and show the smallest', shownDefault: '3; 1 with --command', ...BOUNDS.searches },
      EVENTS,
      { name: 'time-limit', value: 'S', description: 'stop generating worlds after S seconds and judge those that ran (shrinking included); the verdict says how many ran', ...BOUNDS['time-limit'] },
      { name: 'scenario', type: 'text', value: 'NAME', description: 'run only this named scenario (no generated worlds; not with --runs, --seed, --searches or --time-limit)' },
      { name: 'all', type: 'switch', description: 'run everything (the default)' },
      { name: 'verbose', type: 'switch', description: "also print the adversity census of the generated worlds: each kind of real-source adversity and each combination the consumer's worlds can reach, after how many worlds it was first reached, and what never was" },
      { name: 'json', type: 'output', value: 'FILE', description: 'write the results as JSON' },
      { name: 'junit', type: 'output', value: 'FILE', description: 'write the results as JUnit XML for CI' },
      { name: 'timeline', type: 'output', value: 'FILE', description: 'write a picture (HTML with SVG) of the first failure' },
      { name: 'regressions', type: 'output', value: 'FILE', description: 'the regression file, read first and added to', default: REGRESSIONS_FILE },
      shardFlag('the regressions, scenarios and generated worlds (needs --seed)'),
      {
        name: 'jobs',
        value: 'N',
        description: `run the check as N jobs at once, each a process with its own consumer processes: N shards of the run, merged as 'tidemark merge' does, so the results, outputs and regression entries are those of --jobs 1; at most ${MAX_JOBS} (4 per core); not with --shard, --scenario or --verbose`,
        default: 1,
        ...BOUNDS.jobs,
        max: MAX_JOBS,
      },
      { name: 'heartbeat', value: 'S', description: 'without a terminal, print a progress line every S seconds (0: never)', default: 30, ...BOUNDS.heartbeat },
      ...PROCESS,
      {
        name: 'kills',
        type: 'text',
        value: 'MODE',
        description:
          "with --command: how incarnations end. real: each is its own process, killed with SIGKILL. sampled: if the consumer's hello offers sessions, 49 worlds in 50 end them with a session crash (docs/protocol.md, Sessions), the rest and every failure's final replay with real kills",
        default: 'sampled',
      },
      { name: 'session-incarnations', value: 'N', description: 'with --kills sampled: a session process serves at most N incarnations, then a fresh process takes over, so what it leaks does not pile up', default: 100, ...BOUNDS['session-incarnations'] },
      { name: 'session-memory', value: 'MB', description: 'with --kills sampled: a session process whose resident memory passes MB megabytes is replaced by a fresh one', default: 1024, ...BOUNDS['session-memory'] },
      WATCHDOG,
    ],
  },
  {
    name: 'replay',
    summary: 'replay one world exactly: a recorded failure by its ID, or from a seed and path or a scenario name',
    usage: 'tidemark replay ID | --last | (--adapter MODULE | --command CMD | --consumer NAME) (--seed N --path P | --scenario NAME) [options]',
    positionals: 'ID',
    about: `Replays one world exactly and prints its verdict and timeline. ID is the short id a failing
'tidemark check' printed for a failure it recorded in the regression file (a prefix of 4 or
more of its hex digits will do), and --last the failure recorded last: the entry names the
target, its options and the world. Otherwise give the target, and the seed and path (or the
scenario) a failing check printed. Replaying an ID runs the target its entry names: use IDs
from regression files you trust.`,
    flags: [
      { name: 'last', type: 'switch', description: 'replay the failure recorded last in the regression file' },
      ...TARGET.map((f) => (f.name === 'consumer' ? { ...f, shownDefault: 'reference' } : f)),
      { name: 'seed', type: 'seed', value: 'N', description: 'the seed of the world, with --path' },
      { name: 'path', type: 'text', value: 'P', description: `fast-check's path to the world, like 12:0:3; the first number below ${MAX_RUNS.toLocaleString('en-US')}` },
      { name: 'scenario', type: 'text', value: 'NAME', description: 'a named scenario instead of --seed and --path' },
      { ...EVENTS, description: 'the world size the failing check asked for, with --seed and --path (its replay command says it)', shownDefault: `${DEFAULT_SIZE.maxEvents}` },
      { name: 'json', type: 'output', value: 'FILE', description: 'write the verdict, anomalies, plan and history as JSON' },
      { name: 'timeline', type: 'output', value: 'FILE', description: 'write a picture (HTML with SVG) of the world' },
      { name: 'regressions', type: 'file', value: 'FILE', description: 'the regression file: a replay of an entry recorded there, with the code unchanged, must give the recorded history', default: REGRESSIONS_FILE },
      ...PROCESS,
      WATCHDOG,
    ],
  },
  {
    name: 'mutants',
    summary: 'run every mutant in the catalog and print the kill matrix',
    usage: 'tidemark mutants [options]',
    about: `Runs each mutant of the catalog for at most N generated worlds and prints the kill matrix:
the rule it breaks, the anomaly it must produce and the one found, whether it was killed,
the worlds it took, and the size of the shrunk counterexample. The reference consumer runs
under the same seed and budget and must pass. Exit 0 when every mutant is killed and the
reference passes, 1 otherwise.`,
    flags: [
      { name: 'runs', value: 'N', description: 'worlds per mutant at most', default: MUTANT_BUDGET, ...BOUNDS.runs },
      { name: 'seed', type: 'seed', value: 'N', description: 'fast-check seed', shownDefault: 'a fresh one, printed' },
      { name: 'only', type: 'text', value: 'NAME,NAME', description: 'only these mutants' },
      { name: 'json', type: 'output', value: 'FILE', description: 'also write the matrix as JSON' },
      { name: 'jobs', value: 'N', description: 'search on N threads; the matrix is the same for any N', default: DEFAULT_JOBS, shownDefault: `${DEFAULT_JOBS}, one per core`, ...BOUNDS.jobs },
      shardFlag("the mutants and the reference's worlds (needs --seed)"),
    ],
  },
  {
    name: 'report',
    summary: 'regenerate REPORT.md from a real run',
    usage: 'tidemark report [options]',
    about: `Runs the named scenarios against every reference variant, the kill matrix, and each mutant
under K seeds for the reliability table, and writes the report as Markdown. It refuses to
overwrite a file that is not a tidemark report unless --force is given.`,
    flags: [
      { name: 'seed', type: 'seed', value: 'N', description: 'the seed (the committed report uses the default)', default: REPORT_SEED },
      { name: 'runs', value: 'N', description: 'worlds per search at most', default: MUTANT_BUDGET, ...BOUNDS.runs },
      { name: 'seeds', value: 'K', description: 'seeds per mutant for the reliability table', default: 20, ...BOUNDS.seeds },
      { name: 'out', type: 'output', value: 'FILE', description: 'where to write the report', default: 'REPORT.md' },
      { name: 'force', type: 'switch', description: 'overwrite --out even if it is not a tidemark report' },
      { name: 'reuse-searches', type: 'switch', description: 're-render the report from the per-seed searches it already holds' },
      { name: 'redo', type: 'text', value: 'NAME,NAME', description: 'with --reuse-searches: search again for these mutants only' },
      { name: 'jobs', value: 'N', description: 'search on N threads; the report is the same for any N', default: DEFAULT_JOBS, shownDefault: `${DEFAULT_JOBS}, one per core`, ...BOUNDS.jobs },
      { name: 'json', type: 'output', value: 'FILE', description: "with --shard: where the shard's searches are written (instead of --out)" },
      shardFlag('the searches (mutant and seed); merge writes the report'),
    ],
  },
  {
    name: 'merge',
    summary: 'combine the --json files of a sharded check, mutants or report',
    usage: 'tidemark merge FILE... [--json FILE] [--junit FILE] [--regressions FILE] [--out FILE]',
    positionals: 'FILE...',
    about: `Reads the --json files that 'check', 'mutants' or 'report' wrote with --shard I/N, one per
shard, checks that they are all N shards of one run (same command, consumer, seed, runs and
N, each shard once), and prints the combined verdict: the same as the unsharded run's. From
check shards it can write the combined JSON, JUnit XML and new regression entries; from
mutants shards the kill matrix as JSON; from report shards the report (--out). The exit
code is the merged verdict's; files that are not the shards of one run are a usage error.`,
    flags: [
      { name: 'json', type: 'output', value: 'FILE', description: 'write the combined results as JSON, as the unsharded command writes them' },
      { name: 'junit', type: 'output', value: 'FILE', description: 'from check shards: write JUnit XML for CI' },
      { name: 'regressions', type: 'output', value: 'FILE', description: "from check shards: add the combined run's failures to this regression file" },
      { name: 'out', type: 'output', value: 'FILE', description: 'from report shards: where to write the report' },
      { name: 'force', type: 'switch', description: 'overwrite --out even if it is not a tidemark report' },
    ],
  },
  {
    name: 'regressions',
    summary: 'list the regression file, or prune the entries that now pass',
    usage: 'tidemark regressions [--file FILE] [--prune (--adapter MODULE | --command CMD | --consumer NAME)]',
    about: `Lists the regression file's entries; with --prune and a target (given as check takes it),
replays that target's entries and removes those that now pass, as recorded or with changed
code; the entries of other targets are left as they are. The file is data: what it says
never decides what runs. Nothing is pruned without --prune.`,
    flags: [
      { name: 'file', type: 'output', value: 'FILE', description: 'the regression file', default: REGRESSIONS_FILE },
      { name: 'prune', type: 'switch', description: "replay the target's entries and remove those that pass" },
      ...TARGET,
      ...PROCESS,
      WATCHDOG,
    ],
  },
  {
    name: 'judge',
    summary: 'judge a recorded history file again, running nothing',
    usage: 'tidemark judge FILE',
    positionals: 'FILE',
    about: `Reads a recorded history from FILE and judges it as check judges each world, printing the
verdict as check prints a failure. FILE holds either a bare history ({ "header", "steps" })
or a JSON output that carries one under "history": what replay --json writes, or one failure
of check --json (jq .worlds.failure). The history is validated first: a file that is not a
valid history is a usage error (exit 3) naming the field, like header.initial[0].version.`,
    flags: [],
  },
  { name: 'scenarios', summary: 'list the named scenarios and the rules each covers', usage: 'tidemark scenarios', about: 'Lists the named scenarios with the rules each covers.', flags: [] },
  { name: 'consumers', summary: 'list the built-in consumers (the reference and the mutants)', usage: 'tidemark consumers', about: 'Lists the built-in consumers: reference variants and mutants.', flags: [] },
  { name: 'help', summary: "print this help, or a command's", usage: 'tidemark help [COMMAND]', about: "Prints the tool's help, or with a command name that command's help.", flags: [] },
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

export const EXIT_CODES = `Exit codes:
  0    pass: a passing verdict was printed
  1    fail: the consumer broke a rule
  2    unknown: the run could not be judged (a hang, a stall, an error outside the world,
       a run that ended without a verdict); the reason is printed
  3    usage: a bad flag, file or adapter
  4    harness error: tidemark itself broke, or could not write an output after the run
  129, 130, 143  interrupted by SIGHUP, SIGINT or SIGTERM; consumer processes were killed`;

export function globalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return `tidemark: conformance harness for consumers of paginated event streams

Usage: tidemark <command> [options]
       tidemark --version

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n')}

${EXIT_CODES}

Run 'tidemark help <command>' (or 'tidemark <command> --help') for a command's flags.`;
}

/** A command's help: usage, what it does, and its flags as a table (flag, type, description, default). */
export function commandHelp(spec: CommandSpec): string {
  const parts = [`Usage: ${spec.usage}`, '', spec.about];
  if (spec.flags.length > 0) parts.push('', flagTable(spec.flags));
  if (['check', 'replay', 'regressions', 'merge', 'judge'].includes(spec.name)) parts.push('', EXIT_CODES);
  return parts.join('\n');
}

function flagTable(flags: readonly Flag[]): string {
  const rows = [['flag', 'type', 'description', 'default'], ...flags.map((f) => [`--${f.name}${f.value ? ` ${f.value}` : ''}`, f.type, f.description, f.shownDefault ?? (f.default === undefined ? '-' : String(f.default))])];
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  const DESCRIPTION = 52;
  const lines: string[] = [];
  for (const [flag, type, description, shown] of rows) {
    const wrapped = wrap(description!, DESCRIPTION);
    wrapped.forEach((text, i) => {
      const head = i === 0 ? `  ${flag!.padEnd(w0)}  ${type!.padEnd(w1)}  ` : ' '.repeat(w0 + w1 + 6);
      lines.push(`${head}${i === 0 ? `${text.padEnd(DESCRIPTION)}  ${shown}` : text}`.trimEnd());
    });
  }
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  out.push(line);
  return out;
}

/** Flags parsed and checked against the spec: every value is of its type and within its bounds. */
export class Flags {
  constructor(
    private readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>,
    private readonly spec: CommandSpec,
    /** The arguments that are not flags, for a command that takes them. */
    readonly positionals: readonly string[] = [],
  ) {}

  has(name: string): boolean {
    return this.values[this.flag(name).name] !== undefined;
  }

  string(name: string): string | undefined {
    const value = this.values[this.flag(name).name];
    if (typeof value === 'string') return value;
    const fallback = this.flag(name).default;
    return typeof fallback === 'string' ? fallback : undefined;
  }

  switch(name: string): boolean {
    return this.values[this.flag(name).name] === true;
  }

  /** A number flag's value: as given, else its default, else `fallback`. */
  number(name: string, fallback?: number): number | undefined {
    const flag = this.flag(name);
    const value = this.values[flag.name];
    if (typeof value === 'string') return readNumber(flag, value);
    return typeof flag.default === 'number' ? flag.default : fallback;
  }

  /** A KEY=VALUE flag's pairs, keys in order; empty when absent. */
  pairs(name: string): Readonly<Record<string, string>> {
    const flag = this.flag(name);
    const value = this.values[flag.name];
    return Array.isArray(value) ? readPairs(flag, value) : {};
  }

  /** A --shard flag's value, checked by the parser; undefined when absent. */
  shard(name: string): { readonly index: number; readonly count: number } | undefined {
    const flag = this.flag(name);
    const value = this.values[flag.name];
    return typeof value === 'string' ? readShard(flag, value) : undefined;
  }

  /** Every flag that names a file (written, or only read), with its path: given, or by default. */
  files(): { flag: Flag; path: string }[] {
    return this.spec.flags.flatMap((flag) => {
      if (flag.type !== 'output' && flag.type !== 'file') return [];
      const path = this.string(flag.name);
      return path === undefined ? [] : [{ flag, path }];
    });
  }

  /** Every flag given, with its value, for what the parser let through (output paths, say). */
  given(): { flag: Flag; value: string | boolean | readonly string[] }[] {
    return this.spec.flags.flatMap((flag) => {
      const value = this.values[flag.name];
      return value === undefined ? [] : [{ flag, value }];
    });
  }

  private flag(name: string): Flag {
    const flag = this.spec.flags.find((f) => f.name === name);
    if (!flag) throw new Error(`tidemark ${this.spec.name} has no flag --${name}`);
    return flag;
  }
}

/** Parses a command's arguments by its spec; any problem is a UsageError naming the flag and what it takes. */
export function parseFlags(spec: CommandSpec, args: readonly string[]): Flags {
  const options = Object.fromEntries(spec.flags.map((f) => [f.name, { type: f.type === 'switch' ? ('boolean' as const) : ('string' as const), ...(f.type === 'pairs' ? { multiple: true } : {}) }]));
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: negativesJoined(spec, args), options, strict: true, allowPositionals: spec.positionals !== undefined }) as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  for (const flag of spec.flags) {
    const value = values[flag.name];
    if (Array.isArray(value)) readPairs(flag, value);
    if (typeof value !== 'string') continue;
    if (['integer', 'seed', 'seconds', 'ms'].includes(flag.type)) readNumber(flag, value);
    else if (flag.type === 'shard') readShard(flag, value);
    else if (value === '') throw new UsageError(`--${flag.name} needs a value`);
  }
  return new Flags(values, spec, positionals);
}

/**
 * `--jobs -1` as `--jobs=-1`: node's parser takes a value that begins with a dash for a flag
 * and refuses it as ambiguous, so a negative number would be answered with the parser's
 * advice instead of what the flag takes. No flag's name begins with a digit, so a dash and a
 * digit after a flag that takes a value can only be its value.
 */
function negativesJoined(spec: CommandSpec, args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const flag = arg.startsWith('--') ? spec.flags.find((f) => `--${f.name}` === arg) : undefined;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (flag !== undefined && flag.type !== 'switch' && next !== undefined && /^-\.?\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** KEY=VALUE pairs, each key once, keys made of letters, digits, '.', '_' and '-': an object with its keys in order. */
function readPairs(flag: Flag, texts: readonly string[]): Record<string, string> {
  // No prototype: a key such as __proto__ or toString is a key like any other.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const text of texts) {
    const m = /^([A-Za-z0-9._-]+)=(.*)$/s.exec(text);
    if (!m) throw new UsageError(`--${flag.name} must look like KEY=VALUE (a key of letters, digits, '.', '_' or '-'), got '${text}'`);
    if (Object.hasOwn(out, m[1]!)) throw new UsageError(`--${flag.name} ${m[1]} is given twice ('${m[1]}=${out[m[1]!]}' and '${text}')`);
    out[m[1]!] = m[2]!;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** I/N with 1 <= I <= N <= MAX_SHARDS: shard I of N. */
function readShard(flag: Flag, text: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--${flag.name} must look like I/N (the Ith of N shards, I from 1), got '${text}'`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  const problem = shardProblem(`--${flag.name}`, index, count, text);
  if (problem !== null) throw new UsageError(problem);
  return { index, count };
}

/** A number flag's value, checked by the bounds the package's API checks its options by (src/run/options.ts). */
function readNumber(flag: Flag, text: string): number {
  // Decimal notation only: Number() would also take `0x10`, `1e3` and `0b1`, and a seed typed
  // so would be printed back as another number than the one typed.
  const decimal = flag.type === 'seconds' ? /^\s*-?(?:\d+(?:\.\d*)?|\.\d+)\s*$/ : /^\s*-?\d+\s*$/;
  const n = decimal.test(text) ? Number(text) : Number.NaN;
  const bounds = { type: flag.type as 'integer' | 'seed' | 'seconds' | 'ms', ...(flag.min === undefined ? {} : { min: flag.min }), ...(flag.max === undefined ? {} : { max: flag.max }) };
  const problem = numberProblem(`--${flag.name}`, bounds, n, `'${text}'`);
  // A number in another notation (0x10, 1e3, +5) is told why it is refused.
  const notation = Number.isNaN(n) && text.trim() !== '' && Number.isFinite(Number(text)) ? ' (in decimal notation: digits, a minus sign, a decimal point)' : '';
  if (problem !== null) throw new UsageError(`${problem}${notation}`);
  // As fast-check reads a seed: 2147483648 and above are the negative seeds with the same 32
  // bits, and printed as such, so every seed printed later is the one given.
  return flag.type === 'seed' ? n | 0 : n;
}
