import type { History } from '../../model/history.js';
import type { Execution } from '../run/execute.js';

/** The size of a counterexample: its events, its adversity (faults, mutations, a rebind) and its history steps. */
export interface ShrunkSize {
  readonly events: number;
  readonly faults: number;
  readonly steps: number;
}

/**
 * The adversity that happened in a run: faults and quirks that fired, source mutations,
 * rebinds. Planned faults that never fired are not part of the story the timeline tells.
 */
export function adversityOf(history: History): number {
  return history.steps.filter((s) => (s.kind === 'call' && s.fault !== undefined) || s.kind === 'mutation' || s.kind === 'rebind').length;
}

export function sizeOf(execution: Execution): ShrunkSize {
  return { events: execution.plan.events.length, faults: adversityOf(execution.history), steps: execution.history.steps.length };
}

/**
 * Whether `a` is the smaller counterexample to read: fewer events and faults together; then
 * the calmer one, with fewer faults (a change to the source can stand in for an initial
 * event, and two inserted events read harder than two that were there from the start);
 * then fewer steps.
 */
export function isSmaller(a: ShrunkSize, b: ShrunkSize): boolean {
  const x = a.events + a.faults;
  const y = b.events + b.faults;
  if (x !== y) return x < y;
  return a.faults !== b.faults ? a.faults < b.faults : a.steps < b.steps;
}
