import { ANOMALIES, type Anomaly } from '../../model/anomalies.js';
import { isEligible } from '../../model/binding.js';
import { covers, readCut } from '../../model/cut.js';
import { Truth } from '../../model/truth.js';
import { formatRef, positionOf, refKey, type SourceEvent } from '../../model/event.js';
import type { CallStep, LifeStep, RebindStep, Step } from '../../model/history.js';
import { comparePositions, type Position } from '../../model/order.js';
import type { Execution } from '../run/execute.js';
import { describePlan } from './failure.js';
import { describeBinding, describeStep, describeValue } from './timeline.js';
import { clip, callMark, lifeMark, mutationLabel, phaseLabel, type Label } from './picture-marks.js';
import { COLOR, cross, diamond, dot, endGlyph, esc, fetchGlyph, flag, mutationGlyph, n, rebindGlyph, ring, square, tick, warn } from './svg.js';

export { esc } from './svg.js';

/**
 * One executed world as a picture: a self-contained HTML page holding one inline SVG, with
 * no scripts, no external assets and no fonts beyond the generic families.
 *
 * Across, the history's steps (seq). Down, one lane for the source (mutations, rebinds) and
 * one per worker incarnation with a mark per call: pages fetched, effects, commits (the
 * watermark commits emphasised), leases, claims, crashes, errors and how each life ended.
 * Below the lanes, a chart over the stable order of every position that ever existed: the
 * committed watermark as a step line against the ground-truth prefix of eligible events with
 * durable outcomes, read from the model's replay of the history (model/truth.ts, the same
 * ground truth the checkers judge from; never from any consumer). Where the watermark stands above that prefix the gap is shaded: red when
 * the watermark was premature as it was committed, amber when a source mutation later put
 * an unhandled eligible event behind a watermark that was sound when written. An amber gap
 * still open when the run is over turns red where the checker found that hole premature at
 * the end of the run (its witness names the watermark's commit and the unhandled event). A watermark
 * carried over a rebind is drawn dashed and never shaded: it is another binding's progress. The
 * witness steps of the verdict's anomalies are red guide lines through everything. The
 * marks of each lane are in picture-marks.ts, the glyphs and palette in svg.ts.
 *
 * Same execution, same bytes: nothing here reads a clock, a locale or a random source.
 */
export interface PictureOptions {
  /** The consumer's name, as the headline shows it. */
  readonly consumer: string;
  /** The one command that replays this exact world. */
  readonly replay: string;
}

/** The widest the SVG gets while every step still has MIN_STEP pixels; longer histories scroll. */
const MAX_WIDTH = 1360;
const MIN_STEP = 6;
const LEFT = 124;
const RIGHT = 24;
/** Phase labels, then witness numbers and step ticks, above the first lane. */
const HEAD = 46;
const LANE = 62;
/** Within a lane: three rows of labels above the marks, the marks' centre line below them. */
const LABEL_ROWS = [12, 23, 34];
const MARK_Y = 47;
const LABEL_FONT = 9;
const CHAR_W = LABEL_FONT * 0.6;
const CHART_GAP = 40;
const OFF_BAND = 30;
/** How many anomalies the headline lists in full. */
const SHOWN = 3;


