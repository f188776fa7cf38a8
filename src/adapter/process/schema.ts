import { readFileSync } from 'node:fs';

/**
 * The protocol's JSON Schema (schema/protocol.schema.json, shipped with the package) and
 * the check the bridge runs on every message a consumer process writes.
 *
 * The check interprets the schema file itself, so the schema users validate against and
 * the one the harness enforces cannot drift apart. It implements exactly the keywords the
 * schema uses (type, const, enum, properties, required, items, prefixItems, minItems,
 * maxItems, minLength, minimum, oneOf, anyOf, local $ref) and refuses to load a schema with
 * any other assertion keyword, rather than silently ignoring it. That keeps the harness free
 * of a runtime dependency in its users' CI, and lets an error name the one field that is
 * wrong (`hello.capabilities.delivery must be one of ...`) instead of listing every branch
 * of every oneOf, which a general validator does. The schema and this check are tested
 * against each other, message by message.
 */
export type Schema = boolean | { readonly [keyword: string]: unknown };

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', '$defs', 'title', 'description', 'default', 'examples']);
const ASSERTIONS = new Set(['type', 'const', 'enum', 'properties', 'required', 'items', 'prefixItems', 'minItems', 'maxItems', 'minLength', 'minimum', 'oneOf', 'anyOf', '$ref']);

const MESSAGES = new Set(['hello', 'call', 'inspection', 'crashed', 'start', 'reply', 'inspect', 'crash']);

let loaded: { readonly root: Record<string, unknown> } | null = null;

/** The shipped schema, read once. It lies at the package root, beside src/ and dist/. */
export function protocolSchema(): Record<string, unknown> {
  if (loaded) return loaded.root;
  const source = import.meta.url.endsWith('.ts');
  const url = new URL(source ? '../../../schema/protocol.schema.json' : '../../../../schema/protocol.schema.json', import.meta.url);
  const root = JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
  checkKeywords(root, '#');
  loaded = { root };
  return root;
}

/** Throws when the schema uses a keyword this check does not implement. */
export function checkKeywords(schema: unknown, at: string): void {
  if (typeof schema === 'boolean') return;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error(`${at} is not a schema`);
  for (const [keyword, value] of Object.entries(schema)) {
    if (!ANNOTATIONS.has(keyword) && !ASSERTIONS.has(keyword)) throw new Error(`${at} uses "${keyword}", which the protocol check does not implement`);
    if (keyword === '$defs' || keyword === 'properties') for (const [k, s] of Object.entries(value as object)) checkKeywords(s, `${at}/${keyword}/${k}`);
    if (keyword === 'items') checkKeywords(value, `${at}/items`);
    if (keyword === 'prefixItems' || keyword === 'oneOf' || keyword === 'anyOf') (value as unknown[]).forEach((s, i) => checkKeywords(s, `${at}/${keyword}/${i}`));
    if (keyword === '$ref' && !(typeof value === 'string' && value.startsWith('#/$defs/'))) throw new Error(`${at}: only local references (#/$defs/...) are implemented`);
  }
}

/**
 * Checks a message against one definition of the schema (`fromConsumer`, `fromHarness`,
 * or any other in $defs). Returns null when it conforms, or one sentence naming the first
 * field that does not, rooted at the message's type (`call.method must be ...`).
 *
 * Nearly every message conforms, and the bridge checks every one a process writes: a
 * predicate compiled once from the schema says so in a fraction of the interpreter's time,
 * and the interpreter words the problem of a message that does not. The two are held to the
 * same verdict on every message of docs/protocol.md and on thousands of broken ones
 * (test/protocol-schema.test.ts).
 */
export function protocolProblem(definition: string, message: unknown): string | null {
  return protocolConforms(definition, message) ? null : explainProblem(definition, message);
}

/** The interpreter's verdict on a message: null, or the sentence naming its first wrong field. */
export function explainProblem(definition: string, message: unknown): string | null {
  const defs = protocolSchema().$defs as Record<string, Schema>;
  const schema = definitionOf(defs, definition);
  // Rooted at the message's type when it names a message of the schema: `call.method`.
  const type = (message as { type?: unknown } | null)?.type;
  const name = typeof type === 'string' && MESSAGES.has(type) ? type : 'message';
  return new Checker(defs).check(schema, message, name);
}

/** Each definition's compiled predicate, made on first use. */
const predicates = new Map<string, (value: unknown) => boolean>();

/** The compiled predicate's verdict on a message: whether it conforms to the definition. */
export function protocolConforms(definition: string, message: unknown): boolean {
  let predicate = predicates.get(definition);
  if (predicate === undefined) {
    const defs = protocolSchema().$defs as Record<string, Schema>;
    predicate = compile(definitionOf(defs, definition), defs, new Map());
    predicates.set(definition, predicate);
  }
  return predicate(message);
}

