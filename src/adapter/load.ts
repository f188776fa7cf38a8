import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { profileProblem, type SourceProfile } from '../../scenarios/profiles.js';
import { doing } from '../cli/activity.js';
import type { AnyConsumer } from './consumer.js';
import { AdapterLoadError } from './errors.js';

export { AdapterLoadError } from './errors.js';

const CONTRACT_KINDS = ['snapshot', 'insertion-stable', 'replay-window', 'none'];

/**
 * Loads a consumer from a module: its default export, or an export named `consumer` or
 * `adapter`; either the consumer itself or a function (sync or async) that returns one.
 * TypeScript modules are loaded through tsx, so an adapter needs no build step.
 *
 * `options` (`--option KEY=VALUE`) are handed to that function as `{ KEY: VALUE }`, so one
 * adapter file serves every variant of a consumer (a cursor operator, a checkpoint interval).
 * A module that exports a consumer rather than a function cannot take them: a usage error.
 */
export async function loadAdapter(spec: string, cwd = process.cwd(), options: Readonly<Record<string, string>> = {}): Promise<AnyConsumer> {
  const path = resolve(cwd, spec);
  if (!existsSync(path)) throw new AdapterLoadError(`cannot load adapter '${spec}': no file at ${path}`);
  let module: Record<string, unknown>;
  doing(`loading adapter '${spec}'`);
  try {
    if (/\.[cm]?tsx?$/.test(path)) {
      module = await importTypeScript(path);
    } else {
      module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    }
  } catch (error) {
    throw new AdapterLoadError(`cannot load adapter '${spec}': the module threw while loading: ${error instanceof Error ? error.message : String(error)}`);
  }
  let candidate = exported(module, spec);
  const given = Object.keys(options);
  if (given.length > 0 && typeof candidate !== 'function') {
    throw new AdapterLoadError(`cannot load adapter '${spec}' with --option ${given.join(', ')}: it exports a consumer, not a function; export a function taking the options, e.g. export default (options) => makeConsumer(options)`);
  }
  if (typeof candidate === 'function') {
    doing(`calling the adapter's factory (adapter '${spec}')`);
    try {
      candidate = await (candidate as (options: Readonly<Record<string, string>>) => unknown)(Object.freeze({ ...options }));
    } catch (error) {
      throw new AdapterLoadError(`cannot load adapter '${spec}': its factory threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return validateConsumer(candidate, spec);
}

/** tsx's hooks for adapters under one namespace, and the loads made through them (see importTypeScript). */
interface AdapterLoader {
  readonly import: (specifier: string, parent: string) => Promise<unknown>;
  readonly unregister: () => unknown;
  /** Loads made through it: each load's own URL. */
  loads: number;
}

/**
 * The loader lives on the process, not in this module: a second evaluation of this module
 * in the same process (two copies of the package, a test runner resetting its modules)
 * must not count loads from 1 again, to URLs Node has cached with the file as it was then.
 */
const LOADER = Symbol.for('tidemark.adapter-loader');
const NAMESPACES = Symbol.for('tidemark.adapter-namespaces');
type ProcessState = { [LOADER]?: Promise<AdapterLoader>; [NAMESPACES]?: number };

/** Registers tsx's hooks under a namespace no earlier loader of the process had. */
async function newLoader(state: ProcessState): Promise<AdapterLoader> {
  const [esm, cjs] = await Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]);
  const n = (state[NAMESPACES] = (state[NAMESPACES] ?? 0) + 1);
  const namespace = `tidemark-adapter-${n}`;
  // Both loaders, under the same namespace, as tsImport registers them: a .ts file of a
  // CommonJS package is imported as ESM and then required.
  const required = cjs.register({ namespace });
  const imported = esm.register({ namespace });
  return {
    import: imported.import,
    unregister: () => {
      required.unregister();
      return imported.unregister();
    },
    loads: 0,
  };
}

/**
 * A TypeScript adapter's module, loaded anew: a file that changed since an earlier load in
 * this process is read again, and what it does at import runs again. What it imports is
 * loaded once per process, as any import is. tsx's `tsImport` gave every load a namespace
 * of its own, in which everything the adapter imports is transformed and evaluated again
 * (an adapter in this repository imports the whole of src/ that way: about 0.3 s of CPU a
 * load), and added hooks to the loader chain that every later import of the process passes
 * through. Here the hooks are registered once, under one namespace, so they touch only the
 * adapters' imports, and each load is told apart by its URL's query.
 *
 * Node keeps a module that failed to load as failed. A load that fails gives up its
 * namespace, so the next load, after the user fixed what failed, loads everything anew.
 */
async function importTypeScript(path: string): Promise<Record<string, unknown>> {
  const state = globalThis as ProcessState;
  // One promise for all: loads begun at once share one registration.
  const current = (state[LOADER] ??= newLoader(state));
  let loader: AdapterLoader | null = null;
  try {
    loader = await current;
    return (await loader.import(`${pathToFileURL(path).href}?load=${++loader.loads}`, import.meta.url)) as Record<string, unknown>;
  } catch (error) {
    if (state[LOADER] === current) {
      state[LOADER] = undefined;
      await loader?.unregister();
    }
    throw error;
  }
}

/** Whether a value is shaped at least a little like a consumer, rather than a module's exports. */
function consumerLike(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ['name', 'capabilities', 'run', 'kind'].some((k) => k in value);
}

/**
 * The consumer (or its factory) a module exports. An ES module's namespace has it as
 * `default`, `consumer` or `adapter`. A CommonJS module (a .cts file, or a .ts file in a
 * package without "type": "module") arrives as a namespace whose `default` is
 * `module.exports`, where the named exports live; tsx may wrap that once more. So each layer
 * of `default` is looked through until one holds the consumer.
 */
function exported(module: Record<string, unknown>, spec: string): unknown {
  const seen: string[] = [];
  let layer: Record<string, unknown> | null = module;
  for (let depth = 0; layer !== null && depth < 4; depth++) {
    const main: unknown = layer.default;
    const consumer: unknown = layer.consumer;
    const adapter: unknown = layer.adapter;
    if (typeof main === 'function' || consumerLike(main)) return main;
    if (consumer !== undefined) return consumer;
    if (adapter !== undefined) return adapter;
    seen.push(...Object.keys(layer).filter((k) => k !== 'default' && k !== '__esModule' && k !== 'module.exports'));
    // Anything other than an object here is a default export that cannot be a consumer: let validation name it.
    if (main !== undefined && (typeof main !== 'object' || main === null)) return main;
    layer = (main as Record<string, unknown> | undefined) ?? null;
  }
  const names = [...new Set(seen)];
  throw new AdapterLoadError(
    `cannot load adapter '${spec}': ${names.length === 0 ? 'the module exports nothing' : `it exports only ${names.map((n) => `'${n}'`).join(', ')}`}; export your consumer (or a function returning it) as the default export, or as 'consumer' or 'adapter'`,
  );
}

/** Checks the shape of a consumer, naming the first field that is wrong. */
export function validateConsumer(value: unknown, origin: string): AnyConsumer {
  const c = value as Record<string, unknown> | null;
  const fail = (problem: string): never => {
    throw new AdapterLoadError(`adapter '${origin}' is not a usable consumer: ${problem}`);
  };
  if (typeof c !== 'object' || c === null) fail(`expected an object, got ${typeof value}`);
  const v = c as Record<string, unknown>;
  if (typeof v.name !== 'string' || v.name.length === 0) fail('name must be a non-empty string');
  const caps = v.capabilities as Record<string, unknown> | undefined;
  if (typeof caps !== 'object' || caps === null) fail("capabilities must be an object such as { delivery: 'at-least-once' }");
  if (caps?.delivery !== 'at-least-once' && caps?.delivery !== 'exactly-once') fail(`capabilities.delivery must be 'at-least-once' or 'exactly-once', got ${JSON.stringify(caps?.delivery)}`);
  if (caps?.contracts !== undefined && !(Array.isArray(caps.contracts) && caps.contracts.length > 0 && caps.contracts.every((k) => CONTRACT_KINDS.includes(k as string)))) {
    fail(`capabilities.contracts must list some of ${CONTRACT_KINDS.join(', ')}`);
  }
  if (caps?.profile !== undefined) {
    const problem = profileProblem(caps.profile);
    if (problem !== null) fail(`capabilities.profile ${problem}`);
    const fixed = (caps.profile as SourceProfile).contracts;
    const claimed = caps.contracts as readonly string[] | undefined;
    if (fixed !== undefined && claimed !== undefined && !fixed.some((k) => claimed.includes(k))) {
      fail(`capabilities.contracts (${claimed.join(', ')}) and capabilities.profile.contracts (${fixed.join(', ')}) have no contract in common`);
    }
  }
  if (typeof v.run !== 'function') fail('run(world) must be a function');
  if (v.kind === 'blackbox') {
    if (typeof v.open !== 'function') fail('a blackbox consumer needs open() returning its durable store');
    if (typeof v.inspect !== 'function') fail('a blackbox consumer needs inspect(store) returning { watermark, effects }');
  } else if (v.kind !== undefined && v.kind !== 'whitebox') {
    fail(`kind must be 'whitebox' or 'blackbox', got ${JSON.stringify(v.kind)}`);
  }
  return v as unknown as AnyConsumer;
}
