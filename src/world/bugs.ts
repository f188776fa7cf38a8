/**
 * A seam for tidemark's own tests, and nothing else: it makes the world lie about what it did,
 * in one of the ways a bug in the world could, so that a test can show the oracle catches
 * it from ground truth and reports a harness error (exit 4) rather than blaming the consumer.
 *
 * - `page`: a served event's payload differs from what the source holds.
 * - `applied`: a commit that took effect is recorded as not applied.
 * - `lease`: a lease grant is recorded one generation higher than granted.
 * - `contract`: a change to the source is recorded at the very front of the order,
 *   behind everything, whatever the contract promises.
 */
export type WorldBug = 'page' | 'applied' | 'lease' | 'contract';
export const WORLD_BUGS: readonly WorldBug[] = ['page', 'applied', 'lease', 'contract'];

let injected: WorldBug | null = null;

/** Injects a bug into every world created from now on; null removes it. For tests only. */
export function injectWorldBug(bug: WorldBug | null): void {
  injected = bug;
}

export function worldBug(): WorldBug | null {
  return injected;
}
