import type { Io } from './io.js';

/**
 * Progress of a check, for people watching it: on a terminal, one status line rewritten in
 * place (done/total, rate, time left); elsewhere (CI logs, pipes), a plain line every
 * `heartbeatMs`, so a long run never looks dead to a no-output timeout. Worlds tried while
 * shrinking a failure are counted apart from generated worlds: only these go towards --runs.
 */
export class Progress {
  private stage: 'regressions' | 'scenarios' | 'worlds' = 'regressions';
  private done = 0;
  private total = 0;
  private generated = 0;
  private shrinkTried = 0;
  private worldsSince: number | null = null;
  private readonly started = Date.now();
  private shownAt = 0;
  private readonly timer: ReturnType<typeof setInterval> | null;

  constructor(
    private readonly io: Io,
    private readonly options: { readonly runs: number; readonly heartbeatMs: number; readonly timeLimitMs?: number; readonly scenarios?: number },
  ) {
    // The heartbeat must never keep the process alive: it is unref'd.
    this.timer = io.status === undefined && options.heartbeatMs > 0 ? setInterval(() => this.io.out(`  ... ${this.line()}`), options.heartbeatMs) : null;
    this.timer?.unref();
  }

  regressions(done: number, total: number): void {
    this.set('regressions', done, total);
  }

  scenarios(done: number, total: number): void {
    this.set('scenarios', done, total);
  }

  /** One more world executed: a generated one, or one tried while shrinking a failure. */
  world(shrinking: boolean): void {
    if (this.stage !== 'worlds') {
      this.stage = 'worlds';
      this.worldsSince = Date.now();
    }
    if (shrinking || this.shrinkTried > 0) this.shrinkTried++;
    else this.generated++;
    this.show();
  }

  /** What the run is doing, in one line. */
  line(): string {
    const elapsed = `${seconds(Date.now() - this.started)} elapsed`;
    if (this.stage !== 'worlds') return `${this.stage}: ${this.done} of ${this.total} done, ${elapsed}`;
    if (this.shrinkTried > 0) return `a failure after ${this.generated} generated worlds: ${this.shrinkTried} more tried while shrinking and searching again, ${elapsed}`;
    const ms = Date.now() - (this.worldsSince ?? this.started);
    const rate = ms > 0 ? (this.generated * 1000) / ms : 0;
    let left = rate > 0 ? ((this.options.runs - this.generated) * 1000) / rate : Number.POSITIVE_INFINITY;
    if (this.options.timeLimitMs !== undefined) left = Math.min(left, Math.max(0, this.options.timeLimitMs - ms));
    const eta = Number.isFinite(left) ? `, about ${seconds(left)} left` : '';
    return `generated worlds: ${this.generated} of ${this.options.runs} (${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s${eta}), ${elapsed}`;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.io.status?.(null);
  }

  /**
   * A phase that has finished hands over to the next at once, so that a heartbeat names what
   * runs now ("scenarios: 0 of 17"), never the phase that is over ("regressions: 3 of 3 done").
   */
  private set(stage: 'regressions' | 'scenarios', done: number, total: number): void {
    this.stage = stage;
    this.done = done;
    this.total = total;
    if (done === total && stage === 'regressions' && (this.options.scenarios ?? 0) > 0) {
      this.stage = 'scenarios';
      this.done = 0;
      this.total = this.options.scenarios ?? 0;
    } else if (done === total && (stage === 'scenarios' || (this.options.scenarios ?? 0) === 0) && this.options.runs > 0) {
      this.stage = 'worlds';
      this.worldsSince = Date.now();
    }
    this.show();
  }

  /** On a terminal, at most ten updates a second: a status line costs a write. */
  private show(): void {
    if (!this.io.status) return;
    const now = Date.now();
    if (now - this.shownAt < 100) return;
    this.shownAt = now;
    this.io.status(this.line());
  }
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