function definitionOf(defs: Record<string, Schema>, definition: string): Schema {
  // Own definitions only: `constructor` is no definition of the schema.
  const schema = Object.hasOwn(defs, definition) ? defs[definition] : undefined;
  if (schema === undefined) throw new Error(`the protocol schema has no definition '${definition}'`);
  return schema;
}

/**
 * The schema as one predicate: the keywords Checker interprets, with the same meaning, each
 * turned into a closure once. A reference is compiled once and called through a slot, so a
 * schema that refers to itself compiles.
 */
function compile(schema: Schema, defs: Record<string, Schema>, refs: Map<string, { f: (value: unknown) => boolean }>): (value: unknown) => boolean {
  if (schema === true) return () => true;
  if (schema === false) return () => false;
  const s = schema;
  const tests: ((value: unknown) => boolean)[] = [];
  if (typeof s.$ref === 'string') {
    const ref = s.$ref;
    let slot = refs.get(ref);
    if (slot === undefined) {
      const target = defs[ref.slice('#/$defs/'.length)];
      if (target === undefined) throw new Error(`the protocol schema has no ${ref}`);
      slot = { f: () => false };
      refs.set(ref, slot);
      slot.f = compile(target, defs, refs);
    }
    const called = slot;
    tests.push((v) => called.f(v));
  }
  if (s.type !== undefined) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
    tests.push((v) => types.some((t) => hasType(v, t)));
  }
  if ('const' in s) {
    const c = s.const;
    tests.push((v) => equal(v, c));
  }
  if (Array.isArray(s.enum)) {
    const values = s.enum as unknown[];
    tests.push((v) => values.some((e) => equal(v, e)));
  }
  if (typeof s.minLength === 'number') {
    const min = s.minLength;
    // Characters are code points: a string of 2 * min UTF-16 units has at least min of them.
    tests.push((v) => typeof v !== 'string' || v.length >= 2 * min || [...v].length >= min);
  }
  if (typeof s.minimum === 'number') {
    const min = s.minimum;
    tests.push((v) => typeof v !== 'number' || v >= min);
  }
  const required = (s.required as string[] | undefined) ?? [];
  const properties = Object.entries((s.properties as Record<string, Schema> | undefined) ?? {}).map(([key, sub]) => [key, compile(sub, defs, refs)] as const);
  if (required.length > 0 || properties.length > 0) {
    tests.push((v) => {
      if (!isObject(v)) return true;
      for (const key of required) if (!(key in v)) return false;
      for (const [key, f] of properties) if (key in v && !f(v[key])) return false;
      return true;
    });
  }
  const minItems = typeof s.minItems === 'number' ? s.minItems : null;
  const maxItems = typeof s.maxItems === 'number' ? s.maxItems : null;
  const prefix = ((s.prefixItems as Schema[] | undefined) ?? []).map((sub) => compile(sub, defs, refs));
  const items = s.items === undefined ? null : compile(s.items as Schema, defs, refs);
  if (minItems !== null || maxItems !== null || prefix.length > 0 || items !== null) {
    tests.push((v) => {
      if (!Array.isArray(v)) return true;
      if ((minItems !== null && v.length < minItems) || (maxItems !== null && v.length > maxItems)) return false;
      for (let i = 0; i < v.length; i++) {
        const f = i < prefix.length ? prefix[i] : items;
        if (f && !f(v[i])) return false;
      }
      return true;
    });
  }
  if (Array.isArray(s.oneOf)) {
    const branches = (s.oneOf as Schema[]).map((b) => compile(b, defs, refs));
    tests.push((v) => {
      let matches = 0;
      for (const f of branches) if (f(v) && ++matches > 1) return false;
      return matches === 1;
    });
  }
  if (Array.isArray(s.anyOf)) {
    const branches = (s.anyOf as Schema[]).map((b) => compile(b, defs, refs));
    tests.push((v) => branches.some((f) => f(v)));
  }
  return (v) => {
    for (const t of tests) if (!t(v)) return false;
    return true;
  };
}

class Checker {
  constructor(private readonly defs: Record<string, Schema>) {}

