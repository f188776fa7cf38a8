import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processConsumer, processStats } from '../src/adapter/process/bridge.js';
import { checkProperty } from '../src/run/conformance.js';
import type { Message } from './job.js';
import { timed } from './measure.js';
import { openPipe } from './pipe-floor.js';
import { callSteps, nodeExampleInProcess, repoRoot } from './worlds.js';

/**
 * The cost of real kills for the Python example, with and without its fork server
 * (docs/protocol.md, Fork servers), against the same ledger in process; and the time to a
 * verdict of `tidemark check` for each example, as a user runs it. Both are jobs of
 * bench/job.ts, run in processes of their own by bench/bench.ts.
 */

/** The Python example through the bridge, and the interpreter's own path: a version manager's shim would be measured too. */
export const PYTHON_EXAMPLE = 'examples/python/ledger_consumer.py';

/** The interpreter `python3` names, resolved once through whatever shim stands in front of it. */
export function python(): string {
  return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

export interface ForksArgs {
  readonly worlds: number;
  readonly rounds: number;
  readonly seed: number;
}

/** How a job reports (bench/job.ts): a `round` for each timed round, `done` with the memory figures at the end. */
type Say = (message: Message) => void;

/**
 * A, the Python example killed for real, each incarnation forked from its fork server; B, the
 * same killed for real, each incarnation a process started for it; C, the Node ledger in
 * process, which takes the Python ledger's path call for call; D, the floor under any Python
 * consumer: as many bare round trips to a Python child as the worlds make calls
 * (bench/pipe-floor.ts); E, under it, the machine's: as many round trips of bare bytes, nothing
 * parsed or encoded on either side. Interleaved, the same worlds (same seed) each round. A, B and C must
 * record the same steps, or they were not the same runs.
 */
export async function forks(args: ForksArgs, say: Say, peakRssMiB: () => number): Promise<void> {
  const interpreter = python();
  const command = `${JSON.stringify(interpreter)} ${PYTHON_EXAMPLE}`;
  const forked = await processConsumer(command, { cwd: repoRoot(), kills: 'real', warn: () => {} });
  const started = await processConsumer(command, { cwd: repoRoot(), kills: 'real', forkServer: false, warn: () => {} });
  const inside = await nodeExampleInProcess();
  // Warm-up, untimed: the in-process ledger long enough for its code to be compiled hot, as
  // it is in a round, the process consumers long enough to have started their processes.
  for (const [consumer, runs] of [[inside, args.worlds], [forked, 3], [started, 3]] as const) {
    const warm = await checkProperty(consumer, { runs, seed: args.seed + 1 });
    if (warm.status !== 'pass') throw new Error(`${consumer.name} did not pass its warm-up worlds: ${warm.status}`);
  }
  const pipe = await openPipe({ language: 'python', interpreter });
  const rawPipe = await openPipe({ language: 'python', interpreter, raw: true });
  const calls = await callSteps(inside, args.worlds, args.seed);
  for (let round = 0; round < args.rounds; round++) {
    const a = await timed(() => checkProperty(forked, { runs: args.worlds, seed: args.seed }));
    const b = await timed(() => checkProperty(started, { runs: args.worlds, seed: args.seed }));
    const c = await timed(() => checkProperty(inside, { runs: args.worlds, seed: args.seed }));
    const d = await timed(() => pipe.roundTrips(calls));
    const e = await timed(() => rawPipe.roundTrips(calls));
    for (const [who, o] of [['fork server', a.value], ['started', b.value], ['in process', c.value]] as const) {
      if (o.status !== 'pass') throw new Error(`the Python example (${who}) did not pass: ${o.status} after ${o.runs} worlds, seed ${o.seed}`);
    }
    if (a.value.calls !== b.value.calls || a.value.calls !== c.value.calls) {
      throw new Error(`the same worlds recorded ${a.value.calls} steps with the fork server, ${b.value.calls} without, ${c.value.calls} in process: the runs differ`);
    }
    say({
      type: 'round',
      round,
      forked: { ...a.cost, worlds: args.worlds, steps: a.value.calls },
      started: { ...b.cost, worlds: args.worlds, steps: b.value.calls },
      inProcess: { ...c.cost, worlds: args.worlds, steps: c.value.calls },
      floor: { ...d.cost, worlds: args.worlds, roundTrips: calls },
      rawFloor: { ...e.cost, worlds: args.worlds, roundTrips: calls },
    });
  }
  await pipe.close();
  await rawPipe.close();
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: null, forkedStats: processStats(forked), startedStats: processStats(started) });
}

