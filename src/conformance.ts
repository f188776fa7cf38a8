import fc from 'fast-check';
import { planArb, type PlanOptions } from '../scenarios/arbitraries.js';
import { ALL_SCENARIOS, type NamedScenario } from '../scenarios/named.js';
import { ANOMALY_KINDS, type AnomalyKind } from '../model/anomalies.js';
import type { AnyConsumer } from './consumer.js';
import { execute, type Execution } from './execute.js';

/** The suite's verdict: `unknown` when some world could not be judged, never `pass`. */
export type SuiteStatus = 'pass' | 'fail' | 'unknown';

export interface PropertyOutcome {
  readonly status: SuiteStatus;
  /** Worlds executed before the verdict (the failing one included). */
  readonly runs: number;
  readonly seed: number;
  /** fast-check's replay path of the counterexample. */
  readonly path: string | null;
  readonly shrinks: number;
  /** The minimal failing world, executed; null on pass. */
  readonly counterexample: Execution | null;
  /** World calls made across all executed worlds, for throughput figures. */
  readonly calls: number;
}

export interface PropertyOptions {
  readonly runs?: number;
  readonly seed: number;
  /** With a path, replays exactly that counterexample and stops there. */
  readonly path?: string;
  /** World size, budget and forced fault families; a replay must pass the same ones. */
  readonly worlds?: PlanOptions;
  /** Told the number of worlds executed so far, shrinking included. */
  readonly progress?: (worlds: number) => void;
}

/**
 * Runs the consumer over generated worlds. A world whose verdict is not `pass` fails the
 * property, so fast-check shrinks it; the last failing execution is the minimal one.
 */
export async function checkProperty(consumer: AnyConsumer, options: PropertyOptions): Promise<PropertyOutcome> {
  let last: Execution | null = null;
  let calls = 0;
  const contracts = consumer.capabilities.contracts;
  let worlds = 0;
  const property = fc.asyncProperty(planArb({ ...options.worlds, ...(contracts ? { contracts } : {}) }), async (plan) => {
    const run = await execute(plan, consumer);
    calls += run.history.steps.length;
    options.progress?.(++worlds);
    if (run.result.verdict.status === 'pass') return true;
    last = run;
    return false;
  });
  const details = await fc.check(property, {
    numRuns: options.runs ?? 1000,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path, endOnFailure: true }),
  });
  const found = last as Execution | null;
  // A failure with no failing execution means the harness itself threw: never a verdict.
  if (details.failed && found === null) throw details.errorInstance;
  if (!details.failed || found === null) {
    return { status: 'pass', runs: details.numRuns, seed: details.seed, path: null, shrinks: 0, counterexample: null, calls };
  }
  return {
    status: found.result.verdict.status === 'unknown' ? 'unknown' : 'fail',
    runs: details.numRuns,
    seed: details.seed,
    path: details.counterexamplePath,
    shrinks: details.numShrinks,
    counterexample: found,
    calls,
  };
}

export type ScenarioOutcome =
  | { readonly scenario: NamedScenario; readonly execution: Execution; readonly skipped?: undefined }
  | { readonly scenario: NamedScenario; readonly execution?: undefined; readonly skipped: string };

/**
 * Runs every named scenario once: they are deterministic, one run each is the whole test.
 * A scenario whose source contract the consumer does not support is skipped, with the reason.
 */
export async function checkScenarios(consumer: AnyConsumer, scenarios = ALL_SCENARIOS): Promise<ScenarioOutcome[]> {
  const out: ScenarioOutcome[] = [];
  for (const scenario of scenarios) {
    const skipped = whyNot(consumer, scenario);
    out.push(skipped === null ? { scenario, execution: await execute(scenario.plan, consumer) } : { scenario, skipped });
  }
  return out;
}

export function whyNot(consumer: AnyConsumer, scenario: NamedScenario): string | null {
  const supported = consumer.capabilities.contracts;
  const kind = scenario.plan.source.contract.kind;
  return supported === undefined || supported.includes(kind) ? null : `the consumer does not support ${kind} sources`;
}

/** Each check of the model, and whether it applies to this consumer; one that does not is skipped, never passed. */
export function applicableChecks(consumer: AnyConsumer): { readonly anomaly: AnomalyKind; readonly skipped: string | null }[] {
  return ANOMALY_KINDS.map((anomaly) => ({
    anomaly,
    skipped: anomaly === 'duplicate-effect' && consumer.capabilities.delivery !== 'exactly-once' ? 'the consumer claims at-least-once delivery, so duplicates are allowed' : null,
  }));
}
