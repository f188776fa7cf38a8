/**
 * Deep-frozen copies of plain data, for everything that crosses between the world and a
 * consumer. The oracle judges the history and the plan; if a consumer held the very objects
 * they hold (the binding, a served event, a durable state it loaded, or the watermark it
 * committed), it could rewrite what it is judged against. So what the world hands out is
 * frozen, and what a consumer hands in is copied before the world records or keeps it.
 *
 * A copy is made once per object that crosses, and the copier is written for speed: a
 * default world copies a few hundred small objects, and a slow copier cost a tenth of the
 * world's CPU time.
 */

/** Deeper than any data a consumer has reason to hand over: deeper than this, it is taken to contain itself. */
const MAX_DEPTH = 200;

/**
 * A deep-frozen copy of `value` (a primitive is returned as it is). Arrays and plain
 * objects are copied with their own enumerable properties in their original order, so the
 * copy prints as the same JSON; an `undefined` property is kept (`'expect' in op` still
 * tells a compare-and-set from a blind write), and so are an array's holes. Objects of
 * other classes (a Date, a Map) are not plain data and are passed through unchanged.
 * A value nested deeper than any real one (one that contains itself, say) cannot be
 * recorded and is refused with a TypeError.
 */
export function frozenCopy<T>(value: T): T {
  return copy(value, 0) as T;
}

/**
 * Freezes a value the world built itself and nobody else holds, in place and all the way
 * down, instead of copying it. Returns it.
 */
export function freezeOwn<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) freezeOwn(record[name]);
  return Object.freeze(value);
}

function copy(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) throw new TypeError('a value handed to the world is nested too deep, or contains itself; it cannot be recorded');
  if (Array.isArray(value)) {
    const n = value.length;
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      // A hole stays a hole: a sparse array prints as it did.
      if (i in value) out[i] = copy(value[i], depth + 1);
      else out.length = i + 1;
    }
    return Object.freeze(out);
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    const item = copy(record[name], depth + 1);
    // Assigning `__proto__` would set the prototype; JSON.parse makes it an own property, and so does this.
    if (name === '__proto__') Object.defineProperty(out, name, { value: item, enumerable: true, writable: true, configurable: true });
    else out[name] = item;
  }
  return Object.freeze(out);
}
