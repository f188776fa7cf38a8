import { canonicalJson } from './binding.js';
import { refKey, type EventRef } from './event.js';
import type { DurableState, StoreOp } from './api.js';

/**
 * The harness's store, as ground truth replays it: written from the rule the documents
 * state, not from the world's code, so that a misreading of the rule on either side shows as
 * a disagreement (test/model/store-replica.test.ts holds the two together over generated
 * transactions).
 *
 * The rule, docs/design.md ("The world"): "Store: durable state with transactions and
 * guards: the watermark per binding (with an optional compare-and-set `expect`), completion
 * records, the replay anchor, transactional effects, an outbox, dead letters, and the lease
 * `fence`. A commit applies whole or not at all [...] Blind writes are possible too"; and
 * "the store answers `null` for a binding label nobody wrote". Every effect for a poison
 * event "is refused (`rejected`)". docs/adapters.md ("The store"): "Every guard is checked
 * before anything is written"; "When one commit trips several guards, the cause is the first
 * that refused: the fence is checked before any operation, then the operations in their
 * order"; `fence: generation` applies "only if `generation` is still the newest lease
 * generation granted".
 *
 * The store keeps one watermark: a write under a binding label replaces whatever was stored,
 * under any label, and `load` shows the label with the value, which is how a consumer tells
 * progress of another binding from its own.
 */

/** Why a commit was refused: `rejected` (a poison event's effect), or the guard that made it a `conflict`. */
export type Refusal = 'rejected' | 'fence' | 'expect' | 'unless-completed';

/** The stored watermark, with the fingerprint of the binding its writer read under (who wrote it, for the checkers). */
export interface StoredWatermark {
  readonly binding: string;
  readonly value: unknown;
  readonly writer: string;
}

type Entry = { readonly event: EventRef; readonly payload: string };

/**
 * Where the store keeps its completion records, one flag per event version. Ground truth
 * keeps everything it knows of a version in one record, found by one lookup, and the store's
 * completion records live there; a store replayed alone keeps its own (`ownCompletions`).
 */
export interface CompletionRecords {
  has(ref: EventRef): boolean;
  add(ref: EventRef): void;
}

/** Completion records of its own: per event id, the versions recorded (one almost always, kept as that number). */
export function ownCompletions(): CompletionRecords {
  const held = new Map<string, number | Set<number>>();
  return {
    has(ref) {
      const h = held.get(ref.id);
      return h === undefined ? false : typeof h === 'number' ? h === ref.version : h.has(ref.version);
    },
    add(ref) {
      const h = held.get(ref.id);
      if (h === undefined) held.set(ref.id, ref.version);
      else if (typeof h === 'number') {
        if (h !== ref.version) held.set(ref.id, new Set([h, ref.version]));
      } else h.add(ref.version);
    },
  };
}

export class StoreReplica {
  private stored: StoredWatermark | null = null;
  private anchor: DurableState['anchor'] = null;
  /** Outbox entries not yet marked delivered, by event version, oldest first. */
  private readonly outbox = new Map<string, Entry>();

  constructor(private readonly completions: CompletionRecords = ownCompletions()) {}

  /** The stored watermark, or null while nothing was written. */
  get watermark(): StoredWatermark | null {
    return this.stored;
  }

  /** What `load` answers. */
  state(): DurableState {
    return { watermark: this.stored && { binding: this.stored.binding, value: this.stored.value }, anchor: this.anchor, outbox: [...this.outbox.values()] };
  }

  /** Whether the event version has a completion record: what `completed` answers for it. */
  isCompleted(ref: EventRef): boolean {
    return this.completions.has(ref);
  }

  /** Whether the event version has an outbox entry not yet marked delivered. */
  inOutbox(ref: EventRef): boolean {
    return this.outbox.has(refKey(ref));
  }

  /**
   * Why the store refuses this transaction, or null when it applies: every guard read against
   * the store as it is, before anything is written. `newest` is the newest lease generation
   * granted; `poison` says which events the world refuses.
   */
  refusal(ops: readonly StoreOp[], fence: number | null, newest: number, poison: ReadonlySet<string>): Refusal | null {
    for (const op of ops) if ((op.op === 'effect' || op.op === 'outbox') && poison.has(op.event.id)) return 'rejected';
    if (fence !== null && fence !== newest) return 'fence';
    for (const op of ops) {
      if (op.op === 'unless-completed' && this.isCompleted(op.event)) return 'unless-completed';
      if (op.op === 'watermark' && 'expect' in op && !sameJson(this.valueUnder(op.binding), op.expect ?? null)) return 'expect';
    }
    return null;
  }

  /** The watermark stored under this binding label: null for a label nobody wrote. */
  private valueUnder(binding: string): unknown {
    return this.stored !== null && this.stored.binding === binding ? (this.stored.value ?? null) : null;
  }

  /** Applies a transaction whose guards held, whole; `writer` is the fingerprint of the binding the writing worker read under. */
  apply(ops: readonly StoreOp[], writer: string): void {
    for (const op of ops) {
      switch (op.op) {
        case 'complete':
          this.completions.add(op.event);
          break;
        case 'watermark':
          this.stored = { binding: op.binding, value: op.value, writer };
          break;
        case 'anchor':
          this.anchor = { binding: op.binding, token: op.token, watermark: op.watermark };
          break;
        case 'outbox':
          this.outbox.set(refKey(op.event), { event: op.event, payload: op.payload });
          break;
        case 'outbox-done':
          this.outbox.delete(refKey(op.event));
          break;
        // An effect is durable by being in the applied transaction; a dead letter parks its
        // event for a person; a guard writes nothing. What each means for outcomes is ground
        // truth's accounting, not the store's.
        case 'effect':
        case 'dead-letter':
        case 'unless-completed':
          break;
      }
    }
  }
}

/**
 * Equal as JSON values, whatever the order of their keys. The common case, the same plain
 * data with keys in the same order, is decided by walking both (see sameData), with no JSON
 * printed: a load compared its state by printing both sides, a tenth of the checker's time.
 * Anything else is decided by their JSON, as it always was.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || sameData(a, b) || JSON.stringify(a) === JSON.stringify(b) || canonicalJson(a) === canonicalJson(b);
}

/**
 * True only when both print as the same JSON: the same primitives, arrays of the same
 * length, plain objects with the same keys in the same order. False when unsure (another
 * key order, a class instance, a toJSON, a BigInt): the caller then compares their JSON.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'bigint';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !plain(a) || !plain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string;
    if (k !== kb[i] || !sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

function plain(o: object): boolean {
  const proto: unknown = Object.getPrototypeOf(o);
  return (proto === Object.prototype || proto === null) && typeof (o as { toJSON?: unknown }).toJSON !== 'function';
}
