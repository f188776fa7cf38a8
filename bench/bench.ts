import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { growth } from './growth.js';
import type { JobName } from './job.js';
import { procCpuMs, spread, type Spread } from './measure.js';

/**
 * `npm run bench`: what tidemark costs, measured so that the numbers can be believed.
 *
 * - Calls are call steps of the histories, never life, mutation, observed or rebind steps.
 * - CPU time is reported beside wall time: on a shared machine wall time also counts the
 *   time others held the cores. Targets are judged on CPU time, except the process bridge's,
 *   whose cost is mostly waiting for other processes: that one is judged on wall time.
 * - Tidemark and its yardsticks run interleaved (A, B, A, B...) for several rounds, and every
 *   figure is given as min, median and max over the rounds; ratios are taken within a round.
 * - Every measurement runs in a process of its own, so each has its own peak resident set,
 *   and one that runs past its time limit is stopped and reported as not finished, with what
 *   it had done: never a made-up number.
 * - The live heap is taken after a forced collection while the structures measured are still
 *   held, not after they became garbage.
 *
 * Usage: npm run bench -- [--only ROW,...] [--quick] [--json FILE] [--seed N] [--strict]
 */

const ROWS = ['reference', 'shrinking', 'large', 'growth', 'checker', 'bridge', 'forks', 'pending', 'examples'] as const;
type RowName = (typeof ROWS)[number];

const USAGE = `usage: npm run bench -- [options]
  --only ROW[,ROW...]  run only these rows: ${ROWS.join(', ')}
  --quick              fewer rounds and worlds (one round, two where a ratio is taken); sizes and targets unchanged
  --json FILE          also write every measurement as JSON to FILE
  --seed N             seed of the generated worlds (default 20261129)
  --strict             exit 1 when a stated target is not met
  --help               this text`;

interface Options {
  readonly rows: readonly RowName[];
  readonly quick: boolean;
  readonly json: string | null;
  readonly seed: number;
  readonly strict: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      seed: { type: 'string' },
      strict: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  let rows: RowName[] = [...ROWS];
  if (values.only !== undefined) {
    const wanted = values.only.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const unknown = wanted.filter((w) => !(ROWS as readonly string[]).includes(w));
    if (unknown.length > 0 || wanted.length === 0) throw new UsageError(`--only takes rows among ${ROWS.join(', ')}; got ${values.only}`);
    rows = ROWS.filter((r) => wanted.includes(r));
  }
  const seed = values.seed === undefined ? 20261129 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`--seed must be a non-negative integer, got ${values.seed}`);
  return { rows, quick: values.quick, json: values.json ?? null, seed, strict: values.strict };
}

class UsageError extends Error {}

/**
 * One measurement to run in its own process, with a limit on its CPU time (its own and its
 * reaped children's): on a shared machine a wall-time limit would stop a job for the load of
 * others. Wall time is still bounded, at WALL_PER_CPU times the CPU limit.
 */
interface JobSpec {
  readonly key: string;
  readonly job: JobName;
  readonly args: Record<string, unknown>;
  readonly limitS: number;
}

const WALL_PER_CPU = 4;
const POLL_MS = 250;

type Message = { readonly type: string; readonly [k: string]: unknown };

interface JobResult {
  readonly spec: JobSpec;
  readonly rounds: readonly Record<string, any>[];
  /** The last progress line, and the figures from the end of the job (memory). */
  readonly progress: Record<string, any> | null;
  readonly done: Record<string, any> | null;
  /** Stopped at its limit; then what it had spent when it was stopped. */
  readonly timedOut: boolean;
  readonly stopped: { readonly by: 'cpu' | 'wall'; readonly cpuS: number | null; readonly wallS: number } | null;
  readonly error: string | null;
  readonly wallS: number;
}

interface Target {
  readonly row: RowName;
  readonly what: string;
  readonly target: string;
  readonly measured: string;
  /** null: not measured in this run (the measurement did not finish or was not run). */
  readonly met: boolean | null;
}

interface RowReport {
  readonly lines: string[];
  readonly targets: Target[];
  readonly summary: Record<string, unknown>;
}

interface Row {
  readonly title: string;
  jobs(options: Options): JobSpec[];
  report(results: ReadonlyMap<string, JobResult>, options: Options): RowReport;
}

