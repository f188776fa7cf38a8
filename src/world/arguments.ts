/**
 * Checks on what a consumer hands the world. Every argument is recorded in the history,
 * which is hashed, replayed and written out as JSON, so an argument must be JSON data: a
 * cycle, a BigInt or a function would break the harness long after the call, far from the
 * adapter line that made it. Found at the call instead, it is that call's `bad-request`,
 * naming the field.
 */

/**
 * What is wrong with a value that is not an object as JSON data, as the end of a sentence
 * that starts with its path ("is NaN, which JSON cannot carry"), or null when it is fine.
 */
export function notJson(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      // undefined is what an omitted optional field looks like; JSON leaves it out.
      return null;
    case 'number':
      return Number.isFinite(value) ? null : `is ${String(value)}, which JSON cannot carry`;
    case 'bigint':
      return `is a BigInt (${String(value)}n); the world takes plain numbers`;
    case 'function':
    case 'symbol':
      return `is a ${typeof value}; the world takes JSON data`;
    default:
      return null;
  }
}

export const CYCLIC = 'is cyclic: it contains itself';

/** JSON has no holes: `[1, , 3]` would print as `[1,null,3]`, which is not what was handed over. */
export const HOLE = 'is a hole in an array; the world takes JSON data, which has none';

/**
 * Where a walk is, as the segments below its root: a path string is built only for the
 * problem, never for every field walked (that was most of what checking an argument cost).
 */
export class Where {
  private readonly segments: (string | number)[] = [];

  constructor(private root: string) {}

  /** Back at the root, renamed: a walk that threw half-way leaves segments behind. */
  reset(root: string): void {
    this.root = root;
    // Only when a walk threw half-way: setting the length gives up the array's room.
    if (this.segments.length > 0) this.segments.length = 0;
  }

  enter(segment: string | number): void {
    this.segments.push(segment);
  }

  leave(): void {
    this.segments.pop();
  }

  /** "root.field[2].key", the path of where the walk is now. */
  path(): string {
    let out = this.root;
    for (const s of this.segments) out += typeof s === 'number' ? `[${s}]` : `.${s}`;
    return out;
  }
}

/** Where `value` stops being JSON data, as "path: problem", or null when it is JSON data. */
export function jsonProblem(value: unknown, path: string): string | null {
  try {
    if (value === null || typeof value !== 'object') {
      const problem = notJson(value);
      return problem === null ? null : `${path} ${problem}`;
    }
    // Most arguments are flat (an event reference, options): their fields are settled here,
    // without the path and ancestors a deeper walk keeps, which only a field holding an
    // object or array starts. Each field is read once, as the walk alone read it: a getter
    // asked twice could answer differently the second time.
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = i in value ? fieldProblem(value, value[i], path, i) : `${path}[${i}] ${HOLE}`;
        if (problem !== null) return problem;
      }
      return null;
    }
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      const problem = fieldProblem(value, record[k], path, k);
      if (problem !== null) return problem;
    }
    return null;
  } catch (error) {
    // A getter or proxy that throws, or nesting deeper than the stack.
    return `${path} cannot be read as JSON data: ${error instanceof Error ? error.message : 'it threw'}`;
  }
}

/** Where a field of `parent` (at `path`) stops being JSON data: a primitive at once, anything below by the full walk. */
function fieldProblem(parent: object, v: unknown, path: string, segment: string | number): string | null {
  if (v === null || typeof v !== 'object') {
    const problem = notJson(v);
    return problem === null ? null : `${path}${typeof segment === 'number' ? `[${segment}]` : `.${segment}`} ${problem}`;
  }
  const where = new Where(path);
  where.enter(segment);
  return walk(v, where, [parent]);
}

/**
 * The full check: where the value stops being JSON data, in the order fields are met.
 * Ancestors only: the same object twice in different branches is fine (JSON copies it), an
 * object inside itself is not.
 */
function walk(v: unknown, where: Where, ancestors: object[]): string | null {
  if (v === null || typeof v !== 'object') {
    const problem = notJson(v);
    return problem === null ? null : `${where.path()} ${problem}`;
  }
  if (ancestors.includes(v)) return `${where.path()} ${CYCLIC}`;
  ancestors.push(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      where.enter(i);
      const problem = i in v ? walk(v[i], where, ancestors) : `${where.path()} ${HOLE}`;
      where.leave();
      if (problem !== null) return problem;
    }
  } else {
    const record = v as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      where.enter(k);
      const problem = walk(record[k], where, ancestors);
      where.leave();
      if (problem !== null) return problem;
    }
  }
  ancestors.pop();
  return null;
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
