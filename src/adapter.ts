import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyConsumer } from './consumer.js';

/** The adapter module could not be used; the message names the module and what is wrong. */
export class AdapterLoadError extends Error {
  override name = 'AdapterLoadError';
}

const CONTRACT_KINDS = ['snapshot', 'insertion-stable', 'replay-window', 'none'];

/**
 * Loads a consumer from a module: its default export, or an export named `consumer` or
 * `adapter`; either the consumer itself or a function (sync or async) that returns one.
 * TypeScript modules are loaded through tsx, so an adapter needs no build step.
 */
export async function loadAdapter(spec: string, cwd = process.cwd()): Promise<AnyConsumer> {
  const path = resolve(cwd, spec);
  if (!existsSync(path)) throw new AdapterLoadError(`cannot load adapter '${spec}': no file at ${path}`);
  let module: Record<string, unknown>;
  try {
    if (/\.[cm]?tsx?$/.test(path)) {
      const { tsImport } = await import('tsx/esm/api');
      module = (await tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>;
    } else {
      module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    }
  } catch (error) {
    throw new AdapterLoadError(`cannot load adapter '${spec}': the module threw while loading: ${error instanceof Error ? error.message : String(error)}`);
  }
  // tsx may wrap a module's namespace once more under `default`.
  const inner = (module.default as Record<string, unknown> | undefined)?.default !== undefined && typeof module.default === 'object' ? (module.default as Record<string, unknown>) : module;
  let candidate = inner.default ?? inner.consumer ?? inner.adapter;
  if (candidate === undefined) throw new AdapterLoadError(`cannot load adapter '${spec}': it exports no default, 'consumer' or 'adapter'`);
  if (typeof candidate === 'function') {
    try {
      candidate = await (candidate as () => unknown)();
    } catch (error) {
      throw new AdapterLoadError(`cannot load adapter '${spec}': its factory threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return validateConsumer(candidate, spec);
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
  if (typeof v.run !== 'function') fail('run(world) must be a function');
  if (v.kind === 'blackbox') {
    if (typeof v.open !== 'function') fail('a blackbox consumer needs open() returning its durable store');
    if (typeof v.inspect !== 'function') fail('a blackbox consumer needs inspect(store) returning { watermark, effects }');
  } else if (v.kind !== undefined && v.kind !== 'whitebox') {
    fail(`kind must be 'whitebox' or 'blackbox', got ${JSON.stringify(v.kind)}`);
  }
  return v as unknown as AnyConsumer;
}
