/**
 * R1: one stable total order. An event's position is its ordering tuple followed by its
 * unique, immutable id, so two events with equal ordering fields still have distinct,
 * comparable positions and a tie can never hide one of them.
 */

/** A point in the stable total order: the ordering tuple, then the id as tie-break. */
export interface Position {
  readonly key: readonly number[];
  readonly id: string;
}

/** Compares ordering tuples field by field; a shorter tuple sorts first on a shared prefix. */
export function compareKeys(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** The stable total order: key tuple first, id second (plain code-unit order, locale-free). */
export function comparePositions(a: Position, b: Position): number {
  const k = compareKeys(a.key, b.key);
  if (k !== 0) return k;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

/**
 * True when `value` has the shape of a position. Consumers write whatever they like into
 * their watermark; the model decides from the shape and from ground truth whether it is a
 * position of the bound order at all (an opaque page token is not).
 */
export function isPosition(value: unknown): value is Position {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { key?: unknown; id?: unknown };
  if (typeof v.id !== 'string' || !Array.isArray(v.key)) return false;
  // A loop, not `every` with a callback: ground truth asks this of every watermark and resume.
  // A hole in the array is skipped, as `every` skips it.
  const key = v.key as readonly unknown[];
  for (let i = 0; i < key.length; i++) {
    const x = key[i];
    if (!(typeof x === 'number' && Number.isFinite(x)) && i in key) return false;
  }
  return true;
}

export function formatPosition(p: Position): string {
  return `${p.key.join(',')}#${p.id}`;
}
