import { filterAdmits } from '../model/binding.js';
import type { Contract } from '../model/history.js';
import type { Fault, MutationSpec, Plan } from './plan.js';
import type { SourceProfile } from './profiles.js';

/**
 * The adversity census: the kinds of adversity real sources show, which generated worlds
 * must reach in executed histories (src/selftest/adversity-census.ts reads them there), and
 * the combinations of them that generation aims for.
 *
 * - `tie-at-newest-key`: under `insertion-stable`, a new row at the newest row's key.
 * - `repeated-delivery-faults`: one event version's delivery failed at least twice.
 * - `lease-retake`: a worker took the lease back after another generation held it (A, B, A').
 * - `in-place-flip`, `moved-version`: a record changed, in place or at a new position.
 * - `newest-first-error`: in a newest-first read, a request below the newest page failed.
 * - `checkpoint-crash`: a crash at a checkpoint (a commit that writes the watermark).
 * - `between-checkpoints`: a crash after a checkpoint, with effects made since it: the
 *   records a consumer that checkpoints every N records has to replay.
 */
export const ADVERSITY = [
  'tie-at-newest-key',
  'repeated-delivery-faults',
  'lease-retake',
  'in-place-flip',
  'moved-version',
  'newest-first-error',
  'checkpoint-crash',
  'between-checkpoints',
] as const;
export type Adversity = (typeof ADVERSITY)[number];

/** A census cell: adversity that must all happen in one world; one item alone, or a combination. */
export type Cell = readonly Adversity[];

/**
 * The combinations: a lease retake with an event's delivery failing again and again (the
 * issue's rare interleaving), and each pair of the four kinds that stay apart in real runs:
 * that retake, a tie at the newest key, a newest-first error, a crash at or between
 * checkpoints. Every item alone is a cell too (see CELLS).
 */
const RETAKE: Cell = ['lease-retake', 'repeated-delivery-faults'];
const GROUPS: readonly (readonly Cell[])[] = [[RETAKE], [['tie-at-newest-key']], [['newest-first-error']], [['checkpoint-crash'], ['between-checkpoints']]];

function pairs(): Cell[] {
  const out: Cell[] = [RETAKE];
  for (const [i, a] of GROUPS.entries()) for (const b of GROUPS.slice(i + 1)) for (const x of a) for (const y of b) out.push([...x, ...y]);
  return out;
}

/** Every cell of the census, each item alone first, then the combinations. */
export const CELLS: readonly Cell[] = [...ADVERSITY.map((a): Cell => [a]), ...pairs()];

export function cellName(cell: Cell): string {
  return cell.join(' + ');
}

/** What decides which adversity a consumer's worlds can show at all. */
export interface Reachable {
  readonly profile?: SourceProfile;
  readonly contracts: readonly Contract['kind'][];
}

/** Whether worlds for this consumer can show the item; an item they never can is no gap in the census. */
export function reachable(item: Adversity, r: Reachable): boolean {
  const newestFirst = r.profile?.order === 'newest-first';
  const live = r.contracts.filter((c) => c !== 'snapshot');
  switch (item) {
    case 'newest-first-error':
      return newestFirst;
    case 'tie-at-newest-key':
      return r.contracts.includes('insertion-stable');
    case 'in-place-flip':
    case 'moved-version':
      return r.profile?.mutable !== false && live.some((c) => c === 'replay-window' || c === 'none');
    case 'checkpoint-crash':
    case 'between-checkpoints':
      // Under `none` no watermark is provable, so a correct consumer never checkpoints.
      return r.contracts.some((c) => c !== 'none');
    case 'repeated-delivery-faults':
    case 'lease-retake':
      return true;
  }
}

/** The cells a consumer's worlds can reach: every one of their items reachable. */
export function cellsFor(r: Reachable): Cell[] {
  return CELLS.filter((cell) => cell.every((item) => reachable(item, r)));
}

/** The drawn numbers an aimed world uses for what the aim adds. */
export interface AimDraw {
  /** Which event an event-bound addition names, modulo the eligible ones. */
  readonly event: number;
  /** Which checkpoint a checkpoint crash strikes (from 0). */
  readonly nth: number;
  /** How far into the run, in effects, a crash between checkpoints lands, modulo the stream. */
  readonly depth: number;
  /** crash-before (0) or crash-after (1). */
  readonly kind: number;
}

/** What an aimed world may change, with what it needs to know about the world. */
export interface AimContext {
  readonly eligible: readonly string[];
  readonly contracts: readonly Contract['kind'][];
}

/**
 * A plan bent towards one census cell: each item adds what makes it likely (the faults, the
 * change, the competing workers, the contract it needs) and takes nothing away, so the world
 * keeps all it had besides. Only what the consumer's contracts allow: an item it cannot
 * have is left out (cellsFor never aims at one).
 */
