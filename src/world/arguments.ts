/**
 * Checks on what a consumer hands the world. Every argument is recorded in the history,
 * which is hashed, replayed and written out as JSON, so an argument must be JSON data: a
 * cycle, a BigInt or a function would break the harness long after the call, far from the
 * adapter line that made it. Found at the call instead, it is that call's `bad-request`,
 * naming the field.
 */

/** Where `value` stops being JSON data, as "path: problem", or null when it is JSON data. */
export function jsonProblem(value: unknown, path: string): string | null {
  // Ancestors only: the same object twice in different branches is fine (JSON copies it),
  // an object inside itself is not.
  const ancestors = new Set<object>();
  const walk = (v: unknown, at: string): string | null => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
      case 'undefined':
        // undefined is what an omitted optional field looks like; JSON leaves it out.
        return null;
      case 'number':
        return Number.isFinite(v) ? null : `${at} is ${String(v)}, which JSON cannot carry`;
      case 'bigint':
        return `${at} is a BigInt (${String(v)}n); the world takes plain numbers`;
      case 'function':
      case 'symbol':
        return `${at} is a ${typeof v}; the world takes JSON data`;
      default: {
        if (v === null) return null;
        const o = v as object;
        if (ancestors.has(o)) return `${at} is cyclic: it contains itself`;
        ancestors.add(o);
        const entries: [string, unknown][] = Array.isArray(o) ? o.map((x, i) => [`${at}[${i}]`, x]) : Object.keys(o).map((k) => [`${at}.${k}`, (o as Record<string, unknown>)[k]]);
        for (const [p, x] of entries) {
          const problem = walk(x, p);
          if (problem !== null) return problem;
        }
        ancestors.delete(o);
        return null;
      }
    }
  };
  try {
    return walk(value, path);
  } catch (error) {
    // A getter or proxy that throws, or nesting deeper than the stack.
    return `${path} cannot be read as JSON data: ${error instanceof Error ? error.message : 'it threw'}`;
  }
}

/** True for an ordering key: an array of finite numbers. */
export function isKey(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((x) => typeof x === 'number' && Number.isFinite(x));
}

/** A short, safe rendering of a bad value for a message: never throws. */
export function shown(value: unknown, max = 80): string {
  if (value === undefined) return 'undefined';
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, max);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
