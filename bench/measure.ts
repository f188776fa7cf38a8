import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/**
 * What one timed stretch of work cost: wall time, and the CPU time of this process (every
 * thread, the garbage collector's included). CPU time is the figure to compare on a shared
 * machine, where wall time also counts the time other processes held the cores.
 */
export interface Cost {
  readonly wallMs: number;
  readonly cpuMs: number;
}

export interface Clock {
  /** The cost since the clock started. */
  read(): Cost;
}

export function startClock(): Clock {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return {
    read: () => {
      const used = process.cpuUsage(cpu);
      return { wallMs: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
    },
  };
}

export async function timed<T>(work: () => Promise<T> | T): Promise<{ value: T; cost: Cost }> {
  const clock = startClock();
  const value = await work();
  return { value, cost: clock.read() };
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly n: number;
}

/** Min, median and max of a set of measurements (one per round); null when there are none. */
export function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted.at(-1) as number, n: sorted.length };
}

export interface Memory {
  /** The largest resident set this process has had so far. */
  readonly peakRssMiB: number;
  /** The heap after a full collection, taken while the structures measured were still referenced. */
  readonly heapLiveMiB: number | null;
}

/**
 * The heap that is really live right now: a full collection first (the bench runs with
 * --expose-gc), so the figure does not depend on when the collector last ran. Callers take it
 * while the structures they measure are still referenced, never after they became garbage.
 */
export function liveHeapMiB(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 2 ** 10;
}

let ticks: number | null | undefined;

function clockTicks(): number | null {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || null;
    } catch {
      ticks = null;
    }
  }
  return ticks;
}

/**
 * A process's CPU time from /proc (Linux), in ms: its own (utime + stime) and that of its
 * terminated and reaped children (cutime + cstime). Null where /proc cannot say.
 */
export function procCpuMs(pid: number | 'self'): { readonly own: number; readonly children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const [utime, stime, cutime, cstime] = [fields[11], fields[12], fields[13], fields[14]];
    const hz = clockTicks();
    if (hz === null || ![utime, stime, cutime, cstime].every((n) => Number.isFinite(n))) return null;
    return { own: (((utime as number) + (stime as number)) * 1000) / hz, children: (((cutime as number) + (cstime as number)) * 1000) / hz };
  } catch {
    return null;
  }
}

