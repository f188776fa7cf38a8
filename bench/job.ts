import fc from 'fast-check';
import { check } from '../model/checker.js';
import { planArb } from '../scenarios/arbitraries.js';
import { checkProperty, type PropertyOutcome } from '../src/run/conformance.js';
import { findMutant } from '../src/selftest/mutants.js';
import { referenceConsumer } from '../src/selftest/reference.js';
import type { AnyConsumer } from '../src/adapter/consumer.js';
import { execute } from '../src/run/execute.js';
import { World } from '../src/world/world.js';
import { validatePlan } from '../scenarios/validate.js';
import { processConsumer } from '../src/adapter/process/bridge.js';
import { examples, forks, type ExamplesArgs, type ForksArgs } from './forks.js';
import { growth, type GrowthArgs } from './growth-job.js';
import { countCalls, syntheticHistory, withoutOneEffect } from './histories.js';
import { openPipe } from './pipe-floor.js';
import { liveHeapMiB, peakRssMiB, startClock, timed, type Cost } from './measure.js';
import { runPeer, runPlain } from './peer.js';
import { callSteps, largePlan, manyPendingConsumer, NODE_EXAMPLE, nodeExampleInProcess, pendingPlan, repoRoot, type PendingProbe } from './worlds.js';

/**
 * One measurement, run in a process of its own by bench.ts: `node --expose-gc job.js NAME
 * ARGS-JSON`. It writes one JSON object per line to stdout: `round` for each timed round as
 * it ends, `progress` now and then, and `done` with the memory figures at the end. A job
 * that runs past its time limit is killed by bench.ts, which keeps what it had said so far:
 * a round that never ended has no number. Its own process gives each job its own peak
 * resident set, and a clean heap and JIT state.
 */
export type JobName = 'reference' | 'shrinking' | 'large' | 'checker' | 'bridge' | 'pending' | 'forks' | 'examples' | 'growth';

export type Message =
  | { readonly type: 'round'; readonly round: number; readonly [k: string]: unknown }
  | { readonly type: 'progress'; readonly [k: string]: unknown }
  | { readonly type: 'done'; readonly peakRssMiB: number; readonly heapLiveMiB: number | null; readonly [k: string]: unknown };

function say(message: Message): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Keeps the largest live heap seen at the points it is asked to look, while the work is under way. */
class HeapSampler {
  max: number | null = null;
  sample(): void {
    const live = liveHeapMiB();
    if (live !== null) this.max = Math.max(this.max ?? 0, live);
  }
}

/** A progress callback that samples the live heap every `every` worlds (for untimed passes only: a collection costs time). */
function sampling(heap: HeapSampler, every: number): (worlds: number) => void {
  return (worlds) => {
    if (worlds % every === 0) heap.sample();
  };
}

interface ReferenceArgs {
  readonly worlds: number;
  readonly rounds: number;
  readonly seed: number;
}

/**
 * The reference consumer over default generated worlds, interleaved with the fair peer and
 * plain fast-check: A, B, C, A, B, C... so that a slow spell of the machine falls on all of
 * them, not on one. Calls are counted from the histories (call steps only), in a separate
 * pass over the very same worlds; checkProperty's own count, which includes life and
 * mutation steps, must match that pass's step count, which proves the worlds were the same.
 */
