import { worldWhat } from './replay-command.js';
import { createHash } from 'node:crypto';
import { ANOMALIES } from '../../model/anomalies.js';
import { scenarioStatus, type ScenarioStatus } from '../run/conformance.js';
import type { Execution } from '../run/execute.js';
import type { SuiteResult } from '../run/suite.js';
import { renderFailure } from './failure.js';

/**
 * A scenario as the report reads it. A suite merged from shards' JSON (src/cli/merge.ts) keeps an
 * execution only for the scenarios that did not pass, so the status is given with it.
 */
export interface JUnitScenario {
  readonly scenario: { readonly name: string; readonly rules: readonly string[] };
  readonly status: ScenarioStatus;
  /** Present when the scenario ran and did not pass. */
  readonly execution?: Execution;
  readonly skipped?: string;
  readonly untested?: string;
  readonly ms?: number;
}

/** What the report reads of a suite: a SuiteResult, or one merged from shards. */
export type JUnitSuite = Pick<SuiteResult, 'consumer' | 'adapter' | 'seed' | 'runs' | 'status' | 'reason' | 'regressions' | 'property' | 'checks'> & {
  readonly scenarios: readonly JUnitScenario[];
};

export interface JUnitOptions {
  /** When the report is written; default now. The suite started its measured time before. */
  readonly now?: Date;
}

/** One test case, before it is written out. */
interface Case {
  readonly classname: string;
  /** Stable across runs: CI tools key a test's history by its name. */
  readonly name: string;
  readonly ms: number;
  readonly result:
    | { readonly kind: 'passed' }
    | { readonly kind: 'skipped'; readonly message: string }
    | { readonly kind: 'failure' | 'error'; readonly message: string; readonly type: string; readonly text: string };
  /** What varies from run to run (seed, worlds, the replay command): never in the name. */
  readonly out?: string;
}

/**
 * The suite as a JUnit XML report, the format CI systems read: one test case per
 * regression, scenario and the generated worlds, and one per model check, skipped with its
 * reason where it does not apply to this consumer.
 *
 * CI tools keep a test's history by its name, so names carry nothing that changes between
 * runs: no seed, no counts. The seed, the worlds run and the replay command go into the
 * suite's properties and each case's system-out. Times are wall-clock seconds, which a
 * report may read and the simulation never does. Every text is cleaned of ANSI escapes and
 * of characters XML cannot hold, so a consumer that colours its stderr or rings the bell
 * cannot make the file unreadable (the shape follows the JUnit schema of Jenkins and
 * Surefire, which GitLab, GitHub and others read too).
 */
