import { CYCLIC, HOLE, notJson, Where } from './arguments.js';

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
  return plain().copy(value, 0) as T;
}

/** The copier of the world's own values: it keeps no state while it copies, so one serves every copy. */
let plainCopier: Copier | null = null;
const plain = (): Copier => (plainCopier ??= new Copier(null));

/** A consumer's argument, copied: the frozen copy, or where it stops being JSON data. */
export type Checked<T> = { readonly copy: T; readonly problem: null } | { readonly copy: undefined; readonly problem: string };

/**
 * A frozen copy of an argument a consumer hands the world, checked on the way: one walk
 * that finds what `jsonProblem` finds (the same problem, with the same path) and copies what
 * `frozenCopy` copies. Checking first and copying after walked every argument twice, and
 * built a path string for every field it passed. A value that is JSON data but nested deeper
 * than any real one is refused with frozenCopy's TypeError.
 */
export function checkedCopy<T>(value: T, path: string): Checked<T> {
  // The spare checking copier, if no check is under way (a getter of a consumer's argument
  // may call the world again): every call a consumer makes is checked, and a copier with its
  // path and ancestors made for each was a good part of what the check allocated.
  const copier = spare ?? new Copier(new Where(path));
  spare = null;
  copier.reset(path);
  let copy: unknown;
  try {
    copy = copier.copy(value, 0);
  } catch (error) {
    // A getter or proxy that throws, or nesting deeper than the stack.
    return { copy: undefined, problem: `${path} cannot be read as JSON data: ${error instanceof Error ? error.message : 'it threw'}` };
  } finally {
    spare = copier;
  }
  if (copier.problem !== null) return { copy: undefined, problem: copier.problem };
  if (copier.tooDeep) throw tooDeep();
  return { copy: copy as T, problem: null };
}

/** A checking copier no check is using now (see checkedCopy). */
let spare: Copier | null = null;

/**
 * Freezes a value the world built itself and nobody else holds, in place and all the way
 * down, instead of copying it. Returns it.
 */
export function freezeOwn<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    // By index: the keys of an array are its indices as strings, a list made for nothing.
    // (A hole reads as undefined, which there is nothing to freeze in.)
    for (let i = 0; i < value.length; i++) freezeOwn(value[i]);
    return Object.freeze(value);
  }
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) freezeOwn(record[name]);
  return Object.freeze(value);
}

function tooDeep(): TypeError {
  return new TypeError('a value handed to the world is nested too deep, or contains itself; it cannot be recorded');
}

/**
 * The copier. With a `Where`, it also checks that the value is JSON data, and stops at the
 * first problem; without, it only copies (the world's own values, which are data already).
 */
class Copier {
  problem: string | null = null;
  /** Deeper than MAX_DEPTH somewhere: refused once the check found nothing else. */
  tooDeep = false;
  /** The objects the check is inside of, to tell a value that contains itself (checked copies only). */
  private readonly ancestors: object[] = [];

  constructor(private readonly where: Where | null) {}

  /** Ready for a new check from `root`, whatever an earlier one left behind (it may have thrown half-way). */
  reset(root: string): void {
    this.problem = null;
    this.tooDeep = false;
    // Only when a check threw half-way: setting the length gives up the array's room.
    if (this.ancestors.length > 0) this.ancestors.length = 0;
    this.where?.reset(root);
  }

  copy(value: unknown, depth: number): unknown {
    const where = this.where;
    if (value === null || typeof value !== 'object') {
      if (where !== null) {
        const problem = notJson(value);
        if (problem !== null) this.problem = `${where.path()} ${problem}`;
      }
      return value;
    }
    if (where === null) {
      if (depth > MAX_DEPTH) throw tooDeep();
      return Array.isArray(value) ? this.array(value, depth) : this.object(value, depth);
    }
    if (this.ancestors.includes(value)) {
      this.problem = `${where.path()} ${CYCLIC}`;
      return undefined;
    }
    // The check goes on past the depth limit, so that a problem further on is still the one told.
    if (depth > MAX_DEPTH) this.tooDeep = true;
    this.ancestors.push(value);
    const out = Array.isArray(value) ? this.array(value, depth) : this.object(value, depth);
    this.ancestors.pop();
    return out;
  }

  /**
   * The copy of what an array or object holds at `segment`. A primitive, most of what
   * arguments hold, is checked where it is: the path is entered only to go below, or to
   * name a problem.
   */
  private field(value: unknown, segment: string | number, depth: number): unknown {
    const where = this.where;
    if (value === null || typeof value !== 'object') {
      const problem = where === null ? null : notJson(value);
      if (problem !== null) {
        (where as Where).enter(segment);
        this.problem = `${(where as Where).path()} ${problem}`;
        (where as Where).leave();
      }
      return value;
    }
    where?.enter(segment);
    const item = this.copy(value, depth + 1);
    where?.leave();
    return item;
  }

  private array(value: readonly unknown[], depth: number): unknown {
    const where = this.where;
    const n = value.length;
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      if (!(i in value)) {
        // The world's own values keep a hole as a hole, so a sparse array prints as it did;
        // a consumer's argument has none to keep (see HOLE).
        if (where !== null) {
          where.enter(i);
          this.problem = `${where.path()} ${HOLE}`;
          where.leave();
          return undefined;
        }
        out.length = i + 1;
        continue;
      }
      out[i] = this.field(value[i], i, depth);
      if (this.problem !== null) return undefined;
    }
    return Object.freeze(out);
  }

  private object(value: object, depth: number): unknown {
    const where = this.where;
    const proto: unknown = Object.getPrototypeOf(value);
    const plain = proto === Object.prototype || proto === null;
    // Not plain data: passed through as it is, though what it holds is still checked.
    if (!plain && where === null) return value;
    const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
    const record = value as Record<string, unknown>;
    for (const name of Object.keys(record)) {
      const item = this.field(record[name], name, depth);
      if (this.problem !== null) return undefined;
      if (!plain) continue;
      // Assigning `__proto__` would set the prototype; JSON.parse makes it an own property, and so does this.
      if (name === '__proto__') Object.defineProperty(out, name, { value: item, enumerable: true, writable: true, configurable: true });
      else out[name] = item;
    }
    return plain ? Object.freeze(out) : value;
  }
}
