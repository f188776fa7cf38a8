/**
 * Whether a sync attempt is getting anywhere. A connector that asks for the same page again
 * and again, or starts over from the first page once it reached the last, without exiting and
 * without a new STATE, calls the world on every request: it never stalls, and would run until
 * the world's step budget (thousands of real requests, each a turn of the platform) or the
 * check's time limit. R9 (docs/design.md): a repeated or stale page proves no progress, and a
 * consumer may go on without it only within a bound.
 *
 * Progress, within one attempt, is something it had not done before in that attempt: a page
 * that served an event version not served to it before, a RECORD of a version it had not
 * written before, a STATE unlike every one it wrote before. Inputs are its requests and its
 * RECORD and STATE lines (not its logs: a connector that only logs makes no world call and
 * stalls). After more inputs without progress than the bound, the attempt is stuck.
 *
 * The bound is 50 inputs plus twice the event versions served to the attempt: enough for a
 * connector that reads everything it was served once more (a query restarted from its
 * bookmark after an expired token, with the records written again), and every retry of an
 * error the world injects, and linear in the world, so a loop is stopped within a pass or two
 * of the stream.
 */
export const LOOP_BASE = 50;

/** One input, as the reason quotes the last ones. */
export type Sighting = string;

export class ProgressWatch {
  private readonly served = new Set<string>();
  private readonly written = new Set<string>();
  private readonly states = new Set<string>();
  private idle = 0;
  /** The inputs since the last progress, the last few, to quote. */
  private readonly recent: Sighting[] = [];

  /** The most inputs without progress this attempt may make now. */
  get bound(): number {
    return LOOP_BASE + 2 * this.served.size;
  }

  /** A request served these event versions (none, for an error or a page of nothing new). */
  request(what: Sighting, versions: readonly string[]): void {
    let fresh = false;
    for (const v of versions) {
      if (this.served.has(v)) continue;
      this.served.add(v);
      fresh = true;
    }
    this.saw(what, fresh);
  }

  /** A RECORD of this version. */
  record(what: Sighting, version: string): void {
    const fresh = !this.written.has(version);
    this.written.add(version);
    this.saw(what, fresh);
  }

  /** A STATE holding this state (its canonical text). */
  state(what: Sighting, state: string): void {
    const fresh = !this.states.has(state);
    this.states.add(state);
    this.saw(what, fresh);
  }

  /** Null while the attempt is within the bound; else why it is stuck, the same on every run of the same connector. */
  stuck(): string | null {
    if (this.idle <= this.bound) return null;
    return (
      `made no progress in its last ${this.idle} inputs (requests, RECORD and STATE lines), more than the bound of ${LOOP_BASE} + 2 x the ${this.served.size} event version(s) served to it: ` +
      `no page served an event version it had not been served, no RECORD was of a new version, no STATE was new. The connector loops (R9: a repeated or stale page proves no progress). Its last inputs: ${folded(this.recent)}`
    );
  }

  private saw(what: Sighting, fresh: boolean): void {
    if (fresh) {
      this.idle = 0;
      this.recent.length = 0;
      return;
    }
    this.idle++;
    this.recent.push(what);
    if (this.recent.length > RECENT) this.recent.shift();
  }
}

/** Inputs quoted in the reason. */
const RECENT = 12;

/** The inputs, runs of the same one folded: `GET /v1/events?limit=2 (x12)`. */
function folded(inputs: readonly Sighting[]): string {
  const runs: { what: Sighting; n: number }[] = [];
  for (const what of inputs) {
    const last = runs.at(-1);
    if (last?.what === what) last.n++;
    else runs.push({ what, n: 1 });
  }
  return runs.map((r) => (r.n > 1 ? `${r.what} (x${r.n})` : r.what)).join('; ');
}