async function reference(args: ReferenceArgs): Promise<void> {
  const consumer = referenceConsumer();
  const heap = new HeapSampler();
  // Warm-up, untimed, sampling the heap while a check is under way (its memo of verdicts, fast-check's state).
  const warm = await checkProperty(consumer, { runs: args.worlds, seed: args.seed + 1, progress: sampling(heap, Math.max(1, Math.floor(args.worlds / 4))) });
  if (warm.status !== 'pass') throw new Error(`the reference consumer did not pass its warm-up worlds: ${whyNot(warm, '--consumer reference')}`);
  await runPeer(Math.min(200, args.worlds), args.seed + 1, { calls: 0 });
  await runPlain(Math.min(200, args.worlds), args.seed + 1, { commands: 0 });

  const counted = await countWorlds(consumer, args.worlds, args.seed);
  say({ type: 'progress', counted: { executed: counted.executed, calls: counted.calls, steps: counted.steps } });
  for (let round = 0; round < args.rounds; round++) {
    let executed = 0;
    const a = await timed(() => checkProperty(consumer, { runs: args.worlds, seed: args.seed, progress: (n) => (executed = n) }));
    if (a.value.status !== 'pass') throw new Error(`the reference consumer did not pass: ${whyNot(a.value, '--consumer reference')}`);
    if (a.value.calls !== counted.steps || executed !== counted.executed) {
      throw new Error(
        `checkProperty executed ${executed} worlds and recorded ${a.value.calls} steps, the counting pass ${counted.executed} and ${counted.steps}: they did not run the same worlds`,
      );
    }
    const peer = { calls: 0 };
    const b = await timed(() => runPeer(args.worlds, args.seed, peer));
    const plain = { commands: 0 };
    const c = await timed(() => runPlain(args.worlds, args.seed, plain));
    // D: the same worlds once more, the world's run and the checker timed apart.
    const d = await countWorlds(consumer, args.worlds, args.seed);
    if (d.steps !== counted.steps) throw new Error(`the timed-apart pass recorded ${d.steps} steps, the counting pass ${counted.steps}: they did not run the same worlds`);
    say({
      type: 'round',
      round,
      tidemark: { ...a.cost, worlds: args.worlds, executed, calls: counted.calls, steps: counted.steps },
      peer: { ...b.cost, worlds: args.worlds, calls: peer.calls },
      plain: { ...c.cost, worlds: args.worlds, commands: plain.commands },
      parts: { runCpuMs: d.runCpuMs, checkCpuMs: d.checkCpuMs },
    });
  }
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: heap.max });
}

/**
 * The worlds checkProperty runs for this seed, run again in execute()'s two parts to count
 * their call steps, and to time the world's run and the checker apart (CPU time of each, summed
 * over the worlds). A plan drawn twice is executed once, as checkProperty's memo of verdicts does.
 */
async function countWorlds(consumer: AnyConsumer, runs: number, seed: number): Promise<{ executed: number; calls: number; steps: number; runCpuMs: number; checkCpuMs: number }> {
  let calls = 0;
  let steps = 0;
  let runCpuMs = 0;
  let checkCpuMs = 0;
  const seen = new Set<string>();
  const property = fc.asyncProperty(planArb({}), async (plan) => {
    const key = JSON.stringify(plan);
    if (seen.has(key)) return true;
    seen.add(key);
    validatePlan(plan);
    const ran = startClock();
    const history = await new World(plan, consumer).run();
    runCpuMs += ran.read().cpuMs;
    const checked = startClock();
    const result = check(history);
    checkCpuMs += checked.read().cpuMs;
    if (result.verdict.status !== 'pass') throw new Error(`the reference consumer did not pass a world of the counting pass: ${result.verdict.status}`);
    const n = countCalls(history);
    calls += n.calls;
    steps += n.steps;
    return true;
  });
  await fc.assert(property, { numRuns: runs, seed });
  return { executed: seen.size, calls, steps, runCpuMs, checkCpuMs };
}

/**
 * Why a check that should have passed did not: the verdict, its reason, and the command that
 * replays the world. A harness error in a bench row is a bug to report, not a number to skip.
 */
function whyNot(o: PropertyOutcome, target: string): string {
  const verdict = o.counterexample?.result.verdict;
  const reason = verdict === undefined ? '' : 'reason' in verdict ? `: ${String(verdict.reason)}` : `: ${verdict.anomalies.map((a) => a.kind).join(', ')}`;
  return `${o.status} after ${o.runs} worlds${reason}; replay: npx tidemark replay ${target} --seed ${o.seed} --path "${o.path ?? ''}"`;
}

interface ShrinkingArgs {
  readonly mutant: string;
  readonly seed: number;
  readonly rounds: number;
}