/** One line of the examples table: a target as `tidemark check` takes it, and how its processes end. */
export interface ExampleRun {
  readonly example: string;
  readonly how: string;
  readonly argv: readonly string[];
}

/** Every example of examples/ a check can run, in each way its processes can be run. */
export function exampleRuns(py: string): ExampleRun[] {
  const command = (file: string): string => `${py} ${file}`;
  const node = (file: string): string => `${JSON.stringify(process.execPath)} ${file}`;
  const runs: ExampleRun[] = [];
  const add = (example: string, how: string, ...argv: string[]): void => void runs.push({ example, how, argv });
  add('examples/ledger-consumer.ts', 'in process', '--adapter', 'examples/ledger-consumer.ts');
  add('examples/ledger-consumer-buggy.ts', 'in process', '--adapter', 'examples/ledger-consumer-buggy.ts');
  add('examples/blackbox-consumer.ts', 'in process', '--adapter', 'examples/blackbox-consumer.ts');
  add('examples/node/in-process.mjs', 'in process', '--adapter', 'examples/node/in-process.mjs');
  add('examples/node/consumer.mjs', 'sampled (sessions)', '--command', node('examples/node/consumer.mjs'));
  add('examples/node/consumer.mjs', 'real kills', '--command', node('examples/node/consumer.mjs'), '--kills', 'real');
  for (const file of ['examples/python/ledger_consumer.py', 'examples/python/ledger_consumer_buggy.py']) {
    add(file, 'sampled (sessions, fork server)', '--command', command(file));
    add(file, 'real kills, fork server', '--command', command(file), '--kills', 'real');
    add(file, 'real kills, no fork server', '--command', command(file), '--kills', 'real', '--fork-server', 'off');
  }
  add('examples/python/singer_tap.py', 'real kills, fork server', '--command', command('examples/python/singer_tap.py'));
  add('examples/python/singer_tap.py', 'real kills, no fork server', '--command', command('examples/python/singer_tap.py'), '--fork-server', 'off');
  for (const file of ['examples/python/sqlite_ledger.py', 'examples/python/sqlite_ledger_buggy.py']) {
    add(file, 'real kills, fork server', '--command', command(file));
    add(file, 'real kills, no fork server', '--command', command(file), '--fork-server', 'off');
  }
  return runs;
}

export interface ExamplesArgs {
  readonly worlds: number;
  readonly seed: number;
}

/** The CLI as a user runs it: the build beside this file, or the source under tsx. */
function cliArgv(): string[] {
  const self = fileURLToPath(import.meta.url);
  return self.endsWith('.ts') ? ['--import', 'tsx', join(repoRoot(), 'src', 'cli.ts')] : [join(repoRoot(), 'dist', 'src', 'cli.js')];
}

/**
 * `tidemark check --runs N --seed S` for each example, one after the other, from its start to
 * its exit: the time to a verdict, shrinking and final replays included for a failing one.
 */
export async function examples(args: ExamplesArgs, say: Say, peakRssMiB: () => number): Promise<void> {
  const py = JSON.stringify(python());
  const scratch = mkdtempSync(join(tmpdir(), 'tidemark-bench-examples-'));
  try {
    let n = 0;
    for (const run of exampleRuns(py)) {
      const regressions = join(scratch, `regressions-${n++}.json`);
      const argv = [...cliArgv(), 'check', ...run.argv, '--runs', String(args.worlds), '--seed', String(args.seed), '--regressions', regressions];
      const started = performance.now();
      const { code, tail } = await new Promise<{ code: number | null; tail: string }>((resolve) => {
        const child = spawn(process.execPath, argv, { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-4000)));
        child.stderr.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-4000)));
        child.on('close', (c) => resolve({ code: c, tail: out }));
      });
      const wallMs = performance.now() - started;
      const verdict = /verdict: (\w+)/.exec(tail)?.[1] ?? null;
      if (verdict === null) throw new Error(`tidemark check ${run.argv.join(' ')} printed no verdict (exit ${code}): ${tail.slice(-600)}`);
      say({ type: 'round', round: n - 1, example: run.example, how: run.how, verdict, code, wallMs, worlds: args.worlds });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: null });
}
