import type { EventRef } from './event.js';
import type { RuleId } from './rules.js';

/**
 * The anomalies the checker reports. Each is judged from ground truth (what the source held
 * and whether each call took effect), never from what the consumer says about itself.
 *
 * omission: the consumer claimed it was caught up, yet an event eligible in the bound stream
 *   has not been handled. Every claim is judged, against every eligible event the source
 *   held unchanged for the claiming incarnation's whole life. Example: events 41 42 43, the
 *   effect for 42 fails, the consumer saved the next-page token as progress, restarted after
 *   it and claimed caught-up; 42 and 43 were never handled. Or, however the run ended, the
 *   store marks an eligible event done that was never handled: a completion record written
 *   before an effect that never came, an outbox entry taken out undelivered.
 *
 * premature-watermark: a watermark W was committed while an event eligible at that moment,
 *   ordered at or before W, had no durable outcome; or W passed a hole the source's contract
 *   does not prove: the source later put an eligible event behind W (an insert, a move or a
 *   flip its contract allows there), and when the run ended W still covered it and it had no
 *   durable outcome, whether the consumer then claimed caught-up, failed visibly or ran out
 *   of steps. Examples: commit(watermark 43) while 42 has no effect, as a consumer does that
 *   sets the watermark to the last event fetched; commit(watermark 43) on a source that
 *   promises nothing, 42 is inserted, the consumer fails visibly without reading it.
 *
 * watermark-regression: a committed watermark lower, in the total order of cut points, than
 *   the highest one committed before under the same binding, whether or not an eligible event
 *   lies between them. Example: commit(43) then, after a retry, commit(41); or 10, 5, 6:
 *   6 is below 10 too.
 *
 * stale-generation-commit: a watermark commit took effect from a worker whose lease
 *   generation is older than the newest one granted, unguarded by a compare-and-set against
 *   the watermark it overwrote. Example: w1 holds generation 1, w2 acquires generation 2 and
 *   commits 43, then w1 resumes and commits 42, blind or with a compare-and-set on a label
 *   nobody wrote. A blackbox consumer's store guards itself out of sight (an ownership-epoch
 *   column, say): its write is stale when it overwrote a watermark written from a newer
 *   generation, as w1's over w2's 43.
 *
 * token-as-watermark: the committed watermark is not a position of the bound order, or a restart resumed by a page token kept in durable state past an event without a durable outcome.
 *   Example: commit(watermark "q8Zx1c") where "q8Zx1c" is the opaque next-page token.
 *
 * binding-confusion: progress recorded under one binding let a consumer of another binding
 *   skip. Example: a worker bound to filter kind=refund loads the watermark that the
 *   kind=order worker wrote and resumes after it.
 *
 * phantom-effect: an effect for an event version the source never served under this
 *   binding. Example: an effect for 42 when the filter excluded 42.
 *
 * divergent-duplicate: an effect whose content differs from what the source served for that
 *   event version (the first or only effect too), or a repeated effect that differs from the
 *   first one. Content is the payload, and the key when an effect carries one. Example:
 *   effects for 42 with payloads "a" and "b" when only "a" was served; a single effect for 42
 *   with payload "b"; a record of 42 whose cursor value says key 99, where 42 was served at 42.
 *
 * duplicate-effect: more than one effect for one event version from a consumer that claims
 *   exactly-once. Example: crash after commit(effect 42), replay, commit(effect 42) again.
 *
 * liveness: with faults off and a provable source, the consumer neither caught up within
 *   its step budget nor had a reason to fail visibly. Example: a consumer that retries a
 *   poison event forever. A stale page is a reason (R9: restart from the replay anchor or
 *   fail visibly): the failing incarnation's last page request answered stale-token, for a
 *   token it came by honestly (model/checks/stale-reasons.ts).
 */
/**
 * Declared in the order failures are told: the most specific diagnosis first, so that the
 * headline of a failure names the cause (a token stored as the watermark) rather than the
 * symptom it led to (an omission).
 */
export const ANOMALIES = {
  'token-as-watermark': {
    rules: ['R8'],
    means: 'the committed watermark is not a position of the bound order, or a restart resumed by a page token kept in durable state past an event without a durable outcome',
  },
  'stale-generation-commit': {
    rules: ['R6'],
    means: 'a watermark commit took effect from a generation older than the newest lease, unguarded by a compare-and-set against the watermark it overwrote (a blackbox store\'s guard cannot be seen: its write is stale when it overwrote a newer generation\'s watermark)',
  },
  'binding-confusion': {
    rules: ['R2'],
    means: 'progress recorded under one binding let a consumer of another binding skip',
  },
  'watermark-regression': {
    rules: ['R3'],
    means: 'a committed watermark is lower than the highest one committed before under the same binding',
  },
  'premature-watermark': {
    // R10 too: passing a hole the source's contract does not prove is advancing too early.
    rules: ['R6', 'R7', 'R8', 'R9', 'R10'],
    means: 'a watermark was committed past an eligible event that had no durable outcome, or past a hole where the source later put one that never got an outcome',
  },
  'phantom-effect': {
    rules: ['R2', 'R10'],
    means: 'an effect for an event the source never served under this binding',
  },
  'divergent-duplicate': {
    rules: ['R4'],
    means: 'an effect differs from what the source served for that event version, or a repeat from the first effect',
  },
  'duplicate-effect': {
    rules: ['R5'],
    means: 'more than one effect for one event, where the consumer claims exactly-once',
  },
  omission: {
    // Beyond the design's R6 R7 R8 R10: ties lost at a page boundary (R1), a page taken as
    // the end (R9) and a completion record written without its effect (R5) all end here.
    rules: ['R6', 'R8', 'R10', 'R7', 'R1', 'R9', 'R5'],
    means: 'an eligible event was never handled, yet the consumer claims it is caught up, or its store marks it done',
  },
  liveness: {
    rules: ['R9', 'R10'],
    means: 'with faults off and a provable source, the consumer neither caught up nor had a reason to fail visibly',
  },
} as const satisfies Record<string, { rules: readonly RuleId[]; means: string }>;

export type AnomalyKind = keyof typeof ANOMALIES;

export const ANOMALY_KINDS = Object.keys(ANOMALIES) as AnomalyKind[];

/** One finding, with the smallest witness that shows it. */
/** Each anomaly's rules, most likely cause first; a failure prints hints for the first few. */
export interface Anomaly {
  readonly kind: AnomalyKind;
  readonly rules: readonly RuleId[];
  /** One line, in the terms of this run: which event, which watermark, which step. */
  readonly explanation: string;
  readonly events: readonly EventRef[];
  /** History step numbers (seq) that make up the witness. */
  readonly steps: readonly number[];
}

export function anomaly(
  kind: AnomalyKind,
  explanation: string,
  events: readonly EventRef[],
  steps: readonly number[],
): Anomaly {
  return { kind, rules: ANOMALIES[kind].rules, explanation, events, steps };
}