  check(schema: Schema, value: unknown, at: string): string | null {
    if (schema === true) return null;
    if (schema === false) return `${at} is not allowed`;
    const s = schema as Record<string, unknown>;
    if (typeof s.$ref === 'string') {
      const problem = this.check(this.resolve(s.$ref), value, at);
      if (problem !== null) return problem;
    }
    if (s.type !== undefined) {
      const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
      if (!types.some((t) => hasType(value, t))) return `${at} must be ${types.map(article).join(' or ')}, got ${describe(value)}`;
    }
    if ('const' in s && !equal(value, s.const)) return `${at} must be ${JSON.stringify(s.const)}, got ${describe(value)}`;
    if (Array.isArray(s.enum) && !s.enum.some((e) => equal(value, e))) return `${at} must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}, got ${describe(value)}`;
    if (typeof value === 'string' && typeof s.minLength === 'number' && [...value].length < s.minLength) return `${at} must have at least ${s.minLength} character${s.minLength === 1 ? '' : 's'}`;
    if (typeof value === 'number' && typeof s.minimum === 'number' && value < s.minimum) return `${at} must be at least ${s.minimum}, got ${value}`;
    if (isObject(value)) {
      for (const key of (s.required as string[] | undefined) ?? []) if (!(key in value)) return `${at}.${key} is missing`;
      for (const [key, sub] of Object.entries((s.properties as Record<string, Schema> | undefined) ?? {})) {
        if (!(key in value)) continue;
        const problem = this.check(sub, value[key], `${at}.${key}`);
        if (problem !== null) return problem;
      }
    }
    if (Array.isArray(value)) {
      if (typeof s.minItems === 'number' && value.length < s.minItems) return `${at} must have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}, got ${value.length}`;
      if (typeof s.maxItems === 'number' && value.length > s.maxItems) return `${at} must have at most ${s.maxItems} item${s.maxItems === 1 ? '' : 's'}, got ${value.length}`;
      const prefix = (s.prefixItems as Schema[] | undefined) ?? [];
      for (const [i, item] of value.entries()) {
        const sub = i < prefix.length ? prefix[i] : (s.items as Schema | undefined);
        if (sub === undefined) continue;
        const problem = this.check(sub, item, `${at}[${i}]`);
        if (problem !== null) return problem;
      }
    }
    if (Array.isArray(s.oneOf)) {
      const problem = this.oneOf(s.oneOf as Schema[], value, at, true);
      if (problem !== null) return problem;
    }
    if (Array.isArray(s.anyOf)) {
      const problem = this.oneOf(s.anyOf as Schema[], value, at, false);
      if (problem !== null) return problem;
    }
    return null;
  }

  /**
   * oneOf (exactly one branch) or anyOf (at least one). When none matches, the branch the
   * value was meant for is the one whose constant fields (a message's `type`, a store
   * operation's `op`) it carries: that branch's problem is the one worth reading.
   */
  private oneOf(branches: readonly Schema[], value: unknown, at: string, exactly: boolean): string | null {
    const problems = branches.map((b) => this.check(b, value, at));
    const matches = problems.filter((p) => p === null).length;
    if (matches === 1 || (matches > 1 && !exactly)) return null;
    if (matches > 1) return `${at} matches more than one of its forms`;
    const tags = branches.map((b) => this.tags(b));
    if (tags.every((t) => Object.keys(t).length > 0) && !isObject(value) && tags.every((_, i) => this.wantsObject(branches[i] as Schema))) return `${at} must be an object, got ${describe(value)}`;
    if (isObject(value)) {
      const meant = tags.flatMap((t, i) => (Object.keys(t).length > 0 && Object.entries(t).every(([k, c]) => equal(value[k], c)) ? [i] : []));
      if (meant.length === 1) return problems[meant[0] as number] as string;
      // The field that tells the forms apart is wrong: say which values it may take, among
      // the forms whose other constant fields the value does carry.
      for (const key of new Set(tags.flatMap((t) => Object.keys(t)))) {
        if (meant.length > 0) break;
        const near = tags.filter((t) => key in t && Object.entries(t).every(([k, c]) => k === key || equal(value[k], c)));
        if (near.length > 0) return `${at}.${key} must be one of ${near.map((t) => JSON.stringify(t[key])).join(', ')}, got ${describe(value[key])}`;
      }
    }
    const firstProblem = problems.find((p) => p !== null);
    return branches.length === 1 && firstProblem ? firstProblem : `${at} matches none of its forms (${describe(value)})`;
  }

  /** The constant fields of an object schema, through references. */
  private tags(schema: Schema): Record<string, unknown> {
    if (typeof schema === 'boolean') return {};
    if (typeof schema.$ref === 'string') return this.tags(this.resolve(schema.$ref));
    const out: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      if (typeof sub === 'object' && 'const' in sub) out[key] = sub.const;
    }
    if (Object.keys(out).length === 0 && Array.isArray(schema.oneOf)) {
      // A union of unions (reply's ok and error forms): the tags all its branches share.
      const inner = (schema.oneOf as Schema[]).map((b) => this.tags(b));
      for (const [key, c] of Object.entries(inner[0] ?? {})) if (inner.every((t) => equal(t[key], c))) out[key] = c;
    }
    return out;
  }

  private wantsObject(schema: Schema): boolean {
    if (typeof schema === 'boolean') return false;
    if (typeof schema.$ref === 'string') return this.wantsObject(this.resolve(schema.$ref));
    if (schema.type === 'object') return true;
    return Array.isArray(schema.oneOf) && (schema.oneOf as Schema[]).every((b) => this.wantsObject(b));
  }

  private resolve(ref: string): Schema {
    const schema = this.defs[ref.slice('#/$defs/'.length)];
    if (schema === undefined) throw new Error(`the protocol schema has no ${ref}`);
    return schema;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function article(type: string): string {
  return type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}
