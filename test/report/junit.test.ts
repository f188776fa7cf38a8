import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findMutant } from '../../src/selftest/mutants.js';
import { processConsumer } from '../../src/adapter/process/bridge.js';
import { renderFailure } from '../../src/report/failure.js';
import { printable, renderJUnit } from '../../src/report/junit.js';
import { runSuite, type SuiteResult } from '../../src/run/suite.js';
import { allText, caseNames, junitReportErrors, junitSchemaErrors, parseXml, type XmlElement } from './xml.js';

/**
 * The JUnit report is read by CI tools that keep each test's history by its name, validate
 * against the Jenkins/Surefire schema, and give up on a file that is not well-formed XML.
 * Each report here is read twice, by the strict parser of ./xml.ts (which also builds the
 * tree the schema is checked on) and by Python's expat, and checked against the schema.
 */
const replay = (kind: 'scenario' | 'world', what: string): string =>
  kind === 'scenario' ? `npx tidemark replay --consumer skips-failed-event --scenario ${what}` : `npx tidemark replay --consumer skips-failed-event --seed ${what.split('|')[0]} --path "${what.split('|')[1]}"`;

/** What expat says of each document, in one Python process: null when it parses, else its error. */
function expat(...docs: string[]): (string | null)[] {
  const script = [
    'import json, sys, xml.dom.minidom',
    'out = []',
    'for doc in json.load(sys.stdin):',
    '    try:',
    '        xml.dom.minidom.parseString(doc.encode("utf-8", "surrogatepass"))',
    '        out.append(None)',
    '    except Exception as e:',
    '        out.append(str(e))',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script], { input: JSON.stringify(docs), encoding: 'utf8' })) as (string | null)[];
}

/** Parses strictly, validates, and returns the tree; every complaint fails the test with its text. */
function read(xml: string): XmlElement {
  expect(expat(xml)).toEqual([null]);
  const root = parseXml(xml);
  expect(junitSchemaErrors(root)).toEqual([]);
  expect(junitReportErrors(root)).toEqual([]);
  return root;
}

function element(root: XmlElement, name: string, where: (e: XmlElement) => boolean = () => true): XmlElement {
  const found: XmlElement[] = [];
  const visit = (e: XmlElement): void => {
    if (e.name === name && where(e)) found.push(e);
    for (const c of e.children) if (typeof c !== 'string') visit(c);
  };
  visit(root);
  expect(found.length, `<${name}>`).toBeGreaterThan(0);
  return found[0]!;
}

const child = (e: XmlElement, name: string): XmlElement | undefined => e.children.find((c): c is XmlElement => typeof c !== 'string' && c.name === name);
const textOf = (e: XmlElement | undefined): string => (e?.children ?? []).filter((c): c is string => typeof c === 'string').join('');

async function mutantSuite(seed: number): Promise<SuiteResult> {
  const mutant = findMutant('skips-failed-event')!;
  return runSuite(mutant.consumer, { adapter: 'builtin:skips-failed-event', seed, runs: 30, searches: 1 });
}

