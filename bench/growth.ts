import { ADVERSITY_EVERY } from './large-world.js';
import { spread, type Spread } from './measure.js';

/**
 * The growth row of `npm run bench`: whether a world's cost grows linearly with its events.
 * Calm and adverse worlds (bench/large-world.ts) of 100, 1,000 and 10,000 events run through
 * the reference consumer, executed, judged and censused (bench/growth-job.ts), and each
 * size's CPU per world, per event and per call is given as a ratio to the 100-event world's,
 * taken within a round: linear growth is a per-event ratio of 1. The machine is shared, so
 * the row states no absolute target; ratios within one run are what can be compared.
 *
 * The types below are the parts of bench.ts's rows, jobs and results this row uses.
 */
const SIZES = [100, 1000, 10_000] as const;
const KINDS = ['calm', 'adverse'] as const;

interface Measurement {
  readonly kind: (typeof KINDS)[number];
  readonly events: number;
  readonly pageSize: number;
  readonly worlds: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly calls: number;
}

interface Result {
  readonly rounds: readonly Record<string, any>[];
  readonly done: Record<string, any> | null;
  readonly error: string | null;
  readonly timedOut: boolean;
  readonly spec: { readonly limitS: number };
}

const fixed = (n: number, digits: number): string => n.toFixed(digits);
const num = (n: number): string => (Math.abs(n) >= 100 ? fixed(n, 0) : Math.abs(n) >= 10 ? fixed(n, 1) : Math.abs(n) >= 1 ? fixed(n, 2) : fixed(n, 3));
const med = (s: Spread | null): string => (s === null ? '-' : num(s.median));
const ratio = (s: Spread | null): string => (s === null ? '-' : s.n === 1 ? `${fixed(s.median, 2)}x` : `${fixed(s.median, 2)}x (${fixed(s.min, 2)}-${fixed(s.max, 2)})`);

export const growth = {
  title: `growth with the stream: calm and adverse worlds of ${SIZES.map((n) => n.toLocaleString('en-US')).join(', ')} events through the reference consumer, executed, judged and censused; ratios to the 100-event world`,
  jobs: (o: { readonly quick: boolean }) => [
    { key: 'growth', job: 'growth' as const, args: { sizes: SIZES, rounds: o.quick ? 1 : 3, perMeasurement: 10_000 }, limitS: o.quick ? 60 : 150 },
  ],
  report(results: ReadonlyMap<string, Result>) {
    const r = results.get('growth');
    const rounds = (r?.rounds ?? []).map((x) => x.measured as Measurement[]);
    const lines: string[] = [
      `  calm: one worker, no faults, no changes. adverse: for every ${ADVERSITY_EVERY} events five faults (crashes before a commit and after an emit, a failed emit, a timed-out commit, a page quirk), two changes of the source, and a second worker taking the lease over now and then`,
      `  each measurement runs one world often enough for 10,000 events (the 100-event world 100 times), ${rounds.length} round(s); ratios are taken within a round, median (min-max) over rounds; linear growth: per event 1.00x`,
      `  ${'world'.padEnd(16)} ${'page'.padStart(4)} ${'calls/event'.padStart(11)}   ${'CPU/world ms'.padStart(12)} ${'per world'.padStart(22)}   ${'CPU/event µs'.padStart(12)} ${'per event'.padStart(22)} ${'per call'.padStart(22)}`,
    ];
    const summary: Record<string, unknown> = {};
    for (const kind of KINDS) {
      const find = (round: readonly Measurement[], events: number) => round.find((m) => m.kind === kind && m.events === events);
      const perWorld = (m: Measurement) => m.cpuMs / m.worlds;
      const perEvent = (m: Measurement) => perWorld(m) / m.events;
      const perCall = (m: Measurement) => perWorld(m) / m.calls;
      for (const events of SIZES) {
        const ms = rounds.flatMap((round) => find(round, events) ?? []);
        const first = ms[0];
        if (first === undefined) {
          lines.push(`  ${`${kind} ${events.toLocaleString('en-US')}`.padEnd(16)} not measured`);
          continue;
        }
        const against = (f: (m: Measurement) => number) =>
          spread(rounds.flatMap((round) => {
            const m = find(round, events);
            const base = find(round, SIZES[0]);
            return m === undefined || base === undefined ? [] : [f(m) / f(base)];
          }));
        const world = against(perWorld);
        const event = against(perEvent);
        const call = against(perCall);
        summary[`${kind}-${events}`] = { cpuMsPerWorld: spread(ms.map(perWorld)), ratioPerWorld: world, ratioPerEvent: event, ratioPerCall: call, callsPerEvent: first.calls / events };
        lines.push(
          `  ${`${kind} ${events.toLocaleString('en-US')}`.padEnd(16)} ${String(first.pageSize).padStart(4)} ${fixed(first.calls / events, 2).padStart(11)}   ${med(spread(ms.map(perWorld))).padStart(12)} ${ratio(world).padStart(22)}   ${med(spread(ms.map((m) => perEvent(m) * 1000))).padStart(12)} ${ratio(event).padStart(22)} ${ratio(call).padStart(22)}`,
        );
      }
    }
    // The 100-event world reads pages of 10, the others pages of 100, so a consumer makes a
    // different number of calls per event there: between these two only the length differs.
    const [, mid, top] = SIZES;
    const growth = (kind: (typeof KINDS)[number]) =>
      spread(rounds.flatMap((round) => {
        const a = round.find((m) => m.kind === kind && m.events === mid);
        const b = round.find((m) => m.kind === kind && m.events === top);
        return a === undefined || b === undefined ? [] : [b.cpuMs / b.worlds / b.events / (a.cpuMs / a.worlds / a.events)];
      }));
    const steady = KINDS.map((kind) => `${kind} ${ratio(growth(kind))}`).join(', ');
    lines.push(`  from ${mid.toLocaleString('en-US')} to ${top.toLocaleString('en-US')} events, pages of 100 both, CPU per event: ${steady} (linear: 1.00x)`);
    summary.perEventGrowth = Object.fromEntries(KINDS.map((kind) => [kind, growth(kind)]));
    if (r === undefined) lines.push('  this row: not run');
    else if (r.error !== null) lines.push(`  this row: failed, ${r.error}`);
    else if (r.timedOut) lines.push(`  this row: did not finish within ${r.spec.limitS} s of CPU; the rounds above are those that did`);
    if (r?.done?.peakRssMiB !== undefined) lines.push(`  memory: peak RSS ${fixed(r.done.peakRssMiB as number, 1)} MiB`);
    return { lines, targets: [], summary };
  },
};
