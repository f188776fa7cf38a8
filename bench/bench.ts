import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { checkProperty } from '../src/conformance.js';
import { referenceConsumer } from '../src/consumers/reference.js';
import { processConsumer } from '../src/process/bridge.js';

/**
 * Throughput of the harness against a yardstick measured in the same process: fast-check's
 * own asyncModelRun on a trivial model. Machines here are noisy, so the ratio is the
 * figure to compare across runs, not the absolute numbers.
 */
const WORLDS = Number(process.env.BENCH_WORLDS ?? 3000);
const SEED = 20261129;

async function harness(): Promise<{ worldsPerSecond: number; callsPerSecond: number; microsPerCall: number }> {
  const consumer = referenceConsumer();
  await checkProperty(consumer, { runs: 200, seed: SEED + 1 }); // warm-up
  const t0 = performance.now();
  const outcome = await checkProperty(consumer, { runs: WORLDS, seed: SEED });
  const seconds = (performance.now() - t0) / 1000;
  if (outcome.status !== 'pass') throw new Error(`the reference consumer did not pass: ${outcome.status}`);
  return { worldsPerSecond: WORLDS / seconds, callsPerSecond: outcome.calls / seconds, microsPerCall: (seconds * 1e6) / outcome.calls };
}

/** A counter behind an async API, checked by fast-check's model runner: the cheapest honest stateful test. */
async function yardstick(): Promise<{ microsPerCommand: number; commands: number }> {
  class Real {
    value = 0;
    async inc(): Promise<void> {
      this.value++;
    }
  }
  let commands = 0;
  class Inc implements fc.AsyncCommand<{ value: number }, Real> {
    check = () => true;
    async run(model: { value: number }, real: Real): Promise<void> {
      commands++;
      model.value++;
      await real.inc();
      if (real.value !== model.value) throw new Error('diverged');
    }
    toString = () => 'inc';
  }
  const property = fc.asyncProperty(fc.commands([fc.constant(new Inc())], { maxCommands: 100, size: 'max' }), (cmds) =>
    fc.asyncModelRun(() => ({ model: { value: 0 }, real: new Real() }), cmds),
  );
  await fc.assert(property, { numRuns: 200, seed: SEED }); // warm-up
  commands = 0;
  const t0 = performance.now();
  await fc.assert(property, { numRuns: 2000, seed: SEED });
  return { microsPerCommand: ((performance.now() - t0) * 1000) / commands, commands };
}

/** The process bridge: the example Node consumer over JSON lines, every incarnation a process. */
async function bridge(): Promise<{ callsPerSecond: number; worldsPerSecond: number; worlds: number }> {
  const consumer = await processConsumer('node examples/node/consumer.mjs');
  const worlds = Number(process.env.BENCH_PROCESS_WORLDS ?? 40);
  const t0 = performance.now();
  const outcome = await checkProperty(consumer, { runs: worlds, seed: SEED });
  const seconds = (performance.now() - t0) / 1000;
  if (outcome.status !== 'pass') throw new Error(`the Node example consumer did not pass: ${outcome.status}`);
  return { callsPerSecond: outcome.calls / seconds, worldsPerSecond: worlds / seconds, worlds };
}

const h = await harness();
const y = await yardstick();
const b = await bridge();
// What stays live once everything ran, after a full collection (npm run bench exposes gc),
// so the figure does not depend on when the collector last happened to run; and the peak.
globalThis.gc?.();
const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
const peakMiB = process.resourceUsage().maxRSS / 2 ** 10;
console.log(`tidemark bench (seed ${SEED}, ${WORLDS} worlds at default size, reference consumer)`);
console.log(`  worlds checked per second      ${h.worldsPerSecond.toFixed(0)}`);
console.log(`  world calls per second         ${h.callsPerSecond.toFixed(0)}`);
console.log(`  microseconds per world call    ${h.microsPerCall.toFixed(2)}`);
console.log(`  fast-check asyncModelRun, trivial model: ${y.microsPerCommand.toFixed(2)} microseconds per command (${y.commands} commands)`);
console.log(`  ratio, world call / model command: ${(h.microsPerCall / y.microsPerCommand).toFixed(2)}`);
console.log(`  process bridge (examples/node/consumer.mjs, ${b.worlds} worlds): ${b.callsPerSecond.toFixed(0)} world calls per second, ${b.worldsPerSecond.toFixed(1)} worlds per second`);
console.log(`  ratio, in-process / process bridge world calls per second: ${(h.callsPerSecond / b.callsPerSecond).toFixed(1)}`);
console.log(`  heap live after all            ${heapMiB.toFixed(1)} MiB${globalThis.gc ? '' : ' (not collected first: run with --expose-gc)'}`);
console.log(`  peak resident set              ${peakMiB.toFixed(1)} MiB`);