describe('JUnit of a failing mutant', () => {
  it('parses with a strict parser, validates against the schema, and carries seed and replay outside the names', async () => {
    const result = await mutantSuite(1);
    expect(result.status).toBe('fail');
    const now = new Date('2026-03-04T05:06:07.890Z');
    const xml = renderJUnit(result, replay, { now });
    const root = read(xml);

    const suite = element(root, 'testsuite');
    expect(suite.attributes.get('name')).toBe('tidemark check skips-failed-event');
    const properties = new Map((child(suite, 'properties')?.children ?? []).filter((c): c is XmlElement => typeof c !== 'string').map((p) => [p.attributes.get('name'), p.attributes.get('value')]));
    expect(Object.fromEntries(properties)).toEqual({ consumer: 'skips-failed-event', adapter: 'builtin:skips-failed-event', seed: '1', runs: '30', worlds: String(result.property!.runs), verdict: 'fail' });

    // The suite's time is the sum of its cases', and it started that long before the report.
    // The cases' times are printed to the millisecond, so the sum read back is off by up to
    // half a millisecond a case (and the suite's own by half of one): with twenty cases, more
    // than two decimals' worth, depending on how long each took.
    const total = caseTimes(root).reduce((a, b) => a + b, 0);
    const slack = caseTimes(root).length * 0.0005;
    expect(Math.abs(Number(suite.attributes.get('time')) - total)).toBeLessThanOrEqual(slack + 0.0005 + 1e-9);
    expect(Number(suite.attributes.get('time'))).toBeGreaterThan(0);
    // The report floors the start from the exact sum, which may cross a second boundary
    // within that slack: the start is the floor for some sum within it.
    const started = (t: number): number => Math.floor((now.getTime() - t * 1000) / 1000) * 1000;
    expect([started(total - slack), started(total + slack)]).toContain(new Date(`${suite.attributes.get('timestamp')}Z`).getTime());

    const world = element(root, 'testcase', (e) => e.attributes.get('name') === 'R1-R10 generated worlds');
    const failure = child(world, 'failure')!;
    expect(failure.attributes.get('type')).toBe(result.property!.counterexample!.result.verdict.anomalies[0]!.kind);
    expect(failure.attributes.get('message')).toMatch(/^premature-watermark: |^omission: /);
    expect(textOf(failure)).toContain(`Replay: npx tidemark replay --consumer skips-failed-event --seed ${result.property!.seed} --path`);
    expect(textOf(child(world, 'system-out'))).toMatch(new RegExp(`^seed ${result.property!.seed}, ${result.property!.runs} worlds run of 30 asked, \\d+ world calls; failed at world ${result.property!.runs}`));

    const scenario = element(root, 'testcase', (e) => e.attributes.get('name') === 'R6 R7 R8 failed-event-holds-watermark');
    expect(child(scenario, 'failure')).toBeDefined();
    expect(textOf(child(scenario, 'system-out'))).toBe('replay: npx tidemark replay --consumer skips-failed-event --scenario failed-event-holds-watermark');
    const skipped = element(root, 'testcase', (e) => e.attributes.get('name') === 'check duplicate-effect');
    expect(child(skipped, 'skipped')?.attributes.get('message')).toBe('untested: the consumer claims at-least-once delivery, so duplicates are allowed');
    // The anomaly the mutant was caught with fails its own check case, and only found kinds fail.
    const found = new Set([...result.scenarios.flatMap((s) => s.execution?.result.verdict.anomalies ?? []), ...(result.property?.counterexample?.result.verdict.anomalies ?? [])].map((a) => a.kind));
    expect(found.size).toBeGreaterThan(0);
    for (const c of result.checks) {
      const testcase = element(root, 'testcase', (e) => e.attributes.get('name') === `check ${c.anomaly}`);
      expect(child(testcase, 'failure') !== undefined, c.anomaly).toBe(found.has(c.anomaly));
    }
  });

  it('names every test case identically across two runs with different seeds', async () => {
    const [one, two] = [await mutantSuite(1), await mutantSuite(2)];
    // The runs really differ where names used to show it: the seed and the worlds run.
    expect(one.property!.runs).not.toBe(two.property!.runs);
    const names = [one, two].map((r) => caseNames(read(renderJUnit(r, replay))));
    expect(names[0]).toEqual(names[1]);
    expect(names[0]).toContain('tidemark.worlds > R1-R10 generated worlds');
    for (const name of names[0]!) expect(name).not.toMatch(/seed|\(\d/);
  });

  it('names a regression entry by what it is, the same in every run, with its seed and path in system-out', async () => {
    const mutant = findMutant('skips-failed-event')!;
    const [entry, other] = [await mutantSuite(1), await mutantSuite(2)].map((r) => ({ adapter: 'builtin:skips-failed-event', kind: 'world' as const, seed: r.property!.seed, path: r.property!.path!, anomaly: 'premature-watermark' }));
    const names: string[][] = [];
    for (const seed of [3, 4]) {
      const result = await runSuite(mutant.consumer, { adapter: entry!.adapter, seed, runs: 1, searches: 1, scenario: 'stale-token', regressions: [entry!, other!] });
      const root = read(renderJUnit(result, replay));
      names.push(caseNames(root).filter((n) => n.startsWith('tidemark.regressions')));
      const again = element(root, 'testcase', (e) => e.attributes.get('classname') === 'tidemark.regressions');
      expect(textOf(child(again, 'system-out'))).toContain(`seed ${entry!.seed}, path ${entry!.path}\nfirst found: premature-watermark\nreplay: npx tidemark replay`);
    }
    expect(names[0]).toEqual(names[1]);
    expect(names[0]).toHaveLength(2);
    expect(names[0]![0]).toMatch(/^tidemark\.regressions > regression: world premature-watermark [0-9a-f]{8}$/);
    // Two entries, two cases: the digest tells them apart.
    expect(new Set(names[0]).size).toBe(2);
  });
});

function caseTimes(root: XmlElement): number[] {
  const out: number[] = [];
  const visit = (e: XmlElement): void => {
    if (e.name === 'testcase') out.push(Number(e.attributes.get('time')));
    for (const c of e.children) if (typeof c !== 'string') visit(c);
  };
  visit(root);
  return out;
}

describe('JUnit of a consumer whose stderr carries escape codes', () => {
  const fixture = 'node test/fixtures/process/ansi-stderr.mjs';
  const NOISE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

  it('a visible failure whose reason is coloured: the failure text has the codes, the XML none of them, the words all', async () => {
    const consumer = await processConsumer(`${fixture} fail`);
    const result = await runSuite(consumer, { adapter: `command:${fixture} fail`, seed: 1, runs: 1, scenario: 'failed-event-holds-watermark' });
    expect(result.status).toBe('fail');
    // The hazard is real: the text a terminal gets holds ESC, BEL, NUL and a lone surrogate.
    const text = renderFailure({ consumer: 'ansi-stderr', execution: result.scenarios[0]!.execution!, replay: '-' });
    expect(text).toMatch(NOISE);
    const xml = renderJUnit(result, replay);
    expect(xml).not.toMatch(NOISE);
    const root = read(xml);
    const failure = child(element(root, 'testcase', (e) => e.attributes.get('classname') === 'tidemark.scenarios'), 'failure')!;
    expect(failure.attributes.get('type')).toBe('liveness');
    expect(failure.attributes.get('message')).toContain('gave up: ERROR disk almost full nul lone warn');
    expect(allText(root)).toContain('gave up: ERROR disk almost full nul lone warn');
  });

  it('a consumer that stalls: an error case quoting its stderr, cleaned', async () => {
    const consumer = await processConsumer(`${fixture} stall`, { stallMs: 1000 });
    const result = await runSuite(consumer, { adapter: `command:${fixture} stall`, seed: 1, runs: 1, scenario: 'failed-event-holds-watermark' });
    expect(result.status).toBe('unknown');
    const xml = renderJUnit(result, replay);
    expect(xml).not.toMatch(NOISE);
    const root = read(xml);
    const error = child(element(root, 'testcase', (e) => e.attributes.get('classname') === 'tidemark.scenarios'), 'error')!;
    expect(error.attributes.get('type')).toBe('unknown');
    expect(error.attributes.get('message')).toMatch(/^unknown: incarnation w1#1 stopped calling the world and never returned .*stderr tail: ERROR disk almost full nul \ufffdlone warn$/);
    // The lone surrogate crossed the pipe as UTF-8 bytes, so it arrives as U+FFFD, which XML allows.
    expect(textOf(error)).toContain('stderr tail: ERROR disk almost full nul \ufffdlone warn');
  });
});

describe('what the checks reject', () => {
  it('the strict parser rejects what XML forbids, as expat does', () => {
    const bad = [
      '<a>\x1b[31mred</a>',
      '<a>bell\x07</a>',
      '<a>&#27;</a>',
      '<a b="<"/>',
      '<a>&nbsp;</a>',
      '<a><b></a></b>',
      '<a b="1" b="2"/>',
      '<a/><b/>',
      '<a>]]></a>',
      '<a b=1/>',
    ];
    for (const doc of bad) expect(() => parseXml(doc), JSON.stringify(doc)).toThrow();
    expect(() => parseXml('<a>\ud800</a>')).toThrow(/U\+D800/);
    // Expat agrees, each for its own reason; a lone surrogate reaches it encoded as Python would keep it.
    expect(expat(...bad, '<a>\ud800</a>').map((e, i) => (e === null ? `accepted ${JSON.stringify(bad[i] ?? '<a>\\ud800</a>')}` : null))).toEqual([...bad, 0].map(() => null));
    const good = '<?xml version="1.0" encoding="UTF-8"?>\n<!-- c --><a b="x&#10;y" c=\'&apos;\'>t &amp; <![CDATA[<raw>]]><d/>\u00e9\u{1f600}</a>\n';
    expect(expat(good)).toEqual([null]);
    const root = parseXml(good);
    expect(root.attributes.get('b')).toBe('x\ny');
    expect(root.children.filter((c) => typeof c === 'string')).toEqual(['t & <raw>', '\u00e9\u{1f600}']);
  });

  it('the schema check rejects what the Jenkins/Surefire schema does, and the report check missing times and wrong counts', () => {
    // skipped on <testsuites> is what tidemark used to write; junit-10.xsd does not allow it.
    const doc = (suites: string, inner: string): XmlElement => parseXml(`<testsuites ${suites}><testsuite name="s" tests="1" failures="0" errors="0">${inner}</testsuite></testsuites>`);
    expect(junitSchemaErrors(doc('skipped="1"', '<testcase name="t"/>'))).toEqual(['/testsuites: attribute skipped not allowed']);
    expect(junitSchemaErrors(doc('', '<testcase classname="c"/>'))).toEqual(['/testsuites/testsuite/testcase: missing required attribute name']);
    expect(junitSchemaErrors(doc('', '<testcase name="t"><failure><b/></failure></testcase>'))).toEqual(['/testsuites/testsuite/testcase/failure: <b> not allowed here']);
    expect(junitSchemaErrors(doc('', 'loose text<testcase name="t"/>'))).toEqual(['/testsuites/testsuite: text in element-only content: "loose text"']);
    expect(junitSchemaErrors(doc('time="1.2.3"', '<properties><property name="p"/></properties>'))).toEqual([
      '/testsuites: time "1.2.3" is not a SUREFIRE_TIME',
      '/testsuites/testsuite/properties/property: missing required attribute value',
    ]);
    expect(junitReportErrors(doc('tests="1"', '<testcase name="t"/>'))).toEqual([
      'testsuite skipped="undefined" but 0 cases',
      'testsuite time undefined is not seconds with milliseconds',
      'testsuite timestamp undefined is not yyyy-mm-ddThh:mm:ss',
      'testcase t: time undefined is not seconds with milliseconds',
    ]);
  });

  it('printable keeps the words and the line breaks, and drops escapes and controls', () => {
    expect(printable('\x1b[1;31mFAIL\x1b[0m\tstep 3\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x9b2Kdone\x07 \u00e9\u{1f600} \ufffe\x1b')).toBe('FAIL\tstep 3\r\nlink done \u00e9\u{1f600} ');
  });
});
