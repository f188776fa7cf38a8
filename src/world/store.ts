import { canonicalJson } from './order.js';
import { refKey, type EventRef } from '../../model/event.js';
import type { DurableState, StoreOp } from '../../model/history.js';
import { WorldError } from './errors.js';

/**
 * Durable state with transactions. A commit checks every guard (compare-and-set, fence,
 * unless-completed) before it writes anything, so it applies whole or not at all; a crash
 * before the commit takes effect therefore rolls it back. Blind watermark writes are
 * accepted as they are: the store does not save a consumer that forgets to fence.
 */
export class Store {
  private watermark: DurableState['watermark'] = null;
  private anchor: DurableState['anchor'] = null;
  private readonly completions = new Set<string>();
  /** Pending outbox entries by event version, in the order they were written. */
  private readonly outbox = new Map<string, { readonly event: EventRef; readonly payload: string }>();

  state(): DurableState {
    return { watermark: this.watermark, anchor: this.anchor, outbox: [...this.outbox.values()] };
  }

  completed(events: readonly EventRef[]): boolean[] {
    return events.map((e) => this.completions.has(refKey(e)));
  }

  /**
   * Validates the whole transaction, then applies it; throws a definite conflict naming the
   * guard that refused otherwise. With `noting`, returns whether it changed the store: a
   * completion record, watermark, anchor or outbox entry it did not hold before (effects and
   * dead letters are the world's to count: the store keeps neither); without, false, and
   * compares nothing.
   */
  commit(ops: readonly StoreOp[], fence: number | null, generation: number, noting = false): boolean {
    if (fence !== null && fence !== generation) {
      throw new WorldError('conflict', true, `fenced by generation ${fence}, but the newest lease is generation ${generation}`, { cause: 'fence' });
    }
    for (const op of ops) {
      if (op.op === 'unless-completed' && this.completions.has(refKey(op.event))) {
        throw new WorldError('conflict', true, `${refKey(op.event)} is already completed`, { cause: 'unless-completed' });
      }
      if (op.op === 'watermark' && 'expect' in op) {
        const current = this.watermark?.binding === op.binding ? this.watermark.value : null;
        if (!sameData(current ?? null, op.expect ?? null) && canonicalJson(current ?? null) !== canonicalJson(op.expect ?? null)) {
          throw new WorldError('conflict', true, 'the watermark changed since it was read', { cause: 'expect' });
        }
      }
    }
    let changed = false;
    for (const op of ops) {
      switch (op.op) {
        case 'effect':
          // The effect's content lives in the history; the store only has to make it durable
          // together with the rest of the transaction.
          break;
        case 'complete': {
          const key = refKey(op.event);
          if (!this.completions.has(key)) {
            this.completions.add(key);
            changed = true;
          }
          break;
        }
        case 'watermark': {
          const next = { binding: op.binding, value: op.value };
          changed ||= noting && canonicalJson(next) !== canonicalJson(this.watermark);
          this.watermark = next;
          break;
        }
        case 'anchor': {
          const next = { binding: op.binding, token: op.token, watermark: op.watermark };
          changed ||= noting && canonicalJson(next) !== canonicalJson(this.anchor);
          this.anchor = next;
          break;
        }
        case 'outbox': {
          const key = refKey(op.event);
          changed ||= noting && this.outbox.get(key)?.payload !== op.payload;
          this.outbox.set(key, { event: op.event, payload: op.payload });
          break;
        }
        case 'outbox-done':
          changed = this.outbox.delete(refKey(op.event)) || changed;
          break;
        case 'unless-completed':
          break;
      }
    }
    return noting && changed;
  }
}

/**
 * Whether two values are the same data field for field (same keys, in any order; equal
 * primitives), which makes their canonical JSON the same. It decides nothing alone: values
 * it calls different may still print the same (null against undefined, say), and those are
 * compared as canonical JSON. A compare-and-set that holds, the usual case, is then decided
 * without printing both sides.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  // An array prints every index up to its length, a hole included.
  if (Array.isArray(a) && a.length !== (b as unknown[]).length) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}