export function renderPicture(execution: Execution, options: PictureOptions): string {
  const svg = new Picture(execution).render();
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8" />',
    `<title>${esc(`tidemark: ${options.consumer}: ${titleOf(execution)}`)}</title>`,
    '</head>',
    '<body style="margin:12px;background:#ffffff;color:#222222;font-family:sans-serif">',
    ...headline(execution, options),
    svg,
    '<h2 style="font-size:14px;margin:14px 0 4px">World</h2>',
    `<pre style="font-family:monospace;font-size:12px;margin:0">${esc(describePlan(execution.plan).join('\n'))}</pre>`,
    `<p style="font-family:monospace;font-size:11px;color:#777777">History sha256 ${esc(execution.hash)}</p>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function titleOf(execution: Execution): string {
  const { verdict } = execution.result;
  if (verdict.status === 'fail') return `FAIL ${(verdict.anomalies[0] as Anomaly).kind}`;
  return verdict.status.toUpperCase();
}

function headline(execution: Execution, options: PictureOptions): string[] {
  const { verdict } = execution.result;
  const out: string[] = [];
  const h1 = (text: string, color: string): string =>
    `<h1 style="font-size:18px;margin:0 0 6px;color:${color}">${text}</h1>`;
  if (verdict.status === 'fail') {
    const first = verdict.anomalies[0] as Anomaly;
    out.push(h1(`FAIL ${esc(options.consumer)}: ${esc(first.kind)} (${esc(first.rules.join(' '))})`, '#b02a2a'));
    out.push(`<p style="margin:0 0 6px;font-size:14px">${esc(ANOMALIES[first.kind].means)}</p>`);
    out.push('<ul style="margin:0 0 8px;padding-left:20px;font-family:monospace;font-size:12px">');
    for (const a of verdict.anomalies.slice(0, SHOWN)) out.push(`<li>${esc(`${a.kind}: ${a.explanation}`)}</li>`);
    if (verdict.anomalies.length > SHOWN) out.push(`<li>${esc(`(+${verdict.anomalies.length - SHOWN} more anomalies)`)}</li>`);
    out.push('</ul>');
  } else if (verdict.status === 'unknown') {
    out.push(h1(`UNKNOWN ${esc(options.consumer)}`, '#8a6d00'));
    out.push(`<p style="margin:0 0 8px;font-size:14px">${esc(`the run could not be judged: ${verdict.reason}`)}</p>`);
  } else {
    out.push(h1(`PASS ${esc(options.consumer)}`, '#2e7d32'));
  }
  out.push(
    `<pre style="font-family:monospace;font-size:12px;background:#f4f4f4;border:1px solid #dddddd;padding:6px 8px;margin:0 0 10px;white-space:pre-wrap">${esc(`Replay: ${options.replay}`)}</pre>`,
  );
  return out;
}

/** Escapes text for XML and HTML, in content and in attribute values alike. */
const posKey = (p: Position): string => `${p.key.join(',')}#${p.id}`;
const actorOf = (step: CallStep | LifeStep): string => `${step.actor.worker}#${step.actor.incarnation}`;

/** A level in the chart: a row index, -1 for "nothing", or 'off' for a value that is not a position. */
type Level = number | 'off';

/** What holds after one step: the chart's lines and the state of the shading. */
interface Frame {
  readonly seq: number;
  readonly prefix: number;
  readonly watermark: Level;
  /** The watermark slot was written under a binding that is no longer the current one. */
  readonly foreign: boolean;
  readonly shade: 'premature' | 'behind' | null;
  /** Red for a hole the checker judged premature once the run was over, not at the commit. */
  readonly hole?: boolean;
  /** A watermark was written at this step: a commit's, or a blackbox store's observed one. */
  readonly committed?: boolean;
}

interface Row {
  readonly key: string;
  readonly position: Position;
  readonly label: string;
}

type RowState = 'eligible' | 'ineligible' | 'gone';


class Picture {
  private readonly steps: readonly Step[];
  private readonly first: number;
  private readonly count: number;
  private readonly stepW: number;
  private readonly width: number;
  private readonly actors: string[] = [];
  private readonly rows: Row[] = [];
  private readonly rowOf = new Map<string, number>();
  /** Row of each event version, by refKey. */
  private readonly refRow = new Map<string, number>();
  private readonly witnesses = new Map<number, string[]>();
  private readonly bySeq = new Map<number, Step>();

  constructor(private readonly execution: Execution) {
    this.steps = execution.history.steps;
    this.first = this.steps[0]?.seq ?? 0;
    const last = this.steps.at(-1)?.seq ?? this.first;
    this.count = Math.max(1, last - this.first + 1);
    this.stepW = Math.max(MIN_STEP, (MAX_WIDTH - LEFT - RIGHT) / this.count);
    this.width = Math.ceil(LEFT + this.stepW * this.count + RIGHT);
    for (const step of this.steps) {
      this.bySeq.set(step.seq, step);
      if (step.kind !== 'call' && step.kind !== 'life') continue;
      const actor = actorOf(step);
      if (!this.actors.includes(actor)) this.actors.push(actor);
    }
    this.buildRows();
    const { verdict } = execution.result;
    for (const a of verdict.anomalies) {
      for (const seq of a.steps) {
        const kinds = this.witnesses.get(seq) ?? [];
        if (!kinds.includes(a.kind)) kinds.push(a.kind);
        this.witnesses.set(seq, kinds);
      }
    }
  }

  /** Every position that ever existed, in the stable order, labelled with its event id. */
  private buildRows(): void {
    const versions: SourceEvent[] = [...this.execution.history.header.initial];
    for (const step of this.steps) if (step.kind === 'mutation') versions.push(step.event);
    const positionsOfId = new Map<string, Set<string>>();
    for (const e of versions) {
      const set = positionsOfId.get(e.id) ?? new Set<string>();
      set.add(posKey(positionOf(e)));
      positionsOfId.set(e.id, set);
    }
    const firstAt = new Map<string, SourceEvent>();
    for (const e of versions) {
      const key = posKey(positionOf(e));
      const seen = firstAt.get(key);
      if (seen === undefined || e.version < seen.version) firstAt.set(key, e);
    }
    const sorted = [...firstAt.values()].sort((a, b) => comparePositions(positionOf(a), positionOf(b)));
    for (const e of sorted) {
      const key = posKey(positionOf(e));
      // An id that moved has several rows: name the version that first stood at each.
      const moved = (positionsOfId.get(e.id)?.size ?? 1) > 1;
      this.rowOf.set(key, this.rows.length);
      this.rows.push({ key, position: positionOf(e), label: `${moved ? formatRef(e) : e.id} (${e.key.join(',')})` });
    }
    for (const e of versions) this.refRow.set(refKey(e), this.rowOf.get(posKey(positionOf(e))) as number);
  }

  private x(seq: number): number {
    return LEFT + (seq - this.first + 0.5) * this.stepW;
  }

  private get plotLeft(): number {
    return LEFT;
  }

  private get plotRight(): number {
    return LEFT + this.stepW * this.count;
  }

  render(): string {
    const lanesTop = HEAD;
    const laneNames = ['source', ...this.actors];
    const lanesBottom = lanesTop + laneNames.length * LANE;
    const sim = this.simulate();
    const anyOff = sim.frames.some((f) => f.watermark === 'off');
    const rowH = this.rows.length <= 12 ? 22 : this.rows.length <= 40 ? 16 : 11;
    const chartTop = lanesBottom + CHART_GAP;
    const bandTop = chartTop + (anyOff ? OFF_BAND : 0);
    // Rows, then one more band below them for "none".
    const rowsBottom = bandTop + this.rows.length * rowH;
    const chartBottom = rowsBottom + rowH;
    const axisY = chartBottom + 6;
    const legendTop = axisY + 44;
    const legend = this.legend(legendTop);
    const height = Math.ceil(legend.bottom + 10);
    const level = (l: number): number => rowsBottom - (l + 0.5) * rowH;
    const offY = chartTop + OFF_BAND - 10;

    const out: string[] = [];
    out.push(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${this.width}" height="${height}" viewBox="0 0 ${this.width} ${height}" font-family="monospace" style="display:block;background:#ffffff">`,
    );
    out.push(`<title>${esc(`${this.steps.length} steps, ${this.actors.length} worker incarnations, ${this.rows.length} positions`)}</title>`);
    out.push(...this.phases(chartBottom));
    out.push(...this.ticks(lanesTop - 4, axisY));
    // Lanes.
    laneNames.forEach((name, i) => {
      const top = lanesTop + i * LANE;
      out.push(`<g class="lane" data-lane="${esc(name)}">`);
      out.push(`<line x1="${n(4)}" y1="${n(top + LANE)}" x2="${n(this.width - 4)}" y2="${n(top + LANE)}" stroke="#e2e2e2" stroke-width="1" />`);
      out.push(
        `<text class="lane-label" x="${n(LEFT - 8)}" y="${n(top + MARK_Y + 4)}" text-anchor="end" font-size="12" font-weight="bold" fill="${i === 0 ? COLOR.mutation : COLOR.text}">${esc(name)}</text>`,
      );
      out.push(...(i === 0 ? this.sourceLane(top) : this.workerLane(name, top)));
      out.push('</g>');
    });
    // Chart.
    out.push('<g class="chart">');
    out.push(
      `<text x="${n(8)}" y="${n(chartTop - 14)}" font-size="11" font-family="sans-serif" font-weight="bold" fill="${COLOR.text}">stable order of events (all positions that ever existed), over steps</text>`,
    );
    if (anyOff) {
      out.push(`<rect x="${n(this.plotLeft)}" y="${n(chartTop)}" width="${n(this.plotRight - this.plotLeft)}" height="${n(OFF_BAND - 2)}" fill="#fff1f1" />`);
      out.push(`<text x="${n(LEFT - 8)}" y="${n(offY + 3)}" text-anchor="end" font-size="10" fill="${COLOR.premature}">not a position</text>`);
    }
    out.push(...this.rowGrid(sim.rowSegments, level));
    out.push(...this.shading(sim.frames, level));
    out.push(...sim.served.map((s) => `<rect class="served" x="${n(this.x(s.seq) - 2)}" y="${n(level(s.row) - 2)}" width="4" height="4" fill="${COLOR.served}" />`));
    out.push(...this.lines(sim.frames, sim.initial, level, offY));
    out.push(
      ...sim.outcomes.map(
        (o) =>
          `<circle class="outcome" cx="${n(this.x(o.seq))}" cy="${n(level(o.row))}" r="2.6" fill="${o.repeat ? '#ffffff' : COLOR.effect}" stroke="${COLOR.effect}" stroke-width="1.2" />`,
      ),
    );
    out.push(`<line x1="${n(this.plotLeft)}" y1="${n(chartBottom)}" x2="${n(this.plotRight)}" y2="${n(chartBottom)}" stroke="#999999" stroke-width="1" />`);
    out.push(
      `<text x="${n((this.plotLeft + Math.min(this.plotRight, MAX_WIDTH)) / 2)}" y="${n(axisY + 30)}" text-anchor="middle" font-size="11" font-family="sans-serif" fill="${COLOR.dim}">step (history seq)</text>`,
    );
    out.push('</g>');
    out.push(...this.rebinds(lanesTop, chartBottom));
    out.push(...this.witnessLines(lanesTop, chartBottom));
    out.push(...legend.parts);
    out.push('</svg>');
    return out.join('\n');
  }

  /** Phase backgrounds, with their names above the lanes. */
  private phases(bottom: number): string[] {
    const out: string[] = [];
    let start = 0;
    for (let i = 1; i <= this.steps.length; i++) {
      const phase = (this.steps[start] as Step).phase;
      if (i < this.steps.length && (this.steps[i] as Step).phase === phase) continue;
      const x1 = this.x((this.steps[start] as Step).seq) - this.stepW / 2;
      const x2 = this.x((this.steps[i - 1] as Step).seq) + this.stepW / 2;
      out.push(
        `<rect class="phase phase-${phase}" data-phase="${phase}" x="${n(x1)}" y="${n(2)}" width="${n(x2 - x1)}" height="${n(bottom - 2)}" fill="${COLOR[phase]}" />`,
      );
      out.push(
        `<text x="${n(x1 + 4)}" y="${n(15)}" font-size="12" font-family="sans-serif" font-weight="bold" fill="#555555">${esc(phaseLabel(phase, x2 - x1))}</text>`,
      );
      start = i;
    }
    return out;
  }

  /** Step numbers above the lanes and below the chart, at a spacing that stays readable. */
  private ticks(topY: number, axisY: number): string[] {
    const every = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((k) => k * this.stepW >= 34) ?? 10000;
    const out: string[] = [];
    const last = this.first + this.count - 1;
    for (let seq = Math.ceil(this.first / every) * every; seq <= last; seq += every) {
      const x = this.x(seq);
      out.push(`<text x="${n(x)}" y="${n(topY)}" text-anchor="middle" font-size="9" fill="${COLOR.dim}">${seq}</text>`);
      out.push(`<line x1="${n(x)}" y1="${n(axisY - 6)}" x2="${n(x)}" y2="${n(axisY)}" stroke="#999999" stroke-width="1" />`);
      out.push(`<text x="${n(x)}" y="${n(axisY + 12)}" text-anchor="middle" font-size="10" fill="#555555">${seq}</text>`);
    }
    return out;
  }

  private sourceLane(top: number): string[] {
    const y = top + MARK_Y;
    const out: string[] = [];
    const labels: Label[] = [];
    for (const step of this.steps) {
      if (step.kind !== 'mutation' && step.kind !== 'rebind') continue;
      const x = this.x(step.seq);
      const tip = `<title>${esc(`${step.seq}  ${describeStep(step)}`)}</title>`;
      if (step.kind === 'mutation') {
        out.push(`<g class="mutation" data-seq="${step.seq}" data-mutation="${step.mutation}">${tip}${mutationGlyph(step, x, y)}</g>`);
        labels.push({ x, text: mutationLabel(step), color: COLOR.mutation, priority: 0, seq: step.seq });
      } else {
        out.push(`<g class="rebind-mark" data-seq="${step.seq}">${tip}${rebindGlyph(x, y)}</g>`);
        labels.push({ x, text: `rebind: ${describeBinding(step.binding)}`, color: COLOR.rebind, priority: 0, seq: step.seq });
      }
    }
    if (out.length === 0) {
      out.push(`<text x="${n(this.plotLeft + 6)}" y="${n(y + 4)}" font-size="10" fill="#999999">no mutations, no rebinds: the source held still</text>`);
    }
    out.push(...this.placeLabels(labels, top));
    return out;
  }

  private workerLane(actor: string, top: number): string[] {
    const y = top + MARK_Y;
    const own = this.steps.filter((s): s is CallStep | LifeStep => (s.kind === 'call' || s.kind === 'life') && actorOf(s) === actor);
    const out: string[] = [];
    const labels: Label[] = [];
    const firstStep = own[0];
    const lastStep = own.at(-1);
    if (firstStep !== undefined && lastStep !== undefined) {
      out.push(`<line x1="${n(this.x(firstStep.seq))}" y1="${n(y)}" x2="${n(this.x(lastStep.seq))}" y2="${n(y)}" stroke="#bbbbbb" stroke-width="1.5" />`);
    }
    for (const step of own) {
      const x = this.x(step.seq);
      const tip = `<title>${esc(`${step.seq}  ${describeStep(step)}`)}</title>`;
      const mark = step.kind === 'life' ? lifeMark(step, x, y) : callMark(step, x, y);
      out.push(`<g class="${mark.cls}" data-seq="${step.seq}"${mark.data}>${tip}${mark.svg}</g>`);
      for (const l of mark.labels) labels.push({ x, seq: step.seq, ...l });
    }
    out.push(...this.placeLabels(labels, top));
    return out;
  }

  /**
   * Puts labels in the lane's label rows, most important first, each centred on its mark
   * where it fits and never over another; a label with no room is left to the mark's tooltip.
   */
  private placeLabels(labels: readonly Label[], top: number): string[] {
    const taken: [number, number][][] = LABEL_ROWS.map(() => []);
    const placed: { label: Label; row: number; x0: number }[] = [];
    const order = [...labels].sort((a, b) => a.priority - b.priority || a.seq - b.seq);
    for (const label of order) {
      const text = label.text.length > 60 ? `${label.text.slice(0, 59)}…` : label.text;
      const w = text.length * CHAR_W;
      const x0 = Math.max(this.plotLeft + 1, Math.min(label.x - w / 2, this.plotRight - w - 1));
      const row = taken.findIndex((spans) => spans.every(([a, b]) => x0 + w + 3 <= a || x0 >= b + 3));
      if (row < 0) continue;
      (taken[row] as [number, number][]).push([x0, x0 + w]);
      placed.push({ label: { ...label, text }, row, x0 });
    }
    placed.sort((a, b) => a.label.seq - b.label.seq || a.row - b.row);
    // The row nearest the marks is the last one, so the most important label sits closest.
    return placed.map(
      ({ label, row, x0 }) =>
        `<text class="label" x="${n(x0)}" y="${n(top + (LABEL_ROWS[LABEL_ROWS.length - 1 - row] as number))}" font-size="${LABEL_FONT}" fill="${label.color}">${esc(label.text)}</text>`,
    );
  }

  /**
   * Frames from ground truth: the model's replay of the history (model/truth.ts), the same
   * one the checkers judge from, step by step: which events exist, which are eligible under
   * the current binding, which have a durable outcome, where the committed watermark stands.
   * Blackbox `observed` steps count like commits: their effects are outcomes, their
   * watermark is the consumer's.
   */
  private simulate(): {
    frames: Frame[];
    initial: Frame;
    served: { seq: number; row: number }[];
    outcomes: { seq: number; row: number; repeat: boolean }[];
    rowSegments: { row: number; from: number | null; to: number | null; state: RowState }[];
  } {
    const truth = new Truth(this.execution.history.header);
    const handled = new Set<string>();
    const prefixNow = (): number => {
      const gap = truth.firstWithoutOutcome();
      return gap === undefined ? this.rows.length - 1 : (this.rowOf.get(posKey(positionOf(gap))) as number) - 1;
    };
    const rowStates = (): RowState[] =>
      this.rows.map((row) => {
        const current = truth.event(row.position.id);
        if (current === undefined || posKey(positionOf(current)) !== row.key) return 'gone';
        return isEligible(truth.binding, current) ? 'eligible' : 'ineligible';
      });
    const rowSegments: { row: number; from: number | null; to: number | null; state: RowState }[] = [];
    const open: { from: number | null; state: RowState }[] = rowStates().map((state) => ({ from: null, state }));
    const restate = (seq: number): void => {
      rowStates().forEach((state, row) => {
        const current = open[row] as { from: number | null; state: RowState };
        if (current.state === state) return;
        rowSegments.push({ row, from: current.from, to: seq, state: current.state });
        open[row] = { from: seq, state };
      });
    };

    let watermark: unknown = undefined;
    let written = false;
    /** The step that wrote the watermark the store holds now. */
    let writtenAt: number | undefined;
    let foreign = false;
    let premature = false;
    const levelOf = (value: unknown): Level => {
      if (!written || value === null || value === undefined) return -1;
      const reading = readCut(value, truth.binding.ordering.length);
      if ('notAPoint' in reading) return 'off';
      // The highest row the cut covers: a cut between positions stands just below the next one.
      let level = -1;
      for (const [i, row] of this.rows.entries()) if (covers(reading.cut, row.position)) level = i;
      return level;
    };
    const initial: Frame = { seq: this.first - 1, prefix: prefixNow(), watermark: -1, foreign: false, shade: null };
    const frames: Frame[] = [];
    const served: { seq: number; row: number }[] = [];
    const outcomeMarks: { seq: number; row: number; repeat: boolean }[] = [];

    for (const step of this.steps) {
      const facts = truth.advance(step);
      let committed = false;
      if (step.kind === 'mutation') restate(step.seq);
      else if (step.kind === 'rebind') {
        restate(step.seq);
        if (written) foreign = true;
      } else if (step.kind === 'call' && step.call.kind === 'fetch' && step.outcome.kind === 'ok' && step.result?.kind === 'page') {
        for (const e of step.result.page.events) {
          const row = this.refRow.get(refKey(e)) ?? this.rowOf.get(posKey(positionOf(e)));
          if (row !== undefined) served.push({ seq: step.seq, row });
        }
      }
      for (const ref of facts.outcomes) {
        const row = this.refRow.get(refKey(ref));
        if (row !== undefined) outcomeMarks.push({ seq: step.seq, row, repeat: handled.has(refKey(ref)) });
        handled.add(refKey(ref));
      }
      for (const value of facts.watermarks) {
        // A blackbox store with nothing yet for a new binding has written nothing.
        if (step.kind === 'observed' && value === null) continue;
        watermark = value;
        written = true;
        writtenAt = step.seq;
        committed = true;
        foreign = false;
      }
      const prefix = prefixNow();
      const level = levelOf(watermark);
      // A watermark carried over a rebind is not this binding's progress: no shading for it.
      const above = typeof level === 'number' && level > prefix && !foreign;
      if (committed) premature = above;
      else if (!above) premature = false;
      frames.push({ seq: step.seq, prefix, watermark: level, foreign, shade: above ? (premature ? 'premature' : 'behind') : null, ...(committed ? { committed } : {}) });
    }
    open.forEach((o, row) => rowSegments.push({ row, from: o.from, to: null, state: o.state }));
    if (this.judgedAtEnd(writtenAt, truth.firstWithoutOutcome())) {
      // The amber gap still open at the end is the hole the checker judged premature: red
      // back to where it opened, which is no earlier than the watermark's commit.
      for (let i = frames.length - 1; i >= 0 && (frames[i] as Frame).shade === 'behind'; i--) {
        frames[i] = { ...(frames[i] as Frame), shade: 'premature', hole: true };
      }
    }
    return { frames, initial, served, outcomes: outcomeMarks, rowSegments };
  }

  /**
   * Whether the checker found, once the run was over, that the watermark the store holds
   * passed a hole: a premature-watermark whose witness starts at that watermark's commit and
   * names the event still without a durable outcome. Read from the verdict, so the picture
   * follows the checker's rule (which runs it judges, which holes) instead of restating it.
   */
  private judgedAtEnd(writtenAt: number | undefined, gap: SourceEvent | undefined): boolean {
    if (writtenAt === undefined || gap === undefined) return false;
    return this.execution.result.verdict.anomalies.some(
      (a) => a.kind === 'premature-watermark' && a.steps[0] === writtenAt && a.events.some((e) => e.id === gap.id && e.version === gap.version),
    );
  }

  /** A start seq (null: from the left edge) to the x where that state begins. */
  private startX(seq: number | null): number {
    return seq === null ? this.plotLeft : this.x(seq);
  }

  private endX(seq: number | null): number {
    return seq === null ? this.plotRight : this.x(seq);
  }

  private rowGrid(segments: readonly { row: number; from: number | null; to: number | null; state: RowState }[], level: (l: number) => number): string[] {
    const out: string[] = [];
    this.rows.forEach((row, i) => {
      const y = level(i);
      const states = segments.filter((s) => s.row === i);
      const everEligible = states.some((s) => s.state === 'eligible');
      out.push(
        `<text class="row-label" x="${n(LEFT - 8)}" y="${n(y + 3.5)}" text-anchor="end" font-size="10" fill="${everEligible ? COLOR.text : '#999999'}">${esc(clip(row.label, 18))}</text>`,
      );
    });
    for (const s of segments) {
      if (s.state === 'gone') continue;
      const y = level(s.row);
      const dash = s.state === 'eligible' ? '' : ' stroke-dasharray="2 3"';
      out.push(
        `<line class="row-${s.state}" x1="${n(this.startX(s.from))}" y1="${n(y)}" x2="${n(this.endX(s.to))}" y2="${n(y)}" stroke="${COLOR.grid}" stroke-width="1"${dash} />`,
      );
    }
    out.push(
      `<text x="${n(LEFT - 8)}" y="${n(level(-1) + 3.5)}" text-anchor="end" font-size="10" fill="#999999">none</text>`,
    );
    return out;
  }

  /** Runs of frames with the same value; each run holds from its first step's x to the next run's. */
  private runs<T>(frames: readonly Frame[], initial: Frame, value: (f: Frame) => T, same: (a: T, b: T) => boolean): { from: number | null; to: number | null; value: T }[] {
    const runs: { from: number | null; to: number | null; value: T }[] = [{ from: null, to: null, value: value(initial) }];
    for (const f of frames) {
      const v = value(f);
      const last = runs[runs.length - 1] as { from: number | null; to: number | null; value: T };
      if (same(last.value, v)) continue;
      last.to = f.seq;
      runs.push({ from: f.seq, to: null, value: v });
    }
    return runs;
  }

  private shading(frames: readonly Frame[], level: (l: number) => number): string[] {
    const out: string[] = [];
    type Shade = { shade: Frame['shade']; hole: boolean; top: Level; bottom: number };
    const empty: Frame = { seq: this.first - 1, prefix: 0, watermark: -1, foreign: false, shade: null };
    const runs = this.runs<Shade>(
      frames,
      empty,
      (f) => ({ shade: f.shade, hole: f.hole === true, top: f.watermark, bottom: f.prefix }),
      (a, b) => a.shade === b.shade && a.hole === b.hole && a.top === b.top && a.bottom === b.bottom,
    );
    for (const run of runs) {
      const { shade, hole, top, bottom } = run.value;
      if (shade === null || typeof top !== 'number') continue;
      const x1 = this.startX(run.from);
      const x2 = this.endX(run.to);
      const y1 = level(top);
      const y2 = level(bottom);
      const what = hole
        ? 'premature watermark: it passed a hole where the source later put an eligible event, which never got a durable outcome'
        : shade === 'premature'
          ? 'premature watermark: committed above an eligible event with no durable outcome'
          : 'a source mutation put an unhandled eligible event behind a watermark that was sound when committed';
      out.push(
        `<rect class="${shade}" data-shade="${shade}" x="${n(x1)}" y="${n(y1)}" width="${n(Math.max(1, x2 - x1))}" height="${n(y2 - y1)}" fill="${shade === 'premature' ? COLOR.premature : COLOR.behind}" fill-opacity="${shade === 'premature' ? '0.32' : '0.3'}"><title>${esc(what)}</title></rect>`,
      );
    }
    return out;
  }

  /** The prefix line under the watermark line; the watermark breaks off where it is not a position. */
  private lines(frames: readonly Frame[], initial: Frame, level: (l: number) => number, offY: number): string[] {
    const out: string[] = [];
    const prefixRuns = this.runs(frames, initial, (f) => f.prefix, (a, b) => a === b);
    out.push(`<path class="prefix-line" d="${this.stepPath(prefixRuns.map((r) => ({ ...r, y: level(r.value) })))}" fill="none" stroke="${COLOR.prefix}" stroke-width="4.5" stroke-opacity="0.8" />`);
    const wmRuns = this.runs(
      frames,
      initial,
      (f) => ({ level: f.watermark, foreign: f.foreign }),
      (a, b) => a.level === b.level && a.foreign === b.foreign,
    );
    // Each run is drawn on its own, joined to the one before: solid between positions,
    // dotted into and out of the band for values that are not positions (the break).
    let prevY: number | null = null;
    let prevOff = false;
    for (const run of wmRuns) {
      const { level: l, foreign } = run.value;
      const x1 = this.startX(run.from);
      const x2 = this.endX(run.to);
      const y = l === 'off' ? offY : level(l);
      if (prevY !== null && (prevOff || l === 'off')) {
        out.push(`<line class="watermark-break" x1="${n(x1)}" y1="${n(prevY)}" x2="${n(x1)}" y2="${n(y)}" stroke="${COLOR.watermark}" stroke-width="1" stroke-dasharray="2 2" />`);
      }
      if (l === 'off') {
        const value = run.from === null ? '' : this.watermarkValueAt(run.from);
        out.push(`<line class="watermark-off" x1="${n(x1)}" y1="${n(offY)}" x2="${n(x2)}" y2="${n(offY)}" stroke="${COLOR.watermark}" stroke-width="2" stroke-dasharray="2 3" />`);
        out.push(
          `<g class="not-position" data-seq="${run.from ?? ''}"><title>${esc(`the committed watermark ${value} is not a position of the bound order`)}</title>` +
            `<path d="M${n(x1 - 5)} ${n(offY - 5)} L${n(x1 + 5)} ${n(offY + 5)} M${n(x1 - 5)} ${n(offY + 5)} L${n(x1 + 5)} ${n(offY - 5)}" stroke="${COLOR.premature}" stroke-width="2" />` +
            `<text x="${n(x1 + 8)}" y="${n(offY - 6)}" font-size="9" fill="${COLOR.premature}">${esc(clip(`not a position: ${value}`, 48))}</text></g>`,
        );
      } else {
        const join = prevY !== null && !prevOff ? `M${n(x1)} ${n(prevY)} V${n(y)}` : `M${n(x1)} ${n(y)}`;
        out.push(
          `<path class="watermark-line${foreign ? ' foreign' : ''}" d="${join} H${n(x2)}" fill="none" stroke="${COLOR.watermark}" stroke-width="2"${foreign ? ' stroke-dasharray="5 3"' : ''} />`,
        );
      }
      prevY = y;
      prevOff = l === 'off';
    }
    // Each watermark commit gets a dot on the line.
    for (const f of frames) {
      if (!f.committed || typeof f.watermark !== 'number') continue;
      out.push(`<circle class="watermark-commit" cx="${n(this.x(f.seq))}" cy="${n(level(f.watermark))}" r="3.2" fill="${COLOR.watermark}" />`);
    }
    return out;
  }

  private watermarkValueAt(seq: number): string {
    const step = this.bySeq.get(seq);
    if (step?.kind === 'observed') return step.watermark ? describeValue(step.watermark.value) : '';
    if (step === undefined || step.kind !== 'call' || step.call.kind !== 'commit') return '';
    let value: unknown = null;
    for (const op of step.call.ops) if (op.op === 'watermark') value = op.value;
    return describeValue(value);
  }

  /** A step line through runs: horizontal over each run, vertical between them. */
  private stepPath(runs: readonly { from: number | null; to: number | null; y: number }[]): string {
    const parts: string[] = [];
    runs.forEach((r, i) => {
      const x1 = this.startX(r.from);
      const x2 = this.endX(r.to);
      parts.push(i === 0 ? `M${n(x1)} ${n(r.y)}` : `V${n(r.y)}`);
      parts.push(`H${n(x2)}`);
    });
    return parts.join(' ');
  }

  private rebinds(top: number, bottom: number): string[] {
    return this.steps
      .filter((s): s is RebindStep => s.kind === 'rebind')
      .map(
        (s) =>
          `<line class="rebind" data-seq="${s.seq}" x1="${n(this.x(s.seq))}" y1="${n(top)}" x2="${n(this.x(s.seq))}" y2="${n(bottom)}" stroke="${COLOR.rebind}" stroke-width="1.5" stroke-dasharray="6 3" />`,
      );
  }

  private witnessLines(top: number, bottom: number): string[] {
    const out: string[] = [];
    for (const seq of [...this.witnesses.keys()].sort((a, b) => a - b)) {
      const x = this.x(seq);
      const kinds = (this.witnesses.get(seq) as string[]).join(', ');
      out.push(
        `<g class="witness" data-witness="${seq}"><title>${esc(`step ${seq}: witness of ${kinds}`)}</title>` +
          `<line x1="${n(x)}" y1="${n(top)}" x2="${n(x)}" y2="${n(bottom)}" stroke="${COLOR.witness}" stroke-width="1.6" stroke-dasharray="4 3" stroke-opacity="0.85" />` +
          `<path d="M${n(x - 5)} ${n(top - 22)} L${n(x + 5)} ${n(top - 22)} L${n(x)} ${n(top - 13)} Z" fill="${COLOR.witness}" /></g>`,
      );
    }
    return out;
  }

  private legend(top: number): { parts: string[]; bottom: number } {
    const items: [string, (x: number, y: number) => string][] = [
      ['fetch: a page, labelled with its events', (x, y) => fetchGlyph(x, y, false)],
      ['effect (emit or store effect)', (x, y) => dot(x, y, COLOR.effect)],
      ['outbox handoff / dead letter', (x, y) => `${ring(x - 4, y, COLOR.outbox)}${dot(x + 5, y, COLOR.deadLetter)}`],
      ['commit', (x, y) => tick(x, y, false)],
      ['watermark commit (labelled wm)', (x, y) => tick(x, y, true)],
      ['lease (gN: generation)', (x, y) => diamond(x, y, COLOR.lease, false)],
      ['load / completed? (reads)', (x, y) => `${square(x - 4, y, COLOR.read)}${ring(x + 5, y, COLOR.read)}`],
      ['claim: caught up', (x, y) => flag(x, y + 2, COLOR.caughtUp)],
      ['claim: failed visibly', (x, y) => flag(x, y + 2, COLOR.failed)],
      ['crash (before / after the call)', (x, y) => cross(x, y)],
      ['error or timeout (faded: did not happen)', (x, y) => warn(x, y - 10, true)],
      ['incarnation ended: threw, hung, budget', (x, y) => endGlyph(x, y, COLOR.end)],
      ['source: insert / move / flip', (x, y) => `${diamond(x - 4, y, COLOR.mutation, true)}${diamond(x + 5, y, COLOR.mutation, false)}`],
      ['rebind (new binding, same store)', (x, y) => rebindGlyph(x, y)],
      ['witness step of an anomaly', (x, y) => `<line x1="${n(x)}" y1="${n(y - 8)}" x2="${n(x)}" y2="${n(y + 8)}" stroke="${COLOR.witness}" stroke-width="1.6" stroke-dasharray="4 3" />`],
      ['committed watermark (dashed: from an earlier binding)', (x, y) => `<line x1="${n(x - 10)}" y1="${n(y)}" x2="${n(x - 1)}" y2="${n(y)}" stroke="${COLOR.watermark}" stroke-width="2" /><line x1="${n(x + 2)}" y1="${n(y)}" x2="${n(x + 12)}" y2="${n(y)}" stroke="${COLOR.watermark}" stroke-width="2" stroke-dasharray="3 2" />`],
      ['eligible prefix with durable outcomes (truth)', (x, y) => `<line x1="${n(x - 9)}" y1="${n(y)}" x2="${n(x + 9)}" y2="${n(y)}" stroke="${COLOR.prefix}" stroke-width="4.5" stroke-opacity="0.8" />`],
      ['premature watermark', (x, y) => `<rect x="${n(x - 9)}" y="${n(y - 6)}" width="18" height="12" fill="${COLOR.premature}" fill-opacity="0.32" />`],
      ['mutation put an unhandled event behind it', (x, y) => `<rect x="${n(x - 9)}" y="${n(y - 6)}" width="18" height="12" fill="${COLOR.behind}" fill-opacity="0.3" />`],
      ['event served / durable outcome (hollow: again)', (x, y) => `<rect x="${n(x - 7.5)}" y="${n(y - 1.5)}" width="3" height="3" fill="${COLOR.served}" />${dot(x + 1, y, COLOR.effect)}${ring(x + 8, y, COLOR.effect)}`],
      ['row: eligible / not eligible', (x, y) => `<line x1="${n(x - 10)}" y1="${n(y - 3)}" x2="${n(x + 10)}" y2="${n(y - 3)}" stroke="${COLOR.grid}" /><line x1="${n(x - 10)}" y1="${n(y + 3)}" x2="${n(x + 10)}" y2="${n(y + 3)}" stroke="${COLOR.grid}" stroke-dasharray="2 3" />`],
    ];
    const cell = 310;
    const columns = Math.max(1, Math.floor((Math.min(this.width, MAX_WIDTH) - 16) / cell));
    const parts: string[] = ['<g class="legend" font-family="sans-serif">'];
    parts.push(`<text x="${n(8)}" y="${n(top)}" font-size="11" font-weight="bold" fill="${COLOR.text}">legend</text>`);
    items.forEach(([text, glyph], i) => {
      const x = 8 + (i % columns) * cell;
      const y = top + 24 + Math.floor(i / columns) * 26;
      parts.push(`${glyph(x + 12, y)}<text x="${n(x + 30)}" y="${n(y + 4)}" font-size="11" fill="${COLOR.text}">${esc(text)}</text>`);
    });
    parts.push('</g>');
    return { parts, bottom: top + 12 + Math.ceil(items.length / columns) * 26 };
  }
}