// Where the job runner is: job.js beside this file once built, job.ts under tsx.
const self = fileURLToPath(import.meta.url);
const JOB = self.endsWith('.ts') ? { file: self.replace(/bench\.ts$/, 'job.ts'), flags: ['--import', 'tsx'] } : { file: self.replace(/bench\.js$/, 'job.js'), flags: [] };

function runJob(spec: JobSpec): Promise<JobResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    // Its own process group, so that stopping it stops whatever it started in that group.
    // (The bridge's consumer processes have groups of their own; they end when their stdin
    // closes with the job.)
    const child = spawn(process.execPath, ['--expose-gc', ...JOB.flags, JOB.file, spec.job, JSON.stringify(spec.args)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const stop = (): void => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    // A job in a group of its own does not hear the terminal's Ctrl-C: pass it on.
    const interrupted = (): void => {
      stop();
      process.exit(130);
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    const rounds: Record<string, any>[] = [];
    let progress: Record<string, any> | null = null;
    let done: Record<string, any> | null = null;
    let stderr = '';
    let stopped: JobResult['stopped'] = null;
    let buffered = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let message: Message;
        try {
          message = JSON.parse(line) as Message;
        } catch {
          stderr += `${line}\n`;
          continue;
        }
        if (message.type === 'round') rounds.push(message);
        else if (message.type === 'progress') progress = { ...progress, ...message };
        else if (message.type === 'done') done = message;
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const cpuOf = (): number | null => {
      const cpu = procCpuMs(child.pid as number);
      return cpu === null ? null : (cpu.own + cpu.children) / 1000;
    };
    const timer = setInterval(() => {
      const cpuS = cpuOf();
      const wallS = (performance.now() - started) / 1000;
      const by = cpuS !== null && cpuS > spec.limitS ? 'cpu' : wallS > spec.limitS * WALL_PER_CPU ? 'wall' : null;
      if (by === null || stopped !== null) return;
      stopped = { by, cpuS, wallS };
      stop();
    }, POLL_MS);
    child.on('close', (code, signal) => {
      clearInterval(timer);
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      const timedOut = stopped !== null;
      const failed = !timedOut && (code !== 0 || done === null);
      resolve({
        spec,
        rounds,
        progress,
        done,
        timedOut,
        stopped,
        error: failed ? `exited with ${signal ?? `code ${code}`}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-6).join(' | ')}` : ''}` : null,
        wallS: (performance.now() - started) / 1000,
      });
    });
  });
}

// ---------------------------------------------------------------------------------------
// Formatting

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, digits: number): string => n.toFixed(digits);
/** Three significant digits or so, for figures whose scale varies from row to row. */
const num = (n: number): string => (Math.abs(n) >= 100 ? fixed(n, 0) : Math.abs(n) >= 10 ? fixed(n, 1) : Math.abs(n) >= 1 ? fixed(n, 2) : fixed(n, 3));
const mib = (n: number | null | undefined): string => (n === null || n === undefined ? 'not measured' : `${fixed(n, 1)} MiB`);

function triple(s: Spread | null, format: (n: number) => string = num): string {
  if (s === null) return 'no finished round';
  if (s.n === 1) return `${format(s.median)} (one round)`;
  return `${format(s.min)} / ${format(s.median)} / ${format(s.max)}`;
}

function line(label: string, s: Spread | null, unit: string, format?: (n: number) => string): string {
  return `  ${label.padEnd(50)} ${triple(s, format)}${s === null ? '' : ` ${unit}`}`;
}

function unfinished(r: JobResult | undefined, what: string): string | null {
  if (r === undefined) return `${what}: not run`;
  if (r.error !== null) return `${what}: failed, ${r.error}`;
  if (r.timedOut) return `${what}: ${notFinished(r)}`;
  return null;
}

function notFinished(r: JobResult): string {
  const s = r.stopped;
  if (s === null) return 'did not finish';
  if (s.by === 'cpu') return `did not finish within ${r.spec.limitS} s of CPU (stopped after ${num(s.wallS)} s wall)`;
  return `did not finish within ${num(s.wallS)} s wall (${s.cpuS === null ? 'its CPU time unknown' : `${num(s.cpuS)} s of CPU`})`;
}

/** The job's peak resident set, and its live heap at `heapWhat` (null: a job that does not measure it). */
function memory(r: JobResult | undefined, heapWhat: string | null): string {
  const done = r?.done;
  const peak = done?.peakRssMiB ?? r?.progress?.peakRssMiB;
  const rss = `peak RSS ${peak === undefined ? 'n/a' : mib(peak)}`;
  return heapWhat === null ? rss : `${rss}, live heap after GC ${heapWhat} ${mib(done?.heapLiveMiB ?? r?.progress?.heapWithAllPendingMiB)}`;
}

const of = (rounds: readonly Record<string, any>[], f: (round: Record<string, any>) => number): Spread | null => spread(rounds.map(f));

/**
 * A target against a measured value. A measurement stopped at its limit has no value, but
 * when it had already spent more than the target allows, the target is plainly not met.
 */
function judge(row: RowName, what: string, target: string, value: number | null, limit: number, format: (n: number) => string, missing: string, spentBeyond = false): Target {
  if (value === null) return { row, what, target, measured: missing, met: spentBeyond ? false : null };
  return { row, what, target, measured: format(value), met: value <= limit };
}

/** Whether a stopped measurement had spent more CPU than `seconds` when it was stopped. */
function stoppedBeyond(r: JobResult | undefined, seconds: number): boolean {
  const s = r?.stopped;
  return s !== null && s !== undefined && ((s.cpuS ?? 0) > seconds || (s.by === 'cpu' && r !== undefined && r.spec.limitS > seconds));
}

function verdict(t: Target): string {
  return t.met === null ? 'NOT MEASURED' : t.met ? 'met' : 'NOT MET';
}

// ---------------------------------------------------------------------------------------
// The rows

const reference: Row = {
  title: 'reference consumer over default generated worlds, against a fair fast-check peer',
  jobs: (o) => [{ key: 'reference', job: 'reference', args: { worlds: o.quick ? 300 : 1000, rounds: o.quick ? 2 : 5, seed: o.seed }, limitS: 240 }],
  report(results, o) {
    const r = results.get('reference');
    const lines: string[] = [];
    const first = r?.rounds[0];
    if (first) {
      const t = first.tidemark;
      lines.push(
        `  ${int(t.worlds)} worlds a round (seed ${o.seed}; ${int(t.executed)} executed, a plan drawn twice is answered from the memo), ${r.rounds.length} round(s), interleaved: A tidemark (checkProperty), B fair peer (fast-check, every call through fc.scheduler), C plain fast-check (asyncModelRun, a counter), D tidemark timed in parts (below)`,
        `  calls counted: ${int(t.calls)} call steps in ${int(t.steps)} steps (${fixed((100 * (t.steps - t.calls)) / t.calls, 1)}% more steps than calls: life, mutation, observed and rebind steps are not calls)`,
        `  ${''.padEnd(50)} min / median / max over rounds`,
      );
    }
    const rounds = r?.rounds ?? [];
    const perCall = (x: { cpuMs: number; calls: number }): number => (x.cpuMs * 1000) / x.calls;
    const ratio = of(rounds, (x) => perCall(x.tidemark) / perCall(x.peer));
    const share = of(rounds, (x) => (100 * x.parts.checkCpuMs) / (x.parts.runCpuMs + x.parts.checkCpuMs));
    lines.push(
      line('tidemark: CPU per call', of(rounds, (x) => perCall(x.tidemark)), 'µs'),
      line('tidemark: wall per call', of(rounds, (x) => (x.tidemark.wallMs * 1000) / x.tidemark.calls), 'µs'),
      line('tidemark: CPU per world executed', of(rounds, (x) => x.tidemark.cpuMs / x.tidemark.executed), 'ms'),
      line('tidemark: wall per world executed', of(rounds, (x) => x.tidemark.wallMs / x.tidemark.executed), 'ms'),
      line(`fair peer: CPU per call (${first ? num(first.peer.calls / first.peer.worlds) : '?'} calls a world)`, of(rounds, (x) => perCall(x.peer)), 'µs'),
      line('fair peer: CPU per world', of(rounds, (x) => x.peer.cpuMs / x.peer.worlds), 'ms'),
      line('plain fast-check: CPU per command', of(rounds, (x) => (x.plain.cpuMs * 1000) / x.plain.commands), 'µs'),
      line('plain fast-check: CPU per run', of(rounds, (x) => x.plain.cpuMs / x.plain.worlds), 'ms'),
      line('ratio tidemark / fair peer, CPU per call', ratio, 'x'),
      line('ratio tidemark / fair peer, CPU per world', of(rounds, (x) => x.tidemark.cpuMs / x.tidemark.executed / (x.peer.cpuMs / x.peer.worlds)), 'x'),
      line('ratio tidemark / plain fast-check, CPU per world', of(rounds, (x) => x.tidemark.cpuMs / x.tidemark.executed / (x.plain.cpuMs / x.plain.worlds)), 'x'),
      `  D: the same worlds, the world's run and the checker (model/checker.ts check, ground truth included) timed apart`,
      line('world run: CPU per world', of(rounds, (x) => x.parts.runCpuMs / x.tidemark.executed), 'ms'),
      line('checker: CPU per world', of(rounds, (x) => x.parts.checkCpuMs / x.tidemark.executed), 'ms'),
      line("checker's share of a world's CPU (run + check)", share, '%'),
      `  memory: ${memory(r, 'during a check (largest of four looks)')}`,
    );
    const problem = unfinished(r, 'this row');
    if (problem) lines.push(`  ${problem}`);
    const targets = [
      judge('reference', 'tidemark / fair peer, CPU per call (median of rounds)', '<= 2x', ratio?.median ?? null, 2, (n) => `${num(n)}x`, problem ?? 'not measured'),
      judge('reference', "the checker's share of a world's CPU (median of rounds)", '<= 10%', share?.median ?? null, 10, (n) => `${num(n)}%`, problem ?? 'not measured'),
    ];
    return {
      lines,
      targets,
      summary: { cpuMicrosPerCall: of(rounds, (x) => perCall(x.tidemark)), ratioToPeerPerCall: ratio, checkerSharePercent: share },
    };
  },
};

/** A replay path can run to hundreds of steps: its start and its length say enough here (the JSON has it whole). */
function shortPath(path: string | null): string {
  if (path === null) return '(none)';
  const parts = path.split(':');
  return parts.length <= 8 ? path : `${parts.slice(0, 8).join(':')}:... (${parts.length} steps)`;
}

const SHRINK_MUTANT = 'narrow-replay-window';
const SHRINK_SEED = 1;

const shrinking: Row = {
  title: `a failing consumer, found and shrunk: mutant ${SHRINK_MUTANT}, seed ${SHRINK_SEED}, as tidemark check runs it (all searches)`,
  jobs: (o) => [{ key: 'shrinking', job: 'shrinking', args: { mutant: SHRINK_MUTANT, seed: SHRINK_SEED, rounds: o.quick ? 1 : 3 }, limitS: 120 }],
  report(results) {
    const r = results.get('shrinking');
    const rounds = r?.rounds ?? [];
    const lines: string[] = [];
    const first = rounds[0];
    if (first) {
      lines.push(
        `  first failure at world ${int(first.firstFailure)}; ${int(first.worlds)} worlds executed in all (verdicts memoized by plan: repeats are not executed), ${first.searches} searches, ${int(first.shrinks)} shrinks in the reported one`,
        `  counterexample: ${first.events} event(s), ${first.faults} fault(s), ${first.anomalies.join(', ')}; replay with --seed ${first.replay.seed} --path ${shortPath(first.replay.path)}`,
      );
      const differ = rounds.some((x) => x.worlds !== first.worlds || x.replay.path !== first.replay.path);
      if (differ) lines.push(`  WARNING: rounds executed different worlds (${rounds.map((x) => x.worlds).join(', ')}): the check is not deterministic`);
    }
    lines.push(
      `  ${''.padEnd(50)} min / median / max over rounds`,
      line('CPU, whole check', of(rounds, (x) => x.cpuMs / 1000), 's'),
      line('wall, whole check', of(rounds, (x) => x.wallMs / 1000), 's'),
      line('CPU per world executed', of(rounds, (x) => x.cpuMs / x.worlds), 'ms'),
      `  memory: ${memory(r, 'during the check (largest of the looks every 500 worlds)')}`,
    );
    const problem = unfinished(r, 'this row');
    if (problem) lines.push(`  ${problem}`);
    return { lines, targets: [], summary: { cpuSeconds: of(rounds, (x) => x.cpuMs / 1000), worlds: first?.worlds ?? null } };
  },
};

const LARGE = [10_000, 100_000] as const;

const large: Row = {
  title: 'one large calm world through the reference consumer, by execute() as a check runs it (pages of 8, one worker, no faults)',
  jobs: (o) => [
    { key: 'large-10000', job: 'large', args: { events: 10_000, rounds: o.quick ? 1 : 3 }, limitS: 30 },
    { key: 'large-100000', job: 'large', args: { events: 100_000, rounds: 1 }, limitS: 120 },
  ],
  report(results) {
    const lines: string[] = [`  ${'events'.padEnd(10)} ${'calls'.padStart(9)}   CPU s (min / median / max)       wall s (median)   memory`];
    const cpu = new Map<number, number>();
    for (const events of LARGE) {
      const r = results.get(`large-${events}`);
      const rounds = r?.rounds ?? [];
      const problem = unfinished(r, `${int(events)} events`);
      const c = of(rounds, (x) => x.cpuMs / 1000);
      if (c !== null && problem === null) cpu.set(events, c.median);
      const w = of(rounds, (x) => x.wallMs / 1000);
      lines.push(
        problem !== null
          ? `  ${problem}`
          : `  ${int(events).padEnd(10)} ${int(rounds[0]?.calls ?? 0).padStart(9)}   ${triple(c).padEnd(32)} ${(w ? num(w.median) : '-').padEnd(17)} ${memory(r, 'with the execution held')}`,
      );
    }
    const small = cpu.get(10_000);
    const big = cpu.get(100_000);
    const ratio = small !== undefined && big !== undefined ? big / small : null;
    lines.push(`  ratio 100k / 10k events, CPU (medians): ${ratio === null ? 'not measured' : `${num(ratio)}x (linear would be 10x)`}`);
    const targets = [
      judge(
        'large',
        '100k-event world against 10k, CPU',
        '<= 10x',
        ratio,
        10,
        (n) => `${num(n)}x`,
        unfinished(results.get('large-100000'), '100k events') ?? unfinished(results.get('large-10000'), '10k events') ?? 'not measured',
        small !== undefined && stoppedBeyond(results.get('large-100000'), 10 * small),
      ),
    ];
    return { lines, targets, summary: { cpuSeconds: Object.fromEntries(cpu), ratio } };
  },
};

const CHECKER = [
  { steps: 10_000, mutationEvery: null, full: 5 },
  { steps: 10_000, mutationEvery: 1000, full: 5 },
  { steps: 100_000, mutationEvery: null, full: 5 },
  { steps: 100_000, mutationEvery: 1000, full: 5 },
  { steps: 1_000_000, mutationEvery: null, full: 3 },
  { steps: 1_000_000, mutationEvery: 1000, full: 3 },
] as const;

const checkerKey = (c: (typeof CHECKER)[number]): string => `checker-${c.steps}-${c.mutationEvery === null ? 'calm' : 'mutations'}`;

const checker: Row = {
  title: 'the checker alone on synthetic histories (one worker, pages of 8, at-least-once; mutations: one insert every 1,000 events)',
  jobs: (o) =>
    CHECKER.map((c) => ({
      key: checkerKey(c),
      job: 'checker',
      args: { steps: c.steps, mutationEvery: c.mutationEvery, rounds: o.quick ? 1 : c.full },
      limitS: c.steps >= 1_000_000 ? (c.mutationEvery === null ? 60 : 90) : 30,
    })),
  report(results) {
    const lines = [`  ${'history'.padEnd(28)} ${'events'.padStart(9)} ${'inserts'.padStart(8)}   CPU s (min / median / max)       wall s (median)   memory`];
    const targets: Target[] = [];
    for (const c of CHECKER) {
      const r = results.get(checkerKey(c));
      const label = `${int(c.steps)} steps, ${c.mutationEvery === null ? 'calm' : 'mutations'}`;
      const rounds = r?.rounds ?? [];
      const cpu = of(rounds, (x) => x.cpuMs / 1000);
      const wall = of(rounds, (x) => x.wallMs / 1000);
      const p = r?.progress;
      const problem = unfinished(r, label);
      const shape = p ? `${int(p.events).padStart(9)} ${int(p.mutations).padStart(8)}` : `${'?'.padStart(9)} ${'?'.padStart(8)}`;
      if (problem !== null && rounds.length === 0) lines.push(`  ${label.padEnd(28)} ${shape}   ${problem.replace(`${label}: `, '')}`);
      else lines.push(`  ${label.padEnd(28)} ${shape}   ${triple(cpu).padEnd(32)} ${(wall ? num(wall.median) : '-').padEnd(17)} ${memory(r, 'with history and verdict held')}${problem ? `; ${problem}` : ''}`);
      if (c.steps === 1_000_000) {
        targets.push(
          judge('checker', `checker at 1M steps, ${c.mutationEvery === null ? 'calm' : 'a mutation every 1,000 events'}, CPU`, '<= 2 s', cpu?.median ?? null, 2, (n) => `${num(n)} s`, problem ?? 'not measured', stoppedBeyond(r, 2)),
        );
      }
    }
    return { lines, targets, summary: Object.fromEntries(CHECKER.map((c) => [checkerKey(c), of(results.get(checkerKey(c))?.rounds ?? [], (x) => x.cpuMs / 1000)])) };
  },
};

const bridge: Row = {
  title: 'the process bridge: examples/node/consumer.mjs through --command, against the same file in process, same seed',
  jobs: (o) => [{ key: 'bridge', job: 'bridge', args: { worlds: o.quick ? 8 : 20, rounds: o.quick ? 1 : 3, seed: o.seed }, limitS: 120 }],
  report(results) {
    const r = results.get('bridge');
    const rounds = r?.rounds ?? [];
    const lines: string[] = [];
    const first = rounds[0];
    if (first) lines.push(`  ${first.process.worlds} worlds a round, ${rounds.length} round(s), interleaved: A process (check's sampled kills: session crashes, real kills in 1 world of REAL_KILL_EVERY), B in process; both recorded ${int(first.process.steps)} steps`);
    const perWorld = (x: { wallMs: number; worlds: number }): number => x.wallMs / x.worlds;
    const ratio = of(rounds, (x) => perWorld(x.process) / perWorld(x.inProcess));
    // The consumer processes' own CPU is not shown: the bridge kills each one's process group,
    // so a killed consumer is reaped by init, not by the harness, and its CPU time never
    // reaches the harness's account of its children. A figure from there would undercount.
    lines.push(
      `  ${''.padEnd(50)} min / median / max over rounds`,
      line('process: wall per world', of(rounds, (x) => perWorld(x.process)), 'ms'),
      line('process: harness CPU per world (not consumers)', of(rounds, (x) => x.process.cpuMs / x.process.worlds), 'ms'),
      line('in process: wall per world', of(rounds, (x) => perWorld(x.inProcess)), 'ms'),
      line('in process: CPU per world', of(rounds, (x) => x.inProcess.cpuMs / x.inProcess.worlds), 'ms'),
      line('ratio process / in process, wall per world', ratio, 'x'),
      line('ratio, harness CPU per world', of(rounds, (x) => x.process.cpuMs / x.process.worlds / (x.inProcess.cpuMs / x.inProcess.worlds)), 'x'),
      `  the floor: one bare pipe round trip per world call (${first ? int(first.floor.roundTrips) : '?'} a round: a JSON line each way, nothing else; bench/pipe-floor.ts)`,
      line('floor: wall per world', of(rounds, (x) => perWorld(x.floor)), 'ms'),
      line('ratio floor / in process, wall per world', of(rounds, (x) => perWorld(x.floor) / perWorld(x.inProcess)), 'x'),
      line('ratio process / floor: the harness and the consumer above the pipe', of(rounds, (x) => perWorld(x.process) / perWorld(x.floor)), 'x'),
      `  memory (harness): ${memory(r, 'while consumer processes ran (largest look)')}`,
    );
    const problem = unfinished(r, 'this row');
    if (problem) lines.push(`  ${problem}`);
    const targets = [judge('bridge', 'process consumer per world against in process, wall (median of rounds)', '<= 5x', ratio?.median ?? null, 5, (n) => `${num(n)}x`, problem ?? 'not measured')];
    return { lines, targets, summary: { ratio } };
  },
};

const forks: Row = {
  title: 'real kills for examples/python/ledger_consumer.py, with and without its fork server, against the same ledger in process, same seed',
  jobs: (o) => [{ key: 'forks', job: 'forks', args: { worlds: o.quick ? 8 : 60, rounds: o.quick ? 1 : 3, seed: o.seed }, limitS: 600 }],
  report(results) {
    const r = results.get('forks');
    const rounds = r?.rounds ?? [];
    const lines: string[] = [];
    const first = rounds[0];
    if (first) {
      lines.push(
        `  ${first.forked.worlds} worlds a round, ${rounds.length} round(s), interleaved: A real kills, each incarnation forked from the fork server; B real kills, each a process started for it; C the Node ledger in process (the same design, call for call); D the floor: one bare round trip to a Python child per world call, over a pipe (readline, json.loads, the client's encoder, a flush; bench/pipe-floor.ts); E the machine's floor under it: as many round trips of bare bytes (os.read, os.write, nothing parsed); A, B and C recorded ${int(first.forked.steps)} steps, ${int(first.floor.roundTrips)} of them calls`,
      );
    }
    const perWorld = (x: { wallMs: number; worlds: number }): number => x.wallMs / x.worlds;
    const ratio = of(rounds, (x) => perWorld(x.forked) / perWorld(x.inProcess));
    // As for the bridge row, a killed consumer's CPU never reaches the harness's account, so
    // only wall time compares the three; the harness's own CPU is shown beside it.
    lines.push(
      `  ${''.padEnd(50)} min / median / max over rounds`,
      line('fork server: wall per world', of(rounds, (x) => perWorld(x.forked)), 'ms'),
      line('fork server: harness CPU per world', of(rounds, (x) => x.forked.cpuMs / x.forked.worlds), 'ms'),
      line('no fork server: wall per world', of(rounds, (x) => perWorld(x.started)), 'ms'),
      line('no fork server: harness CPU per world', of(rounds, (x) => x.started.cpuMs / x.started.worlds), 'ms'),
      line('in process: wall per world', of(rounds, (x) => perWorld(x.inProcess)), 'ms'),
      line('ratio fork server / in process, wall per world', ratio, 'x'),
      line('ratio no fork server / in process, wall per world', of(rounds, (x) => perWorld(x.started) / perWorld(x.inProcess)), 'x'),
      line('ratio no fork server / fork server, wall per world', of(rounds, (x) => perWorld(x.started) / perWorld(x.forked)), 'x'),
      line('floor: wall per world', of(rounds, (x) => perWorld(x.floor)), 'ms'),
      line('ratio floor / in process, wall per world', of(rounds, (x) => perWorld(x.floor) / perWorld(x.inProcess)), 'x'),
      line('ratio fork server / floor: harness, forks, kills and ledger above the pipe', of(rounds, (x) => perWorld(x.forked) / perWorld(x.floor)), 'x'),
      line('machine floor (bare bytes): wall per world', of(rounds, (x) => perWorld(x.rawFloor)), 'ms'),
      line('ratio machine floor / in process, wall per world', of(rounds, (x) => perWorld(x.rawFloor) / perWorld(x.inProcess)), 'x'),
      `  memory (harness): ${memory(r, null)}`,
    );
    const problem = unfinished(r, 'this row');
    if (problem) lines.push(`  ${problem}`);
    const targets = [judge('forks', 'Python example, real kills with its fork server, per world against in process, wall (median of rounds)', '<= 5x', ratio?.median ?? null, 5, (n) => `${num(n)}x`, problem ?? 'not measured')];
    return { lines, targets, summary: { ratio, withoutForkServer: of(rounds, (x) => perWorld(x.started) / perWorld(x.inProcess)), floor: of(rounds, (x) => perWorld(x.floor) / perWorld(x.inProcess)), machineFloor: of(rounds, (x) => perWorld(x.rawFloor) / perWorld(x.inProcess)) } };
  },
};

const EXAMPLE_WORLDS = 200;

const examples: Row = {
  title: `the time to a verdict of tidemark check --runs ${EXAMPLE_WORLDS} for each example, as a user runs it (the scenarios, the worlds, shrinking and final replays), one after the other`,
  jobs: (o) => [{ key: 'examples', job: 'examples', args: { worlds: o.quick ? 50 : EXAMPLE_WORLDS, seed: o.seed }, limitS: 3600 }],
  report(results, o) {
    const r = results.get('examples');
    const rounds = r?.rounds ?? [];
    const worlds = rounds[0]?.worlds ?? (o.quick ? 50 : EXAMPLE_WORLDS);
    // A markdown table, for docs/protocol.md (Making it fast) as it is printed.
    const lines = [`  ${worlds} generated worlds, seed ${o.seed}; wall time from the command's start to its exit`, '', '  | example | processes | verdict | time to a verdict |', '  |---|---|---|---|'];
    for (const x of rounds) lines.push(`  | \`${x.example}\` | ${x.how} | ${x.verdict} | ${num(x.wallMs / 1000)} s |`);
    const problem = unfinished(r, 'this row');
    if (problem) lines.push(`  ${problem}`);
    return { lines, targets: [], summary: { runs: rounds } };
  },
};

const PENDING = 100_000;

const pending: Row = {
  title: `${int(PENDING)} pending calls: one world, a consumer that issues an emit per event without awaiting any`,
  jobs: () => [{ key: 'pending', job: 'pending', args: { calls: PENDING }, limitS: 30 }],
  report(results) {
    const r = results.get('pending');
    const round = r?.rounds[0];
    const lines: string[] = [];
    if (round && r?.error === null) {
      lines.push(`  finished: ${int(round.calls)} calls, CPU ${num(round.cpuMs / 1000)} s, wall ${num(round.wallMs / 1000)} s, CPU per call ${num((round.cpuMs * 1000) / round.calls)} µs`);
    } else if (r?.timedOut) {
      const p = r.progress;
      lines.push(
        p
          ? `  ${notFinished(r)}: ${int(p.answered)} of ${int(p.issued)} emits answered at its last report, after ${num(p.cpuMs / 1000)} s of CPU (${num(p.wallMs / 1000)} s wall)`
          : `  ${notFinished(r)}, and said nothing of its progress`,
      );
    } else {
      lines.push(`  ${unfinished(r, 'this row')}`);
    }
    lines.push(`  memory: ${memory(r, `with all ${int(PENDING)} emits pending`)}`);
    return { lines, targets: [], summary: { finished: round !== undefined, cpuSeconds: round ? round.cpuMs / 1000 : null, progress: r?.progress ?? null } };
  },
};

const ROW: Record<RowName, Row> = { reference, shrinking, large, growth, checker, bridge, forks, pending, examples };

// ---------------------------------------------------------------------------------------

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 3;
  }
  const started = new Date();
  console.log(`tidemark bench: ${options.quick ? 'quick' : 'full'} mode, seed ${options.seed}, rows ${options.rows.join(', ')}; node ${process.version}, ${cpus().length} cores`);
  console.log('Every measurement runs in a fresh process; CPU time is that process\'s, all threads included. Targets are judged on CPU time unless a row says otherwise.');
  const report: Record<string, unknown> = {};
  const targets: Target[] = [];
  let failed = false;
  for (const name of options.rows) {
    const row = ROW[name];
    console.log(`\n[${name}] ${row.title}`);
    const results = new Map<string, JobResult>();
    for (const spec of row.jobs(options)) {
      process.stderr.write(`  running ${spec.key} (limit ${spec.limitS} s of CPU)...\n`);
      const result = await runJob(spec);
      results.set(spec.key, result);
      if (result.error !== null) failed = true;
    }
    const out = row.report(results, options);
    for (const l of out.lines) console.log(l);
    for (const t of out.targets) console.log(`  target: ${t.what} ${t.target}: ${t.measured}, ${verdict(t)}`);
    targets.push(...out.targets);
    report[name] = { summary: out.summary, targets: out.targets, jobs: Object.fromEntries([...results].map(([k, v]) => [k, v])) };
  }
  if (targets.length > 0) {
    console.log('\ntargets stated in the issue, measured in this run:');
    for (const t of targets) console.log(`  ${verdict(t).padEnd(12)} ${t.what} ${t.target}: ${t.measured}`);
  }
  if (options.json !== null) {
    const document = { seed: options.seed, mode: options.quick ? 'quick' : 'full', node: process.version, cores: cpus().length, started: started.toISOString(), rows: report, targets };
    writeFileSync(options.json, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`\nwrote ${options.json}`);
  }
  if (failed) {
    console.error('\nsome measurements failed (see above): their numbers are missing, not zero');
    return 1;
  }
  if (options.strict && targets.some((t) => t.met !== true)) return 1;
  return 0;
}

process.exitCode = await main();
