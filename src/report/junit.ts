import { ANOMALIES } from '../../model/anomalies.js';
import type { SuiteResult } from '../suite.js';
import { renderFailure } from './failure.js';

/**
 * The suite as a JUnit XML report, the format CI systems read: one test case per
 * regression, scenario and the generated worlds, and one per model check, skipped with its
 * reason where it does not apply to this consumer.
 */
export function renderJUnit(result: SuiteResult, replay: (kind: 'scenario' | 'world', what: string) => string): string {
  const cases: string[] = [];
  const failure = (name: string, classname: string, text: string, headline: string, status: string): string =>
    `    <testcase classname="${x(classname)}" name="${x(name)}">\n      <${status === 'unknown' ? 'error' : 'failure'} message="${x(headline)}">${x(text)}</${status === 'unknown' ? 'error' : 'failure'}>\n    </testcase>`;
  const passed = (name: string, classname: string): string => `    <testcase classname="${x(classname)}" name="${x(name)}"/>`;
  const skipped = (name: string, classname: string, why: string): string =>
    `    <testcase classname="${x(classname)}" name="${x(name)}">\n      <skipped message="${x(why)}"/>\n    </testcase>`;
  for (const r of result.regressions) {
    const name = r.entry.kind === 'scenario' ? `regression: scenario ${r.entry.scenario}` : `regression: world seed ${r.entry.seed} path ${r.entry.path}`;
    if (r.status === 'pass' || r.execution === null) cases.push(passed(name, 'tidemark.regressions'));
    else {
      const what = r.entry.kind === 'scenario' ? r.entry.scenario : `${r.entry.seed}|${r.entry.path}`;
      cases.push(failure(name, 'tidemark.regressions', renderFailure({ consumer: result.consumer, execution: r.execution, replay: replay(r.entry.kind, what) }), headline(r.execution), r.status));
    }
  }
  for (const s of result.scenarios) {
    const name = `${s.scenario.rules.join(' ')} ${s.scenario.name}`;
    if (s.execution === undefined) cases.push(skipped(name, 'tidemark.scenarios', s.skipped));
    else if (s.untested !== undefined) cases.push(skipped(name, 'tidemark.scenarios', `untested: ${s.untested}`));
    else if (s.execution.result.verdict.status === 'pass') cases.push(passed(name, 'tidemark.scenarios'));
    else cases.push(failure(name, 'tidemark.scenarios', renderFailure({ consumer: result.consumer, execution: s.execution, replay: replay('scenario', s.scenario.name) }), headline(s.execution), s.execution.result.verdict.status));
  }
  const p = result.property;
  if (p) {
    const name = `generated worlds (${p.runs}, seed ${p.seed})`;
    if (p.counterexample === null) cases.push(passed(name, 'tidemark.worlds'));
    else cases.push(failure(name, 'tidemark.worlds', renderFailure({ consumer: result.consumer, execution: p.counterexample, replay: replay('world', `${p.seed}|${p.path}`) }), headline(p.counterexample), p.status));
  }
  // A check's case fails exactly when its anomaly was found in this run, passes only when
  // some world exercised it, and is skipped with the reason when none did.
  for (const c of result.checks) {
    const name = `check ${c.anomaly}`;
    if (c.status === 'fail') cases.push(failure(name, 'tidemark.checks', `${c.anomaly} was found in this run: ${ANOMALIES[c.anomaly].means}; see the failing cases above`, `${c.anomaly} found`, 'fail'));
    else if (c.status === 'pass') cases.push(passed(name, 'tidemark.checks'));
    else cases.push(skipped(name, 'tidemark.checks', `untested: ${c.reason ?? ''}`));
  }
  const count = (tag: string): number => cases.filter((c) => c.includes(`<${tag}`)).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tidemark" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}">`,
    `  <testsuite name="tidemark check ${x(result.consumer)}" tests="${cases.length}" failures="${count('failure')}" errors="${count('error')}" skipped="${count('skipped')}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function headline(e: { result: { verdict: { status: string; anomalies: readonly { kind: string; explanation: string }[] } } }): string {
  const a = e.result.verdict.anomalies[0];
  return a ? `${a.kind}: ${a.explanation}` : e.result.verdict.status;
}

function x(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}
