import { anomaly, type Anomaly, type AnomalyKind } from '../anomalies.js';
import { canonicalJson } from '../binding.js';
import { covers, formatCut, readCut, type Cut } from '../cut.js';
import { formatRef, positionOf, refKey, type EventRef, type SourceEvent } from '../event.js';
import type { CallStep, Resume, Step } from '../history.js';
import { compareKeys, isPosition } from '../order.js';
import { actorKey, type Facts, type Truth } from '../truth.js';
import type { Checker } from './checker.js';

interface Foreign {
  readonly cut: Cut;
  readonly value: string;
  readonly seq: number;
  readonly actor: string;
  /** Where the consumer showed it used this watermark: resumed from it, committed from it, or skipped behind it. */
  used: number | null;
  /** Event versions served to the loading incarnation that this watermark covers. */
  readonly behind: Set<string>;
  /** Whether that incarnation tried to handle, or asked the completion records about, any event this watermark covers. */
  triedBehind: boolean;
  /** Whether that incarnation has fetched since: only its first fetch resumes from durable state. */
  fetched: boolean;
}

/**
 * Binding confusion (R2): progress recorded under one binding let a consumer of another
 * binding skip. Loading another binding's watermark is not enough to blame it: the consumer
 * must have used it, resuming from it or committing from it. An event skipped behind a
 * watermark the consumer loaded and ignored was lost for another reason, and that reason
 * leads. This checker explains what the others found at the same step: a premature
 * watermark's gap, or an omitted event.
 */
export class BindingChecker implements Checker {
  readonly kinds: readonly AnomalyKind[] = ['binding-confusion'];
  readonly anomalies: Anomaly[] = [];
  private foreign: Foreign[] = [];
  /** How many of them were not used yet: only those are followed from call to call. */
  private unused = 0;
  private rebinds = 0;
  /** Watermarks written under another binding that a load handed the consumer: without one, no confusion could happen. */
  private loaded = 0;

  visit(step: Step, facts: Facts, truth: Truth, found: readonly Anomaly[]): void {
    if (step.kind === 'rebind') {
      this.rebinds++;
      this.foreign = [];
      this.unused = 0;
      return;
    }
    if (step.kind !== 'call') return;
    // Nothing foreign loaded now, none loaded before still unused, and nothing found: the
    // common step costs nothing here, after a rebind too.
    if (facts.foreign === null && this.unused === 0 && found.length === 0) return;
    const who = actorKey(step.actor);
    const arity = truth.binding.ordering.length;
    if (facts.foreign !== null && step.outcome.kind === 'ok') {
      const reading = readCut(facts.foreign.value, arity);
      this.loaded++;
      if ('cut' in reading) {
        this.foreign.push({ cut: reading.cut, value: canonicalJson(facts.foreign.value), seq: step.seq, actor: who, used: null, behind: new Set(), triedBehind: false, fetched: false });
        this.unused++;
      }
    }
    const mine = this.foreign.filter((f) => f.actor === who && f.used === null);
    if (mine.length > 0) {
      const { call } = step;
      const from = call.kind === 'fetch' ? resumeCut(call.request.resume, arity) : null;
      const expects = call.kind === 'commit' ? call.ops.flatMap((op) => (op.op === 'watermark' && 'expect' in op ? [canonicalJson(op.expect ?? null)] : [])) : [];
      // Asking the completion records about an event is considering it: skipping it because it
      // is done is deduplication, not the foreign watermark at work.
      const asked = call.kind === 'completed' ? call.events : [];
      const tried = [...attempts(step), ...asked].flatMap((r) => truth.event(r.id) ?? []);
      const page = call.kind === 'fetch' && step.outcome.kind === 'ok' && step.result?.kind === 'page' ? step.result.page.events : [];
      const claims = call.kind === 'claim' && call.claim.kind === 'caught-up';
      for (const f of mine) {
        for (const e of page) if (covers(f.cut, positionOf(e))) f.behind.add(refKey(e));
        if (tried.some((e) => covers(f.cut, positionOf(e)))) f.triedBehind = true;
        // Skipped behind it: served events the watermark covers, not one of them even tried,
        // and yet the incarnation moved on past them (an effect beyond) or claimed it was done.
        // A consumer that ignored the watermark tries what it covers, and loses events, if at
        // all, through a mistake of its own, which then leads.
        const beyond = tried.some((e) => !covers(f.cut, positionOf(e)));
        const skipped = f.behind.size > 0 && !f.triedBehind && (beyond || claims);
        // Only the first fetch after the load resumes from durable state; later ones continue
        // the live traversal, wherever it has got to.
        const resumed = !f.fetched && from !== null && compareKeys(from.key, f.cut.key) >= 0;
        if (call.kind === 'fetch') f.fetched = true;
        if (resumed || expects.includes(f.value) || skipped) {
          f.used = step.seq;
          this.unused--;
        }
      }
    }
    for (const a of found) {
      const ref = a.events[0];
      const e = ref && truth.event(ref.id);
      if (!e || e.version !== ref?.version) continue;
      if (a.kind === 'premature-watermark') this.blame(e, step.seq, who);
      if (a.kind === 'omission') this.blame(e, step.seq, null);
    }
  }

  /**
   * For a commit, only the committing incarnation's own use counts; for a claim, any use
   * under this binding does (the skip may have happened lives earlier).
   */
  private blame(e: SourceEvent, seq: number, actor: string | null): void {
    const cause = this.foreign.find((f) => f.used !== null && (actor === null || f.actor === actor) && covers(f.cut, positionOf(e)));
    if (!cause) return;
    this.anomalies.push(
      anomaly(
        'binding-confusion',
        `${formatRef(e)} was skipped behind ${formatCut(cause.cut)}, a watermark written under another binding, loaded at step ${cause.seq} and used at step ${cause.used}`,
        [{ id: e.id, version: e.version }],
        [cause.seq, seq],
      ),
    );
  }

  finish(): void {}

  untested(): string | null {
    // A rebind alone is not enough: a consumer that never loaded another binding's watermark
    // (it wrote none before the rebind, or the world cannot see its loads, as a blackbox
    // consumer's) had nothing to be confused by.
    if (this.rebinds === 0) return 'the binding never changed';
    return this.loaded === 0 ? 'no load handed the consumer a watermark written under another binding' : null;
  }
}

/** The event versions a call tried to handle: an emit, or a commit's effects, handoffs and dead letters. */
function attempts(step: CallStep): EventRef[] {
  const { call } = step;
  if (call.kind === 'emit') return [call.event];
  if (call.kind !== 'commit') return [];
  return call.ops.flatMap((op) => (op.op === 'effect' || op.op === 'outbox' || op.op === 'dead-letter' ? [op.event] : []));
}

/** The point a keyset request resumes from, as a cut: what the consumer took as done. */
function resumeCut(resume: Resume, arity: number): Cut | null {
  switch (resume.kind) {
    case 'after':
      return isPosition(resume.position) && resume.position.key.length === arity ? { key: resume.position.key, id: resume.position.id, top: false } : null;
    case 'key-gt':
      return Array.isArray(resume.key) ? { key: resume.key, id: '', top: true } : null;
    case 'key-gte':
      return Array.isArray(resume.key) ? { key: resume.key, id: '', top: false } : null;
    default:
      return null;
  }
}
