/**
 * tidemark: a conformance harness for consumers of paginated event streams.
 *
 * Point it at your consumer through an adapter: a whitebox `Consumer` keeps its durable
 * state in the harness's store; a `BlackboxConsumer` keeps its own and lets the harness
 * inspect it. Run the suite with `tidemark check --adapter ./my-adapter.ts`, or from your
 * own vitest file with `registerConformance` from `tidemark/vitest`. docs/adapters.md has
 * a complete example.
 */
export type { AnyConsumer, BlackboxConsumer, Capabilities, Consumer, Inspection, WorkerWorld } from './adapter/consumer.js';
export type { Binding, Filter } from '../model/binding.js';
export type { EventRef, SourceEvent } from '../model/event.js';
export type { Contract, Delivery, DurableState, FetchRequest, Page, Resume, ResumeStyle, StoreOp } from '../model/history.js';
export type { Position } from '../model/order.js';
// For histories recorded elsewhere: validate one, then judge it as tidemark judges its own worlds.
export type { Actor, Call, CallResult, CallStep, FaultLabel, History, HistoryHeader, LifeStep, MutationStep, ObservedStep, Outcome, RebindStep, Step } from '../model/history.js';
export { check, type CheckResult, type CheckStats, type Verdict, type WorldProblem } from '../model/checker.js';
export { parseHistory, HistoryError, type HistoryProblem } from '../model/parse-history.js';
export type { Anomaly, AnomalyKind } from '../model/anomalies.js';
export { comparePositions, isPosition } from '../model/order.js';
export { WorldError, type WorldErrorCode } from './world/errors.js';
export { referenceConsumer, type ReferenceOptions } from './selftest/reference.js';
export { MUTANTS, type Mutant } from './selftest/mutants.js';
export { runSuite, type SuiteResult, type SuiteOptions } from './run/suite.js';
export { checkProperty, checkScenarios, type PropertyOutcome, type ScenarioOutcome } from './run/conformance.js';
export { execute, type Execution } from './run/execute.js';
export { renderFailure } from './report/failure.js';
export { loadAdapter, AdapterLoadError } from './adapter/load.js';
export {
  processConsumer,
  killAllConsumers,
  CrashLoopError,
  CRASH_LOOP_LIMIT,
  PROTOCOL,
  type ProcessConsumerOptions,
  type ProcessOptions,
  type Hello,
} from './adapter/process/bridge.js';
export { protocolProblem, protocolSchema } from './adapter/process/schema.js';
export { AdapterError, ConsumerUnrunnableError } from './adapter/errors.js';
export { ALL_SCENARIOS, type NamedScenario } from '../scenarios/named.js';
export { PROFILES, type SourceProfile } from '../scenarios/profiles.js';
export type { ConflictCause } from './world/errors.js';
