/**
 * Deep-frozen copies of plain data, for everything that crosses between the world and a
 * consumer. The oracle judges the history and the plan; if a consumer held the very objects
 * they hold (the binding, a served event, a durable state it loaded, or the watermark it
 * committed), it could rewrite what it is judged against. So what the world hands out is
 * frozen, and what a consumer hands in is copied before the world records or keeps it.
 */

/** Objects this module froze, all the way down: they can be shared as they are, and are never copied again. */
const FROZEN = new WeakSet<object>();

/**
 * A deep-frozen copy of `value`, or `value` itself when it is a primitive or already came
 * from here. Arrays and plain objects are copied with their own enumerable properties in
 * their original order, so the copy prints as the same JSON (an `undefined` property is
 * kept: `'expect' in op` still tells a compare-and-set from a blind write). Objects of other
 * classes (a Date, a Map) are not plain data and are passed through unchanged.
 * A value that contains itself cannot be recorded and is refused with a TypeError.
 */
export function frozenCopy<T>(value: T): T {
  return copy(value, []) as T;
}

/**
 * Freezes a value the world built itself, in place and all the way down: no copy is needed
 * when nothing else holds it. Returns it.
 */
export function freezeOwn<T>(value: T): T {
  if (value === null || typeof value !== 'object' || FROZEN.has(value)) return value;
  for (const name of Object.keys(value)) freezeOwn((value as Record<string, unknown>)[name]);
  Object.freeze(value);
  FROZEN.add(value);
  return value;
}

/** Whether the world froze this value all the way down (so it can never change under a cache keyed by it). */
export function isFrozenDeep(value: object): boolean {
  return FROZEN.has(value);
}

function copy(value: unknown, path: object[]): unknown {
  if (value === null || typeof value !== 'object' || FROZEN.has(value)) return value;
  if (!Array.isArray(value) && !isPlainObject(value)) return value;
  if (path.includes(value)) throw new TypeError('a value handed to the world contains itself; it cannot be recorded');
  path.push(value);
  let out: unknown;
  if (Array.isArray(value)) {
    // map keeps holes as holes, so the copy prints as the original does.
    out = value.map((item) => copy(item, path));
  } else {
    const record: Record<string, unknown> = Object.getPrototypeOf(value) === null ? Object.create(null) : {};
    for (const name of Object.keys(value)) {
      const item = copy((value as Record<string, unknown>)[name], path);
      // Assigning `__proto__` would set the prototype; JSON.parse makes it an own property, and so does this.
      if (name === '__proto__') Object.defineProperty(record, name, { value: item, enumerable: true, writable: true, configurable: true });
      else record[name] = item;
    }
    out = record;
  }
  path.pop();
  Object.freeze(out);
  FROZEN.add(out as object);
  return out;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
