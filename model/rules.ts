/**
 * The rules, declared once so that no rule can go missing without notice. Each carries the
 * seed procedure's wording and the "if this fails, check..." hint a failure prints.
 */
export const RULES = {
  R1: {
    title: 'one stable total order',
    text: 'One stable total order: the ordering tuple plus a unique, immutable event id. Ties never lose events.',
    hint: 'resume strictly after the full (ordering tuple, id) position, never after the ordering key alone.',
  },
  R2: {
    title: 'progress is bound',
    text: 'Progress is bound to (scope, filter, ordering, snapshot or upper bound). State from another binding never lets a consumer skip.',
    hint: 'store the binding fingerprint with the watermark and ignore progress whose binding differs.',
  },
  R3: {
    title: 'monotonic watermark',
    text: 'The committed watermark is persisted independently of any traversal cursor and never decreases.',
    hint: 'never write a watermark lower than the durable one; a retry may leave it unchanged, never lower it.',
  },
  R4: {
    title: 'replay is expected',
    text: 'Overlap and replay at or before the watermark are expected: deduplicate, never treat as regression.',
    hint: 'a replayed event must produce the same effect it produced the first time.',
  },
  R5: {
    title: 'effect coupled with completion',
    text: "Each event's effect is coupled with its completion record: one transaction, or a durable outbox for external effects.",
    hint: 'write the effect and its completion record in one transaction, and check the record before applying again.',
  },
  R6: {
    title: 'gap-free prefix, fenced',
    text: 'The watermark advances only through the greatest gap-free prefix of eligible events with durable outcomes, fenced by compare-and-set or a lease generation.',
    hint: 'advance the watermark only to the last event of the contiguous run of durably handled events, with a fenced write.',
  },
  R7: {
    title: 'failure holds the watermark',
    text: 'If event B fails after A commits, the watermark stays at A, and B is replayed.',
    hint: 'on a failed event, stop advancing: commit through the event before it and replay from there.',
  },
  R8: {
    title: 'a token is transport state',
    text: 'A next-page token is transport state. Persisted at all, it is only a replay anchor tied to the prior committed watermark.',
    hint: 'never store the next-page token as the watermark; store it, if at all, as an anchor next to the watermark it replays from.',
  },
  R9: {
    title: 'a page proves no progress',
    text: 'An empty, repeated or stale page proves no progress: continue only within the same bound, else restart from the anchor or fail visibly.',
    hint: 'do not infer the end of the stream or new progress from a page alone; only the absence of a next token ends it.',
  },
  R10: {
    title: 'holes need proof',
    text: 'A hole in positions is accepted only when the bound stream proves it holds no eligible event; a mutable source needs a snapshot, an insertion-stable boundary or a replay window, or the consumer fails visibly.',
    hint: "check the source's stability contract before trusting a hole; re-read the replay window or fail visibly.",
  },
} as const;

export type RuleId = keyof typeof RULES;

export const RULE_IDS = Object.keys(RULES) as RuleId[];
