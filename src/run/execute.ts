import { createHash } from 'node:crypto';
import { check, type CheckResult } from '../../model/checker.js';
import type { History } from '../../model/history.js';
import type { Plan } from '../../scenarios/plan.js';
import { validatePlan } from '../../scenarios/validate.js';
import type { AnyConsumer } from '../adapter/consumer.js';
import { World } from '../world/world.js';

/** One executed world: the plan, what happened, and the model's verdict on it. */
export interface Execution {
  readonly plan: Plan;
  readonly history: History;
  /**
   * sha256 of the history's JSON: same seed, same history, byte for byte. Computed when first
   * read, from the history as it is then: tidemark never changes a history after its run, and
   * a caller that does changes the hash with it.
   */
  readonly hash: string;
  readonly result: CheckResult;
}

export async function execute(plan: Plan, consumer: AnyConsumer): Promise<Execution> {
  validatePlan(plan);
  const history = await new World(plan, consumer).run();
  // Most worlds pass, and a passing world's hash is read by nobody: it is computed when a
  // failure is shown or a replay compared, not for every world (it was a tenth of a world's CPU).
  // The getter is one for every execution, defined on it rather than written in a literal: a
  // literal's getter is a new function for every object, and such objects kept their world
  // alive through young-generation collections (see World.api).
  return Object.defineProperty({ plan, history, result: check(history) }, 'hash', HASH) as Execution;
}

/** Each execution's hash, once read. */
const hashes = new WeakMap<object, string>();

/** The hash of every execution: from its history as it is when first read, then remembered. */
const HASH: PropertyDescriptor = Object.freeze({
  get(this: { readonly history: History }): string {
    let hash = hashes.get(this);
    if (hash === undefined) {
      hash = hashHistory(this.history);
      hashes.set(this, hash);
    }
    return hash;
  },
  enumerable: true,
  configurable: true,
});

export function hashHistory(history: History): string {
  return createHash('sha256').update(JSON.stringify(history)).digest('hex');
}
