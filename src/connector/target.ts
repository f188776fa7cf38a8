import type { History } from '../../model/history.js';
import type { Consumer } from '../adapter/consumer.js';
import { shellQuote } from '../report/replay-command.js';
import { commandFiles, filesDigest } from '../run/run-identity.js';
import { UsageError } from '../run/options.js';
import { readApi } from './api.js';
import { connectorConsumer, connectorOutput, connectorStats, type ConnectorOptions } from './consumer.js';
import type { ConnectorKind } from './messages.js';

/**
 * A connector as the command line names it: `--singer CMD --api FILE` or `--airbyte CMD
 * --api FILE`, with `--option KEY=VALUE` pairs as extra config values. Its key in the
 * regression file is `singer:CMD --api FILE` (or `airbyte:`), so that a recorded failure
 * names the connector and its API again.
 */
export interface ConnectorTarget {
  readonly consumer: Consumer;
  /** The flags that name it again, quoted for a shell. */
  readonly flag: string;
  readonly id: string;
  /** sha256 of its key and every file it names (the command's files and the API description). */
  readonly digest: string;
  /** A line for the end of a check, when there is something to say about how it ran. */
  readonly note: () => string | null;
  /** The connector's own lines in the world of this history, for its failure text. */
  readonly output: (history: History) => readonly string[];
}

const API_FLAG = ' --api ';

export function connectorTarget(kind: ConnectorKind, command: string, apiFile: string, options: Readonly<Record<string, string>>, o: ConnectorOptions = {}): ConnectorTarget {
  const api = readApi(apiFile);
  // The server's URL is written under config.baseUrl over any value: an option there would mean nothing.
  if (Object.hasOwn(options, api.config.baseUrl)) throw new UsageError(`--option ${api.config.baseUrl}=...: ${api.config.baseUrl} is the key config.baseUrl names in ${apiFile}, where tidemark writes its server's URL`);
  // --option pairs are config values: `--option backoff_seconds=0` sets it for every sync.
  const described = Object.keys(options).length === 0 ? api : { ...api, config: { ...api.config, values: { ...api.config.values, ...options } } };
  const consumer = connectorConsumer(kind, command, described, o);
  const id = `${kind}:${command}${API_FLAG}${apiFile}`;
  return {
    consumer,
    flag: connectorFlag(id, options) as string,
    id,
    digest: filesDigest(id, commandFiles(`${command} ${apiFile}`)),
    output: (history) => connectorOutput(consumer, history),
    note: () => {
      const stats = connectorStats(consumer);
      if (!stats) return null;
      const notes: string[] = [];
      if (stats.concurrent > 0) notes.push(`note: the connector sent ${stats.concurrent} request(s) while another was still unanswered; tidemark answered them one at a time, in arrival order, so a run is only as deterministic as that order`);
      if (stats.unbookmarked > 0) {
        notes.push(
          `note: ${stats.unbookmarked} STATE message(s) the connector wrote after its records held no value at the bookmark path ${JSON.stringify(api.state.bookmark)} (the first: ${stats.firstMiss}); each was persisted as a null watermark, which claims nothing done`,
        );
      }
      return notes.length === 0 ? null : notes.join('\n');
    },
  };
}

/** Which connector a regression file's key names, or null when it names none. */
export function connectorOf(id: string): { readonly kind: ConnectorKind; readonly command: string; readonly api: string } | null {
  const m = /^(singer|airbyte):/.exec(id);
  const at = id.lastIndexOf(API_FLAG);
  if (!m || at < 0) return null;
  return { kind: m[1] as ConnectorKind, command: id.slice(m[0].length, at), api: id.slice(at + API_FLAG.length) };
}

/** The flags that name a connector again, from its key and options; null for a key that names none. */
export function connectorFlag(id: string, options: Readonly<Record<string, string>> = {}): string | null {
  const c = connectorOf(id);
  if (c === null) return null;
  const more = Object.entries(options).map(([k, v]) => ` --option ${shellQuote(`${k}=${v}`)}`).join('');
  return `--${c.kind} ${shellQuote(c.command)} --api ${shellQuote(c.api)}${more}`;
}
