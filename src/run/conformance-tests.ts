import { ALL_SCENARIOS } from '../../scenarios/named.js';
import { ANOMALY_KINDS } from '../../model/anomalies.js';
import { CheckTally, checkProperty, onlyLiveness, scenarioPlan, whyNot } from './conformance.js';
import { missedAdversity } from './exercised.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { execute } from './execute.js';
import { processConsumer, type ProcessOptions } from '../adapter/process/bridge.js';
import { renderFailure } from '../report/failure.js';
import { seedFlag } from '../report/replay-command.js';

/** A consumer in any language, as `tidemark check --command` starts it (docs/protocol.md). */
export interface ProcessTarget extends ProcessOptions {
  /** The command line, run by the shell, e.g. `python3 my_consumer.py`. */
  readonly command: string;
}

export interface CaseOptions {
  /** Generated worlds (default 200). */
  readonly runs?: number;
  /** fast-check seed; a fresh one by default, printed with any failure. */
  readonly seed?: number;
  /** How replay commands name this consumer; default `--command '...'` for a process. */
  readonly replayFlag?: string;
}

/** One test of the conformance suite, for any test runner to register. */
export interface ConformanceCase {
  readonly name: string;
  /** Why it does not apply to this consumer; such a case is registered as skipped. */
  readonly skipped: string | null;
  /** Milliseconds it may take; undefined: the runner's default. */
  readonly timeoutMs?: number;
  /** Runs it: null on a pass, else the failure text (rule, timeline, replay command), or why it tested nothing. */
  readonly run: () => Promise<CaseResult>;
}

/** A case that ran: passed (null), failed with the failure text, or untested with the reason. */
export type CaseResult = null | { readonly failure: string } | { readonly untested: string };

/**
 * A scenario or the world search for a process consumer starts a process per incarnation,
 * and an interpreter's start-up (tens to hundreds of milliseconds) dominates: a scenario
 * may take seconds where in-process it takes milliseconds.
 */
const PROCESS_SCENARIO_MS = 60_000;
const WORLDS_MS = 600_000;

export function isProcessTarget(target: AnyConsumer | ProcessTarget): target is ProcessTarget {
  return typeof (target as Partial<ProcessTarget>).command === 'string';
}

/** Starts a process target once, to read its hello, as `tidemark check --command` does. */
export async function resolveTarget(target: AnyConsumer | ProcessTarget): Promise<AnyConsumer> {
  if (!isProcessTarget(target)) return target;
  const { command, ...options } = target;
  return processConsumer(command, options);
}

/** The flag a replay command names a target with, unless the caller says otherwise. */
export function defaultReplayFlag(target: AnyConsumer | ProcessTarget): string {
  return isProcessTarget(target) ? `--command ${shellQuote(target.command)}` : '--adapter <your adapter module>';
}

/**
 * The conformance suite as test cases: one per named scenario, named with its rule ids, one
 * for the generated worlds, and one per check of the model, judged over all of them. A case
 * whose adversity never fired, or a check no world exercised, is untested: skipped at run
 * time with the reason, never passed.
 */
export function conformanceCases(consumer: AnyConsumer, options: CaseOptions & { readonly process?: boolean } = {}): ConformanceCase[] {
  const flag = options.replayFlag ?? '--adapter <your adapter module>';
  const cases: ConformanceCase[] = [];
  const tally = new CheckTally();
  for (const scenario of ALL_SCENARIOS) {
    cases.push({
      name: `${scenario.rules.join(' ')} ${scenario.name}`,
      skipped: whyNot(consumer, scenario),
      ...(options.process ? { timeoutMs: PROCESS_SCENARIO_MS } : {}),
      run: async () => {
        const plan = scenarioPlan(consumer, scenario);
        const execution = await execute(plan, consumer);
        tally.add(execution.result);
        if (execution.result.verdict.status !== 'pass') return { failure: renderFailure({ consumer: consumer.name, execution, replay: `npx tidemark replay ${flag} --scenario ${scenario.name}` }) };
        // Nothing broke, but the adversity the scenario exists for never fired: no pass.
        const missed = missedAdversity(plan, execution.history);
        return missed.length > 0 ? { untested: missed.join('; ') } : null;
      },
    });
  }
  cases.push({
    name: 'R1-R10 generated worlds',
    skipped: null,
    timeoutMs: WORLDS_MS,
    run: async () => {
      const seed = options.seed ?? Math.floor(Math.random() * 0x7fffffff);
      // One search for a process, as `check --command` does: each extra search costs as
      // many process starts as the first.
      const outcome = await checkProperty(consumer, { runs: options.runs ?? 200, seed, tally, ...(options.process ? { searches: 1 } : {}) });
      if (!outcome.counterexample) {
        // As check says unknown of it (exit 2): a consumer seen only to fail visibly passed
        // nothing here. A test runner has no unknown, and a skip leaves the suite green, so
        // the case fails with the reason, as JUnit adds an error case for such a run.
        const why = onlyLiveness(tally.summary());
        return why === null ? null : { failure: `not a pass: ${why}` };
      }
      return {
        failure: renderFailure({
          consumer: consumer.name,
          execution: outcome.counterexample,
          replay: `npx tidemark replay ${flag} ${seedFlag(outcome.seed)} --path "${outcome.path}"`,
          provenance: `minimal world, found after ${outcome.runs} worlds; the smallest of ${outcome.searches} shrunk failures`,
        }),
      };
    },
  });
  // Registered last and run in order, so every world of the suite has been judged by then: a
  // check fails when its anomaly was found, and is untested when no world exercised it.
  for (const [i, anomaly] of ANOMALY_KINDS.entries()) {
    cases.push({
      name: `check ${anomaly}`,
      skipped: null,
      run: async () => {
        const c = tally.summary()[i];
        if (c?.status === 'fail') return { failure: `${anomaly} was found in this suite; see the failing test above` };
        return c?.status === 'untested' ? { untested: c.reason ?? 'no world exercised it' } : null;
      },
    });
  }
  return cases;
}

/** Quotes a value for a POSIX shell, so a printed replay command can be pasted as it is (as the CLI does). */
function shellQuote(value: string): string {
  return /^[\w./:=@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