export function aim(plan: Plan, cell: Cell, draw: AimDraw, ctx: AimContext): Plan {
  let p = plan;
  const target = ctx.eligible.length === 0 ? undefined : ctx.eligible[draw.event % ctx.eligible.length];
  const live = (kind: 'insertion-stable' | 'replay-window'): Plan => {
    if (p.source.contract.kind === kind || !ctx.contracts.includes(kind)) return p;
    const contract: Contract = kind === 'replay-window' ? { kind, window: 4 } : { kind };
    return { ...p, binding: { ...p.binding, upTo: null }, source: { ...p.source, contract } };
  };
  // Under `none` nothing is provable and no correct consumer checkpoints.
  const provable = (): Plan => (p.source.contract.kind !== 'none' ? p : ctx.contracts.includes('insertion-stable') ? live('insertion-stable') : live('replay-window'));
  const change = (m: MutationSpec): void => {
    p = { ...p, mutations: [...p.mutations, m] };
  };
  const fault = (...f: Fault[]): void => {
    p = { ...p, faults: [...p.faults, ...f] };
  };
  const crash = draw.kind % 2 === 0 ? 'crash-before' : 'crash-after';
  /**
   * A newest-first read checkpoints once, at its end (before it, the watermark would cover
   * older events not read yet), and its caught-up claim right after ends the adversity
   * phase: a crash between checkpoints needs a second read within the phase, with work of
   * its own. So the first checkpoint takes effect and its worker dies before claiming; an
   * eligible row put in just before that checkpoint is newer than the watermark it writes,
   * so the next read has it to handle; and that read dies at its own checkpoint, with the
   * row's effect made and not yet covered. The source must gain rows the watermark does
   * not cover (a snapshot gains them only beyond its bound, and under `none` no correct
   * consumer checkpoints): insertion-stable when the consumer reads it, else a replay window.
   */
  const secondRead = (): void => {
    p = ctx.contracts.includes('insertion-stable') ? live('insertion-stable') : live('replay-window');
    // The world gives an inserted row the kind `order` for an even target, `refund` for an odd one.
    const target = filterAdmits(p.binding.filter, { kind: 'order' }) ? 0 : 1;
    change({ before: { call: 'checkpoint', nth: 0 }, kind: 'insert', target, back: 0 });
    fault({ call: 'checkpoint', nth: 0, kind: 'crash-after' });
    if (p.source.contract.kind === 'insertion-stable') fault({ call: 'checkpoint', nth: 1, kind: 'crash-before' });
    // In a replay window the row lands within it, so the second read settles nothing new and
    // writes no checkpoint: it dies at the commit after the row's effect, the one after every
    // eligible event's first, if nothing else made an effect first.
    else fault({ call: 'commit', nth: 0, since: ctx.eligible.length, kind: 'crash-before' });
  };
  const events = p.events.length;
  for (const item of cell) {
    switch (item) {
      case 'tie-at-newest-key':
        // Asked to land behind the head, a new row under insertion-stable ties with the newest key.
        p = live('insertion-stable');
        change({ before: { call: 'claim', nth: 0 }, kind: 'insert', target: 0, back: 1 });
        break;
      case 'in-place-flip':
        p = p.source.contract.kind === 'none' ? p : live('replay-window');
        change({ before: { call: 'claim', nth: 0 }, kind: 'flip', target: Math.max(0, events - 1), back: 0 });
        break;
      case 'moved-version':
        if (p.source.contract.kind !== 'none') p = live('replay-window');
        change({ before: { call: 'claim', nth: 0 }, kind: 'move', target: draw.event, back: 1 });
        break;
      case 'repeated-delivery-faults':
        if (target !== undefined) fault({ call: 'effect', nth: 0, kind: 'error', after: target }, { call: 'effect', nth: 1, kind: 'error', after: target });
        break;
      case 'lease-retake':
        // Three workers on a short lease: one pausing mid-page loses it and takes it back.
        p = { ...p, workers: Math.max(p.workers, 3), leaseTtlSteps: Math.min(p.leaseTtlSteps, 4) };
        break;
      case 'newest-first-error':
        // The second request of a read is the first below the newest page, when pages are small enough to need one.
        p = { ...p, source: { ...p.source, pageSize: Math.max(1, Math.min(p.source.pageSize, Math.floor(events / 3))) } };
        fault({ call: 'fetch', nth: 1, kind: 'error' });
        break;
      case 'checkpoint-crash':
        p = provable();
        fault({ call: 'checkpoint', nth: draw.nth, kind: crash });
        break;
      case 'between-checkpoints':
        if (p.source.order === 'newest-first') {
          secondRead();
          break;
        }
        p = provable();
        // Past the first page, so that a checkpoint came before; the commit after that effect.
        fault({ call: 'commit', nth: 0, since: p.source.pageSize + (draw.depth % Math.max(1, events - p.source.pageSize)), kind: 'crash-before' });
        break;
    }
  }
  return p;
}