/** A failing consumer, found and shrunk as `tidemark check` does: every search, every shrink. */
async function shrinking(args: ShrinkingArgs): Promise<void> {
  const mutant = findMutant(args.mutant);
  if (!mutant) throw new Error(`no mutant named ${args.mutant}`);
  const heap = new HeapSampler();
  // Warm-up, untimed: the same check, sampling the live heap as it goes (the memo of verdicts included).
  const warm = await checkProperty(mutant.consumer, { runs: 1000, seed: args.seed, progress: sampling(heap, 500) });
  if (warm.status !== 'fail') throw new Error(`the mutant ${args.mutant} was not caught with seed ${args.seed}: ${warm.status}`);
  for (let round = 0; round < args.rounds; round++) {
    let worlds = 0;
    const run = await timed(() => checkProperty(mutant.consumer, { runs: 1000, seed: args.seed, progress: (n) => (worlds = n) }));
    const o = run.value;
    const found = o.counterexample;
    if (o.status !== 'fail' || found === null) throw new Error(`the mutant ${args.mutant} was not caught: ${o.status}`);
    say({
      type: 'round',
      round,
      ...run.cost,
      worlds,
      firstFailure: o.runs,
      searches: o.searches,
      shrinks: o.shrinks,
      events: found.plan.events.length,
      faults: found.plan.faults.length,
      anomalies: found.result.verdict.anomalies.map((a) => a.kind),
      replay: { seed: o.seed, path: o.path },
    });
  }
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: heap.max });
}

interface LargeArgs {
  readonly events: number;
  readonly rounds: number;
}

/** One calm world of many events through the reference consumer, with execute() as the CLI runs it. */
async function large(args: LargeArgs): Promise<void> {
  const consumer = referenceConsumer();
  await execute(largePlan(1000), consumer); // warm-up
  const plan = largePlan(args.events);
  let held: unknown = null;
  for (let round = 0; round < args.rounds; round++) {
    held = null;
    const run = await timed(() => execute(plan, consumer));
    if (run.value.result.verdict.status !== 'pass') throw new Error(`the reference consumer did not pass a calm world of ${args.events} events: ${run.value.result.verdict.status}`);
    say({ type: 'round', round, ...run.cost, events: args.events, ...countCalls(run.value.history) });
    held = run.value;
  }
  // Measured while the last execution (its history and verdict) is still held.
  const heapLiveMiB = liveHeapMiB();
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB, held: held !== null });
}

interface CheckerArgs {
  readonly steps: number;
  readonly mutationEvery: number | null;
  readonly rounds: number;
}

/**
 * The checker alone on a history written directly. Before any number is trusted, a copy of
 * the history with one effect taken out must fail: a checker that did not read it would
 * pass both.
 */
async function checker(args: CheckerArgs): Promise<void> {
  const built = await timed(() => syntheticHistory({ steps: args.steps, mutationEvery: args.mutationEvery }));
  const history = built.value;
  const shape = countCalls(history);
  const mutations = history.steps.filter((s) => s.kind === 'mutation').length;
  if (args.steps <= 10_000) {
    const broken = check(withoutOneEffect(history)).verdict.status;
    if (broken !== 'fail') throw new Error(`the checker judged a synthetic history with an effect missing ${broken}: the row would measure nothing`);
    check(history); // warm-up: only where a round is short enough for a cold start to matter
  }
  say({ type: 'progress', builtMs: built.cost.wallMs, ...shape, mutations, events: history.header.initial.length + mutations });
  let result: unknown = null;
  for (let round = 0; round < args.rounds; round++) {
    result = null;
    const run = await timed(() => check(history));
    if (run.value.verdict.status !== 'pass') throw new Error(`the checker did not pass the synthetic history: ${JSON.stringify(run.value.verdict).slice(0, 300)}`);
    say({ type: 'round', round, ...run.cost });
    result = run.value;
  }
  // Measured while the history and the last verdict are held.
  const heapLiveMiB = liveHeapMiB();
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB, held: result !== null && history.steps.length > 0 });
}

interface BridgeArgs {
  readonly worlds: number;
  readonly rounds: number;
  readonly seed: number;
}

/**
 * The process bridge: examples/node/consumer.mjs as a --command consumer, with the kills
 * `check --command` uses by default (sampled: session crashes in most worlds, real kills in
 * one in REAL_KILL_EVERY), against the very same ledger run in this process, over the same
 * worlds (same seed), interleaved. Their histories must have the same number of steps, or they were not
 * the same runs.
 */