export function renderJUnit(suite: SuiteResult | JUnitSuite, replay: (kind: 'scenario' | 'world', what: string) => string, options: JUnitOptions = {}): string {
  const result: JUnitSuite = { ...suite, scenarios: suite.scenarios.map((s) => ('status' in s ? s : { ...s, status: scenarioStatus(s) })) };
  const cases: Case[] = [];
  for (const r of result.regressions) {
    const e = r.entry;
    const what = e.kind === 'scenario' ? e.scenario : worldWhat(e);
    // A world's own identity is its seed and path, too long for a name: a digest of them
    // keeps each entry's case the same from run to run, and distinct from the others.
    const name = e.kind === 'scenario' ? `regression: scenario ${e.scenario}` : `regression: world ${e.anomaly} ${createHash('sha256').update(what).digest('hex').slice(0, 8)}`;
    const command = replay(e.kind, what);
    const found = `${e.kind === 'world' ? `seed ${e.seed}, path ${e.path}\n` : ''}first found: ${e.anomaly}`;
    const out = `${found}\nreplay: ${command}`;
    if (r.status === 'pass') cases.push({ classname: 'tidemark.regressions', name, ms: r.ms ?? 0, result: { kind: 'passed' }, out });
    else if (r.execution === null) {
      // Nothing ran (a scenario this tidemark does not have or that does not apply, a seed and
      // path that lead to no world): that is no pass, and a replay command would be refused too.
      const why = r.note ?? 'the entry could not be replayed';
      cases.push({ classname: 'tidemark.regressions', name, ms: r.ms ?? 0, result: { kind: 'error', message: why, type: r.status, text: why }, out: found });
    } else cases.push({ classname: 'tidemark.regressions', name, ms: r.ms ?? 0, result: judged(r.execution, renderFailure({ consumer: result.consumer, execution: r.execution, replay: command })), out });
  }
  for (const s of result.scenarios) {
    const name = `${s.scenario.rules.join(' ')} ${s.scenario.name}`;
    const command = replay('scenario', s.scenario.name);
    if (s.status === 'skipped') cases.push({ classname: 'tidemark.scenarios', name, ms: 0, result: { kind: 'skipped', message: s.skipped ?? '' } });
    else if (s.status === 'untested') cases.push({ classname: 'tidemark.scenarios', name, ms: s.ms ?? 0, result: { kind: 'skipped', message: `untested: ${s.untested}` }, out: `replay: ${command}` });
    else if (s.status === 'pass') cases.push({ classname: 'tidemark.scenarios', name, ms: s.ms ?? 0, result: { kind: 'passed' }, out: `replay: ${command}` });
    else if (s.execution === undefined) {
      // Never read as a pass: a scenario that did not pass and came without its execution.
      cases.push({ classname: 'tidemark.scenarios', name, ms: s.ms ?? 0, result: { kind: 'error', message: `${s.status}, without its history`, type: s.status, text: `replay: ${command}` }, out: `replay: ${command}` });
    } else cases.push({ classname: 'tidemark.scenarios', name, ms: s.ms ?? 0, result: judged(s.execution, renderFailure({ consumer: result.consumer, execution: s.execution, replay: command })), out: `replay: ${command}` });
  }
  const p = result.property;
  if (p) {
    // The name the vitest helper gives the same test.
    const name = 'R1-R10 generated worlds';
    const summary = `seed ${p.seed}, ${p.runs} worlds run of ${result.runs} asked, ${p.calls} world calls`;
    if (p.counterexample === null) cases.push({ classname: 'tidemark.worlds', name, ms: p.ms ?? 0, result: { kind: 'passed' }, out: summary });
    else {
      const command = replay('world', worldWhat(p));
      const text = renderFailure({ consumer: result.consumer, execution: p.counterexample, replay: command });
      cases.push({ classname: 'tidemark.worlds', name, ms: p.ms ?? 0, result: judged(p.counterexample, text), out: `${summary}; failed at world ${p.runs}, the smallest of ${p.searches} shrunk failures\nreplay: ${command}` });
    }
  }
  // A check's case fails exactly when its anomaly was found in this run, passes only when
  // some world exercised it, and is skipped with the reason when none did.
  for (const c of result.checks) {
    const name = `check ${c.anomaly}`;
    if (c.status === 'fail') {
      const text = `${c.anomaly} was found in this run: ${ANOMALIES[c.anomaly].means}; see the failing cases above`;
      cases.push({ classname: 'tidemark.checks', name, ms: 0, result: { kind: 'failure', message: `${c.anomaly} found`, type: c.anomaly, text } });
    } else if (c.status === 'pass') cases.push({ classname: 'tidemark.checks', name, ms: 0, result: { kind: 'passed' } });
    else cases.push({ classname: 'tidemark.checks', name, ms: 0, result: { kind: 'skipped', message: `untested: ${c.reason ?? ''}` } });
  }

  const count = (kind: Case['result']['kind']): number => cases.filter((c) => c.result.kind === kind).length;
  // A verdict that is no pass, with no case above to say so (a time limit that ran no world,
  // a run that exercised nothing): a CI that reads only this file must not see it green.
  if (result.status !== 'pass' && count('failure') + count('error') === 0) {
    const why = result.reason ?? `the run's verdict is ${result.status}`;
    cases.push({ classname: 'tidemark.run', name: 'verdict', ms: 0, result: { kind: 'error', message: `${result.status}: ${why}`, type: result.status, text: why } });
  }
  const ms = cases.reduce((sum, c) => sum + c.ms, 0);
  const now = options.now ?? new Date();
  const properties: [string, string | number][] = [
    ['consumer', result.consumer],
    ['adapter', result.adapter],
    ['seed', result.seed],
    ['runs', result.runs],
    ...(p ? ([['worlds', p.runs]] as [string, number][]) : []),
    ['verdict', result.status],
  ];
  const totals = `tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tidemark" ${totals} time="${seconds(ms)}">`,
    `  <testsuite name="${attr(`tidemark check ${result.consumer}`)}" ${totals} skipped="${count('skipped')}" time="${seconds(ms)}" timestamp="${timestamp(new Date(now.getTime() - ms))}">`,
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${attr(name)}" value="${attr(String(value))}"/>`),
    '    </properties>',
    ...cases.map(renderCase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function renderCase(c: Case): string {
  const open = `    <testcase classname="${attr(c.classname)}" name="${attr(c.name)}" time="${seconds(c.ms)}"`;
  const body: string[] = [];
  const r = c.result;
  if (r.kind === 'skipped') body.push(`      <skipped message="${attr(r.message)}"/>`);
  if (r.kind === 'failure' || r.kind === 'error') body.push(`      <${r.kind} message="${attr(r.message)}" type="${attr(r.type)}">${text(r.text)}</${r.kind}>`);
  if (c.out !== undefined) body.push(`      <system-out>${text(c.out)}</system-out>`);
  return body.length === 0 ? `${open}/>` : [`${open}>`, ...body, '    </testcase>'].join('\n');
}

/**
 * A judged execution that did not pass: a failure with its first anomaly; an error when it
 * could not be judged (unknown) or the world contradicted its own ground truth (a harness
 * error, never the consumer's fault).
 */
function judged(e: Execution, text: string): Case['result'] {
  const v = e.result.verdict;
  if (v.status === 'error') return { kind: 'error', message: `harness error: ${v.reason}`, type: 'harness-error', text };
  if (v.status === 'unknown') return { kind: 'error', message: `unknown: ${v.reason}`, type: 'unknown', text };
  const a = v.anomalies[0];
  return { kind: 'failure', message: a ? `${a.kind}: ${a.explanation}` : v.status, type: a?.kind ?? v.status, text };
}

/** Seconds with millisecond precision, as Surefire writes them. */
function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** ISO 8601 in UTC without a zone designator: the form the strictest JUnit schemas accept. */
function timestamp(date: Date): string {
  return date.toISOString().slice(0, 19);
}

/**
 * ANSI escape sequences: CSI (colours, cursor moves; 7-bit and 8-bit), OSC (titles,
 * hyperlinks; ended by BEL or ST), and the two-character escapes. What is left of an
 * unfinished sequence goes with the control characters below.
 */
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/**
 * Characters an XML 1.0 document cannot hold (C0 controls other than tab, newline and
 * carriage return, lone surrogates, U+FFFE and U+FFFF), and the C1 controls XML
 * discourages, which only terminals read.
 */
const NOT_XML = /[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/** Text as a terminal would show it, holding only characters XML can: no escapes, no controls. */
export function printable(text: string): string {
  return text.replace(ANSI, '').replace(NOT_XML, '');
}

/** Element content: line breaks stay as they are, so the failure text reads as printed. */
function text(value: string): string {
  return printable(value).replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c] as string);
}

/** An attribute value: tabs and line breaks as character references, which a parser keeps (it turns literal ones into spaces). */
function attr(value: string): string {
  return printable(value).replace(/[<>&"'\t\n\r]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' })[c] as string);
}
