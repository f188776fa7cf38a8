import { readFileSync, statSync } from 'node:fs';
import { ANOMALY_KINDS } from '../../model/anomalies.js';
import { check } from '../../model/checker.js';
import type { History } from '../../model/history.js';
import { describeProblem, HistoryError, parseHistory } from '../../model/parse-history.js';
import { renderJudged } from '../report/failure.js';
import { hashHistory } from '../run/execute.js';
import { missedAdversity, onlyLivenessExercised } from '../run/exercised.js';
import type { Io } from './io.js';
import { EXIT, UsageError, type Flags } from './spec.js';

/**
 * `tidemark judge FILE`: a recorded history judged again, without running anything. FILE
 * holds a bare history (`{ header, steps }`) or a JSON output that carries one under
 * `history` (what `replay --json` writes, or one failure of `check --json`). The verdict is
 * printed as `check` prints a failure, and the exit code is `check`'s; a file that is not a
 * valid history is a usage error (3) naming the field, as the parser found it.
 *
 * It runs no consumer code, starts no process and cannot hang on anything but the
 * computer's speed (the checker is linear in the history), so it does not run under the
 * supervisor: there is no process to kill on a signal and nothing for a watchdog to watch.
 */
export function judge(f: Flags, io: Io): number {
  const [file, ...extra] = f.positionals;
  if (file === undefined || extra.length > 0) throw new UsageError(`judge takes one FILE, the recorded history${extra.length > 0 ? `; got ${f.positionals.length}` : ''}`);
  const { history, at, scenario, hash } = locate(file, readJson(file));
  let parsed: History;
  try {
    parsed = parseHistory(history);
  } catch (error) {
    if (!(error instanceof HistoryError)) throw error;
    const problems = error.problems.map((p) => describeProblem({ ...p, path: at === '' ? p.path : p.path === '' ? at : `${at}.${p.path}` }));
    throw new UsageError(`${file} is not a valid history: ${problems.join('; ')}${error.more ? '; (and maybe more)' : ''}`);
  }
  // A wrapper that names its history's hash (what replay --json and check --json write) is held to it.
  if (hash !== null && hashHistory(parsed) !== hash) throw new UsageError(`${file}: the history is not the one its hash names (${hash}): the file was edited or cut after it was written`);
  const result = check(parsed);
  // A named scenario exists for its adversity: one that ran clean but whose adversity never
  // fired tested nothing, as replay says of it (its header records the plan).
  const missed = scenario !== null && result.verdict.status === 'pass' ? missedAdversity(parsed.header, parsed) : [];
  // One that exercised only liveness judged nothing of what the consumer handles, as replay says of it.
  const idle = missed.length === 0 ? onlyLivenessExercised(result) : null;
  if (missed.length > 0) io.out(`UNTESTED  ${file}: scenario ${scenario} broke no rule, but the adversity it exists for never fired: ${missed.join('; ')}`);
  else if (idle !== null) io.out(`UNTESTED  ${file}: the history broke no rule, but ${idle}`);
  else io.out(renderJudged({ name: file, history: parsed, result, hash: hashHistory(parsed) }));
  for (const kind of ANOMALY_KINDS) {
    const r = result.results[kind];
    if (r.status === 'untested') io.out(`check ${kind}: untested, ${r.reason}`);
  }
  if (missed.length > 0 || idle !== null) {
    io.out('verdict: unknown');
    return EXIT.unknown;
  }
  io.out(`verdict: ${result.verdict.status}`);
  return EXIT[result.verdict.status];
}

function readJson(file: string): unknown {
  let text: string;
  let regular: boolean;
  try {
    regular = statSync(file).isFile();
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  // A FIFO or a device could be read for ever (/dev/zero never ends): a history is a regular file.
  if (!regular) throw new UsageError(`${file} is not a regular file: judge reads a history that replay --json or check --json wrote`);
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/**
 * The history in a file's JSON, where it sits (`history` when wrapped, '' when bare), the
 * named scenario it is a replay of, when the wrapper says so (`replay --scenario --json`), and
 * the hash the wrapper names it by (replay --json and every failure of check --json do).
 */
function locate(file: string, value: unknown): { history: unknown; at: string; scenario: string | null; hash: string | null } {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    if ('header' in value || 'steps' in value) return { history: value, at: '', scenario: null, hash: null };
    if ('history' in value) {
      const { history, scenario, hash } = value as { history: unknown; scenario?: unknown; hash?: unknown };
      if (scenario !== undefined && typeof scenario !== 'string') throw new UsageError(`${file}: scenario must be the name of the scenario the history replays, got ${JSON.stringify(scenario)}`);
      if (hash !== undefined && !(typeof hash === 'string' && /^[0-9a-f]{64}$/.test(hash))) throw new UsageError(`${file}: hash must be the sha256 of the history, in hex, got ${JSON.stringify(hash)}`);
      return { history, at: 'history', scenario: scenario ?? null, hash: hash ?? null };
    }
  }
  throw new UsageError(
    `${file} holds neither a history ({ header, steps }) nor a JSON output with one under "history" (as replay --json writes it); from a check --json file, take one failure's history out first, e.g. jq .worlds.failure ${file}`,
  );
}