async function bridge(args: BridgeArgs): Promise<void> {
  const command = `${JSON.stringify(process.execPath)} ${NODE_EXAMPLE}`;
  const outside = await processConsumer(command, { cwd: repoRoot(), kills: 'sampled' });
  const inside = await nodeExampleInProcess();
  const heap = new HeapSampler();
  // Warm-up, untimed, sampling the heap while process incarnations are alive.
  for (const consumer of [inside, outside]) {
    const warm = await checkProperty(consumer, { runs: 3, seed: args.seed + 1, progress: sampling(heap, 1) });
    if (warm.status !== 'pass') throw new Error(`${consumer.name} did not pass its warm-up worlds: ${whyNot(warm, `--command "node ${NODE_EXAMPLE}"`)}`);
  }
  // The floor: as many bare pipe round trips as the worlds make calls (see pipe-floor.ts).
  const pipe = await openPipe();
  const calls = await callSteps(inside, args.worlds, args.seed);
  for (let round = 0; round < args.rounds; round++) {
    const a = await timed(() => checkProperty(outside, { runs: args.worlds, seed: args.seed }));
    const b = await timed(() => checkProperty(inside, { runs: args.worlds, seed: args.seed }));
    const c = await timed(() => pipe.roundTrips(calls));
    for (const [who, o] of [['process', a.value], ['in process', b.value]] as const) {
      if (o.status !== 'pass') throw new Error(`the Node example consumer (${who}) did not pass: ${whyNot(o, `--command "node ${NODE_EXAMPLE}"`)}`);
    }
    if (a.value.calls !== b.value.calls) {
      throw new Error(`the same worlds recorded ${a.value.calls} steps through the bridge and ${b.value.calls} in process: the runs differ`);
    }
    say({
      type: 'round',
      round,
      process: { ...a.cost, worlds: args.worlds, steps: a.value.calls },
      inProcess: { ...b.cost, worlds: args.worlds, steps: b.value.calls },
      floor: { ...c.cost, worlds: args.worlds, roundTrips: calls },
    });
  }
  await pipe.close();
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: heap.max });
}

interface PendingArgs {
  readonly calls: number;
}

/**
 * One world in which a consumer has `calls` emits pending at once. The heap is looked at
 * while all of them are pending; the collection that takes is not counted in the time. A
 * progress line each second says how far it got, for when the run is stopped at its limit.
 */
async function pending(args: PendingArgs): Promise<void> {
  {
    const probe: PendingProbe = { issued: 0, answered: 0, heapWithAllPendingMiB: null };
    await execute(pendingPlan(1000), manyPendingConsumer(probe, () => {})); // warm-up
  }
  const probe: PendingProbe = { issued: 0, answered: 0, heapWithAllPendingMiB: null };
  let excluded: Cost = { wallMs: 0, cpuMs: 0 };
  const consumer = manyPendingConsumer(probe, () => {
    const clock = startClock();
    probe.heapWithAllPendingMiB = liveHeapMiB();
    excluded = clock.read();
  });
  const clock = startClock();
  const ticker = setInterval(() => {
    const cost = clock.read();
    say({ type: 'progress', ...cost, issued: probe.issued, answered: probe.answered, peakRssMiB: peakRssMiB(), heapWithAllPendingMiB: probe.heapWithAllPendingMiB });
  }, 1000);
  try {
    const execution = await execute(pendingPlan(args.calls), consumer);
    const cost = clock.read();
    const verdict = execution.result.verdict.status;
    if (verdict !== 'pass') throw new Error(`the many-pending consumer did not pass: ${JSON.stringify(execution.result.verdict).slice(0, 300)}`);
    say({ type: 'round', round: 0, wallMs: cost.wallMs - excluded.wallMs, cpuMs: cost.cpuMs - excluded.cpuMs, issued: probe.issued, answered: probe.answered, ...countCalls(execution.history) });
  } finally {
    clearInterval(ticker);
  }
  say({ type: 'done', peakRssMiB: peakRssMiB(), heapLiveMiB: probe.heapWithAllPendingMiB });
}

const JOBS: Record<JobName, (args: never) => Promise<void>> = {
  reference,
  shrinking,
  large,
  checker,
  bridge,
  pending,
  growth: (args: GrowthArgs) => growth(args, say),
  forks: (args: ForksArgs) => forks(args, say, peakRssMiB),
  examples: (args: ExamplesArgs) => examples(args, say, peakRssMiB),
};

const [name, json] = process.argv.slice(2);
const job = JOBS[name as JobName];
if (!job) {
  process.stderr.write(`job.js: unknown job ${name}; one of ${Object.keys(JOBS).join(', ')}\n`);
  process.exit(3);
}
try {
  await job(JSON.parse(json ?? '{}') as never);
  // Consumer processes of the bridge may still be reaped; nothing else keeps this process.
  process.exit(0);
} catch (error) {
  // The message says what went wrong and how to replay it; a stack would bury that.
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
