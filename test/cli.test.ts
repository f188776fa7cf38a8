import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from '../src/cli.js';
import { Progress } from '../src/cli/progress.js';
import { COMMANDS } from '../src/cli/spec.js';
import { argvOf, BUILT_CLI, cli } from './support.js';

describe('tidemark CLI', () => {
  it('check passes the reference consumer, printing the seed and the number of worlds', async () => {
    const r = await cli('check', '--consumer', 'reference', '--runs', '100', '--seed', '3');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('seed 3, 100 generated worlds');
    expect(r.out).toContain('generated worlds: pass after 100 worlds');
    expect(r.out).toMatch(/verdict: pass$/);
  });

  it('check fails a mutant with exit 1, and its replay command reproduces the same history', async () => {
    const r = await cli('check', '--consumer', 'max-position-fetched', '--runs', '300', '--seed', '5');
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain('premature-watermark (R6 R7 R8 R9 R10)');
    expect(r.out).toContain('If this fails, check R6');
    const replays = [...r.out.matchAll(/Replay: (npx tidemark replay .*--path.*)$/gm)].map((m) => m[1]!);
    expect(replays).toHaveLength(1);
    const hash = r.out.match(/History sha256 (\w+)\n\s*Replay: npx tidemark replay --consumer max-position-fetched --seed/)?.[1];
    const again = await cli(...argvOf(replays[0]!));
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(`History sha256 ${hash}`);
  });

  it('replay runs a named scenario', async () => {
    const r = await cli('replay', '--consumer', 'reference', '--scenario', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toContain('emit effect e42 -> ERROR unavailable');
  });

  it('lists scenarios and consumers', async () => {
    expect((await cli('scenarios')).out).toContain('failed-event-holds-watermark');
    const consumers = await cli('consumers');
    expect(consumers.out).toContain('token-as-watermark');
    expect(consumers.out).toContain('mutant, breaks R8');
    // One column for the descriptions, however long the longest name.
    const starts = new Set(consumers.out.split('\n').map((l) => l.search(/ (mutant, breaks|reference consumer)/)));
    expect(starts.size).toBe(1);
  });

  it.each([
    [['frobnicate'], "unknown command 'frobnicate'"],
    [['check', '--runs', '0'], '--runs must be an integer of at least 1'],
    [['check', '--searches', '0'], '--searches must be an integer of at least 1'],
    [['mutants', '--jobs', '0'], '--jobs must be an integer of at least 1'],
    [['report', '--jobs', 'two', '--out', '/dev/null'], "--jobs must be an integer of at least 1, got 'two'"],
    [['check', '--runs', 'many'], "got 'many'"],
    // Decimal digits only: Number() reads these as 16, 1000 and 16, and a seed would be printed back as another.
    [['check', '--consumer', 'reference', '--runs', '0x10'], "--runs must be an integer of at least 1 and at most 1,000,000, got '0x10'"],
    [['check', '--consumer', 'reference', '--runs', '1e3'], "--runs must be an integer of at least 1 and at most 1,000,000, got '1e3' (in decimal notation: digits, a minus sign, a decimal point)"],
    [['check', '--consumer', 'reference', '--seed', '0x10'], "--seed must be an integer from -2147483648 to 4294967295 (a 32-bit seed), got '0x10'"],
    [['check', '--consumer', 'reference', '--heartbeat', '1e1'], "--heartbeat must be a number of seconds of at least 0 and at most 2,147,483.647, got '1e1'"],
    [['check', '--consumer', 'nope'], "no consumer named 'nope'"],
    [['check', '--bogus'], "Unknown option '--bogus'"],
    [['replay', '--consumer', 'reference'], 'replay needs --seed and --path'],
    [['replay', '--seed', '1', '--path', 'x:y'], '--path must look like'],
    [['replay', '--scenario', 'nope'], "no scenario named 'nope'"],
    [['check'], 'check needs a consumer to check, in one of three ways: --adapter MODULE'],
    [['check', '--runs', '50'], '--command CMD (a consumer process in any language) or --consumer NAME'],
    [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--runs', '5'], '--scenario cannot be combined with --runs'],
    [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--seed', '5'], '--scenario cannot be combined with --seed'],
    [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--time-limit', '5'], '--scenario cannot be combined with --time-limit'],
    [['check', '--consumer', 'reference', '--all', '--scenario', 'stale-token'], '--all cannot be combined with --scenario'],
    [['check', '--consumer', 'reference', '--stall-ms', '100'], '--stall-ms applies only to a --command consumer'],
    [['check', '--consumer', 'reference', '--runs', '1000001'], '--runs must be an integer of at least 1 and at most 1,000,000'],
    [['check', '--consumer', 'reference', '--seed', '4294967296'], '--seed must be an integer from -2147483648 to 4294967295 (a 32-bit seed)'],
    [['check', '--consumer', 'reference', '--heartbeat=-1'], '--heartbeat must be a number of seconds of at least 0'],
    // A negative number as a separate argument: what the flag takes, not the parser's advice.
    [['check', '--consumer', 'reference', '--jobs', '-1'], "--jobs must be an integer of at least 1 and at most 8, got '-1'"],
    [['check', '--consumer', 'reference', '--heartbeat', '-0.5'], "--heartbeat must be a number of seconds of at least 0 and at most 2,147,483.647, got '-0.5'"],
    // Node's timers take at most 2^31 - 1 ms: a longer one would fire at once.
    [['check', '--consumer', 'reference', '--heartbeat', '3000000'], "--heartbeat must be a number of seconds of at least 0 and at most 2,147,483.647, got '3000000'"],
    [['check', '--command', 'node examples/node/consumer.mjs', '--hello-ms', '2147483648'], "--hello-ms must be an integer of at least 1 and at most 2,147,483,647, got '2147483648'"],
    [['check', '--command', 'node examples/node/consumer.mjs', '--stall-ms', '2147483648'], "--stall-ms must be an integer of at least 1 and at most 2,147,483,647, got '2147483648'"],
    // Two flags that would write one file: the second write would destroy the first.
    [['check', '--consumer', 'reference', '--json', 'same.out', '--junit', 'same.out'], '--json and --junit name the same file, same.out: one would overwrite the other; give each its own'],
    [['replay', '--consumer', 'reference', '--seed', '1', '--path', '0', '--json', 'tidemark-regressions.json'], '--json and --regressions (by default) name the same file, tidemark-regressions.json'],
    [['replay', '--consumer', 'reference', '--seed', '1', '--path', '0', '--regressions', 'r.json', '--timeline', './r.json'], '--timeline and --regressions name the same file, r.json'],
    // A merge's output onto one of its shards would destroy the shard it read.
    [['merge', 'shard-1.json', 'shard-2.json', '--json', './shard-2.json'], 'the shard shard-2.json and --json name the same file, ./shard-2.json'],
    [['replay', '--scenario', 'stale-token', '--seed', '1'], '--scenario cannot be combined with --seed'],
    [['replay', '--scenario', 'stale-token', '--path', '1:2'], '--scenario cannot be combined with --path'],
    [['help', 'frobnicate'], "no command named 'frobnicate'"],
  ])('usage error %j exits 3 with a clear message', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(message);
  });

  it('prints help for the tool and for each command', async () => {
    expect((await cli('--help')).code).toBe(EXIT.pass);
    expect((await cli()).code).toBe(EXIT.usage);
    for (const c of ['check', 'replay', 'scenarios', 'consumers']) {
      const r = await cli(c, '--help');
      expect(r.code).toBe(EXIT.pass);
      expect(r.out).toContain(`tidemark ${c}`);
    }
    const global = await cli('help');
    expect(global.out).toContain('4    harness error');
    expect(global.out).toContain("Run 'tidemark help <command>'");
  });

  it('--version prints the version in package.json', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = await cli('--version');
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toBe(`tidemark ${pkg.version}`);
  });

  it("help <command> prints that command's flag table, and every flag in it is one the parser takes", async () => {
    for (const spec of COMMANDS) {
      const r = await cli('help', spec.name);
      expect(r.code).toBe(EXIT.pass);
      expect(r.out).toBe((await cli(spec.name, '--help')).out);
      expect(r.out).toContain(`Usage: ${spec.usage}`);
      const rows = [...r.out.matchAll(/^ {2}(--[\w-]+)(?: [A-Za-z,/=|]+)? +(\w+) /gm)].map((m) => [m[1]!, m[2]!]);
      expect(rows).toEqual(spec.flags.map((f) => [`--${f.name}`, f.type]));
      for (const [flag, type] of rows) {
        // The parser takes the flag: whatever else goes wrong, it is not an unknown option.
        const args = type === 'switch' ? [flag!] : [flag!, type === 'text' || type === 'file' || type === 'output' ? 'x' : type === 'shard' ? '1/1' : type === 'pairs' ? 'k=v' : '1'];
        const parsed = await cli(spec.name, ...args, '--bogus-flag-to-stop-early');
        expect(parsed.err, `${spec.name} ${flag}`).toContain("Unknown option '--bogus-flag-to-stop-early'");
      }
    }
    expect((await cli('help', 'check')).out).toMatch(/^ {2}--runs N +integer +generated worlds to try +1000$/m);
  });

  it('mutants prints the kill matrix, with the reference under the same seed, and writes JSON', async () => {
    const json = join(tmpdir(), `tidemark-kill-${process.pid}.json`);
    const r = await cli('mutants', '--only', 'token-as-watermark,checkpoint-before-flush', '--runs', '200', '--seed', '2', '--json', json);
    expect(r.code).toBe(EXIT.pass);
    expect(r.out).toMatch(/^token-as-watermark +R8 +token-as-watermark +token-as-watermark +yes /m);
    expect(r.out).toMatch(/^reference +- +pass +pass /m);
    expect(r.out).toContain('verdict: 2 of 2 mutants killed, reference pass');
    const matrix = JSON.parse(readFileSync(json, 'utf8'));
    expect(matrix.rows.map((x: { mutant: string }) => x.mutant)).toEqual(['token-as-watermark', 'checkpoint-before-flush']);
    expect((await cli('mutants', '--only', 'nope')).err).toContain("no mutant named 'nope'");
  });

  it('report writes the Markdown report, and re-renders it from its own searches', async () => {
    const out = join(tmpdir(), `tidemark-report-${process.pid}.md`);
    // A small report: what this proves is the writing and re-rendering, not the searches
    // (test/report-stale.test.ts re-runs the committed report's own). One world per search
    // kills a few mutants and leaves the rest alive, so both kinds of row are written and
    // re-rendered, at a seventh of the cost of 20 worlds (whose kills all shrink).
    const r = await cli('report', '--seeds', '1', '--runs', '1', '--out', out);
    expect(r.code).toBe(EXIT.pass);
    const first = readFileSync(out, 'utf8');
    expect(first).toContain('# tidemark report');
    expect(first).toContain('## Kill matrix (seed 20261129)');
    const again = await cli('report', '--seeds', '1', '--runs', '1', '--out', out, '--reuse-searches');
    expect(again.code).toBe(EXIT.pass);
    expect(readFileSync(out, 'utf8').split('<!-- timings')[0]).toBe(first.split('<!-- timings')[0]);
  });

  it('a broken regression file is a clear usage error', async () => {
    const bad = join(tmpdir(), `tidemark-bad-${process.pid}.json`);
    writeFileSync(bad, '{ not json');
    expect((await cli('regressions', '--file', bad)).err).toContain('is not valid JSON');
    writeFileSync(bad, JSON.stringify({ version: 9, entries: [] }));
    expect((await cli('regressions', '--file', bad)).err).toContain('has version 9; this tidemark reads version 1');
    writeFileSync(bad, JSON.stringify({ version: 1, entries: [{ adapter: 'x', kind: 'world', seed: 1, path: 'a' }] }));
    const r = await cli('regressions', '--file', bad);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain('entries[0] must be');
    // A history's hash is a sha256 in hex; one of real kills besides it only where the recorded one had session crashes.
    const sha = 'a'.repeat(64);
    const entry = { adapter: 'command:node x.mjs', kind: 'scenario', scenario: 'stale-token' };
    for (const fields of [{ hash: 'zzz' }, { hash: '' }, { kills: 'sampled', hash: sha, realHash: 'zzz' }, { kills: 'real', hash: sha, realHash: 'b'.repeat(64) }, { hash: sha, realHash: 'b'.repeat(64) }, { kills: 'sometimes' }]) {
      writeFileSync(bad, JSON.stringify({ version: 1, entries: [{ ...entry, ...fields }] }));
      const edited = await cli('regressions', '--file', bad);
      expect(edited.code, JSON.stringify(fields)).toBe(EXIT.usage);
      expect(edited.err).toContain("realHash (a sha256 in hex, with kills 'sampled')");
    }
    writeFileSync(bad, JSON.stringify({ version: 1, entries: [{ ...entry, kills: 'sampled', hash: sha, realHash: 'b'.repeat(64) }] }));
    expect((await cli('regressions', '--file', bad)).code).toBe(EXIT.pass);
  });

  it('lists the regression file', async () => {
    const file = join(tmpdir(), `tidemark-list-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ version: 1, entries: [{ adapter: 'builtin:reference', kind: 'scenario', scenario: 'stale-token', anomaly: 'omission' }] }));
    const r = await cli('regressions', '--file', file);
    expect(r.out).toContain('builtin:reference: scenario stale-token (omission)');
    const pruned = await cli('regressions', '--file', file, '--prune', '--consumer', 'reference');
    expect(pruned.out).toContain('pruned 1 passing entry; 0 kept');
  });
});


describe('output paths are checked before the run, and a failed write loses nothing else', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-outputs-'));
  const aFile = join(dir, 'a-file');
  writeFileSync(aFile, 'not a directory');

  it.each([
    [['check', '--consumer', 'reference', '--runs', '5', '--json', join(aFile, 'out.json')], '--json'],
    [['check', '--consumer', 'reference', '--runs', '5', '--junit', dir], '--junit'],
    [['check', '--consumer', 'reference', '--runs', '5', '--timeline', join(aFile, 'x', 'p.html')], '--timeline'],
    [['check', '--consumer', 'reference', '--runs', '5', '--regressions', join(aFile, 'r.json')], '--regressions'],
    [['replay', '--scenario', 'stale-token', '--json', join(aFile, 'r.json')], '--json'],
    [['mutants', '--only', 'token-as-watermark', '--json', join(aFile, 'm.json')], '--json'],
    [['report', '--out', dir], '--out'],
  ])('%j: exit 3 before any work, naming %s', async (argv, flag) => {
    const r = await cli(...argv);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(new RegExp(`^tidemark: ${flag} \\S+: (cannot create its directory|is a directory)`));
    // Nothing ran: not even the header line of the run was printed.
    expect(r.out).toBe('');
  });

  it('an output a write could hang on, or a read never end, is refused before any work: FIFO, /proc, /dev/zero as the regression file', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const cases: [string[], string][] = [
      [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', fifo], `--json ${fifo}: is a FIFO, whose writer waits for a reader, not a regular file`],
      [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--junit', '/proc/self/comm'], '--junit /proc/self/comm: is in /proc, a kernel filesystem'],
      [['check', '--consumer', 'reference', '--scenario', 'stale-token', '--regressions', '/dev/zero'], '--regressions /dev/zero: is a device, not a regular file (it is read before it is written)'],
      [['regressions', '--file', fifo], `${fifo} is not a regular file`],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(...argv);
      expect(r.code, r.err).toBe(EXIT.usage);
      expect(r.err).toContain(message);
    }
    // A device that is only written is an output like any other.
    expect((await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', '/dev/null')).code).toBe(EXIT.pass);
  });

  it('two outputs are one file when the kernel would open one file: through a linked directory and `..`, or a link to a file not there yet', async () => {
    const root = join(dir, 'links');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    execFileSync('ln', ['-s', 'a/b', join(root, 'd')]);
    execFileSync('ln', ['-s', 'target.json', join(root, 'dangling.json')]);
    writeFileSync(join(root, 'y.json'), '{}');
    writeFileSync(join(root, 'a', 'y.json'), '{}');
    const replay = (...outputs: string[]) => cli('replay', '--consumer', 'reference', '--seed', '1', '--path', '0', '--regressions', join(root, 'r.json'), ...outputs);
    // d/.. is a, not the directory of d: these are two files.
    expect((await replay('--json', `${root}/d/../y.json`, '--timeline', join(root, 'y.json'))).code).toBe(EXIT.pass);
    // And these are one, not there yet.
    const same = await replay('--json', `${root}/d/../x.json`, '--timeline', join(root, 'a', 'x.json'));
    expect(same.code).toBe(EXIT.usage);
    expect(same.err).toContain('--json and --timeline name the same file');
    const dangling = await replay('--json', join(root, 'dangling.json'), '--timeline', join(root, 'target.json'));
    expect(dangling.code).toBe(EXIT.usage);
    expect(dangling.err).toContain('--json and --timeline name the same file');
  });

  it('a command line refused (exit 3) leaves what is at its output paths as it was: only a run that starts takes an earlier run\'s output away', async () => {
    const kept = join(dir, 'kept.json');
    writeFileSync(kept, '{"keep":1}');
    const r = await cli('replay', '--consumer', 'reference', '--json', kept, '--path', '1:2');
    expect(r.code).toBe(EXIT.usage);
    expect(readFileSync(kept, 'utf8')).toBe('{"keep":1}');
  });

  it("an output's own checks follow the kernel too: through a linked directory, `..` is its target's parent", async () => {
    const root = join(dir, 'checked-links');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    execFileSync('ln', ['-s', 'a/b', join(root, 'd')]);
    // d/../o.json is a/o.json, a directory; o.json beside d is not there at all.
    mkdirSync(join(root, 'a', 'o.json'));
    const r = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', `${root}/d/../o.json`);
    expect(r.code, r.err).toBe(EXIT.usage);
    expect(r.err).toContain(`--json ${root}/d/../o.json: is a directory`);
    expect(r.out).toBe('');
    // Not there yet: where it would be made is judged from its nearest existing ancestor,
    // before any directory is made. This link leads into /proc, where nothing is to be made.
    execFileSync('ln', ['-s', '/proc/self', join(root, 'p')]);
    const kernel = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', `${root}/p/new/../x.json`);
    expect(kernel.code, kernel.err).toBe(EXIT.usage);
    expect(kernel.err).toContain(`--json ${root}/p/new/../x.json: is in /proc`);
    // A name ending in a slash names a directory, which the write would find only after the run.
    const slash = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', join(root, 'out.json/'));
    expect(slash.code, slash.err).toBe(EXIT.usage);
    expect(slash.err).toContain('ends in /, so it names a directory');
  });

  it.runIf(existsSync('/dev/shm'))('a regular file under /dev is a file like any other: two outputs, or an output and a shard, cannot share it', async () => {
    const shard = `/dev/shm/tidemark-cli-test-${process.pid}.json`;
    const r = await cli('merge', shard, 'shard-2.json', '--json', shard);
    expect(r.code, r.err).toBe(EXIT.usage);
    expect(r.err).toContain(`the shard ${shard} and --json name the same file`);
  });

  it('outputs to our own stdout, redirected to a file, are added to what was printed, not written over it', () => {
    const file = join(dir, 'stdout.txt');
    const fd = openSync(file, 'w');
    try {
      execFileSync(process.execPath, [BUILT_CLI, 'check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', '/dev/stdout', '--junit', '/dev/fd/1', '--regressions', join(dir, 'stdout-regressions.json')], { stdio: ['ignore', fd, 'ignore'] });
    } finally {
      closeSync(fd);
    }
    const text = readFileSync(file, 'utf8');
    // Opened again by its name, each output truncated the file: only the last one was left.
    expect(text).toContain('verdict: pass');
    expect(text).toContain('"command": "check"');
    expect(text).toContain('<testsuites');
  });

  it('a regression file that is a symbolic link is written through to its target, and stays a link', async () => {
    const target = join(dir, 'shared-regressions.json');
    const link = join(dir, 'linked-regressions.json');
    execFileSync('ln', ['-s', target, link]);
    const r = await cli('check', '--adapter', 'examples/ledger-consumer-buggy.ts', '--scenario', 'failed-event-holds-watermark', '--regressions', link);
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain(`recorded 1 new failure(s) in ${link}; they are replayed first from now on, and each by its ID with npx tidemark replay ID:`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8')).entries).toHaveLength(1);
  });

  it('creates the directories of output paths, as vitest does for its JUnit file', async () => {
    const junit = join(dir, 'deep', 'er', 'report.xml');
    const r = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--junit', junit);
    expect(r.code).toBe(EXIT.pass);
    expect(readFileSync(junit, 'utf8')).toContain('<testsuites');
  });

  it.runIf(existsSync('/dev/full'))('a write that fails after the run still prints the verdict and writes the other outputs: exit 4 on a pass', async () => {
    const junit = join(dir, 'kept.xml');
    const r = await cli('check', '--consumer', 'reference', '--scenario', 'stale-token', '--json', '/dev/full', '--junit', junit);
    expect(r.err).toContain('tidemark: could not write --json /dev/full: ENOSPC');
    expect(r.out).toMatch(/verdict: pass$/);
    expect(readFileSync(junit, 'utf8')).toContain('<testsuites');
    expect(r.code).toBe(EXIT.error);
    const failing = await cli('check', '--consumer', 'token-as-watermark', '--scenario', 'stale-token', '--json', '/dev/full');
    expect(failing.code).toBe(EXIT.fail);
  });

  it('report --out refuses to overwrite a file that is not a tidemark report, before computing anything', async () => {
    const mine = join(dir, 'NOTES.md');
    writeFileSync(mine, '# my notes\n');
    const r = await cli('report', '--out', mine);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(`--out ${mine} exists and is not a tidemark report`);
    expect(r.err).toContain('give --force to overwrite it');
    expect(readFileSync(mine, 'utf8')).toBe('# my notes\n');
    // Nothing was computed: the report's progress lines (`report: ...`) never started.
    expect(r.err).not.toMatch(/^report: /m);
    expect(r.out).toBe('');
  });
});

describe('replay input is validated, and every printed replay command works as printed', () => {
  it.each([
    [['--seed', '42', '--path', '0:99999'], 'does not lead to a world at seed 42 (its last step is beyond the worlds there)'],
    [['--seed', '42', '--path', '0:99999:0'], '--path 0:99999:0 does not lead to a world at seed 42;'],
    [['--seed', '42', '--path', '999999999999'], 'its first number must be below 1000000'],
  ])('replay %j: exit 3 with what is valid, not a false pass, a hang or a stack', async (args, message) => {
    const r = await cli('replay', '--consumer', 'token-as-watermark', ...args);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(message);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(r.out).not.toContain('PASS');
  });

  it('a seed of 2^31 and above is the 32-bit seed fast-check uses, printed so that its replay command works', async () => {
    const r = await cli('check', '--consumer', 'token-as-watermark', '--runs', '100', '--seed', '2147483648', '--searches', '1');
    expect(r.code).toBe(EXIT.fail);
    expect(r.out).toContain('seed -2147483648');
    const replay = r.out.match(/Replay: (npx tidemark replay .*--path.*)$/m)?.[1];
    expect(replay).toContain('--seed=-2147483648 --path');
    const hash = r.out.match(/History sha256 (\w+)\n\s*Replay: npx tidemark replay --consumer token-as-watermark --seed/)?.[1];
    const again = await cli(...argvOf(replay!));
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(`History sha256 ${hash}`);
  });

  it('an --adapter path with spaces is quoted in the printed replay command', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tidemark-quote-')), 'my adapters');
    mkdirSync(dir);
    const adapter = join(dir, "o'brien.ts");
    // A consumer of its own, importing nothing: one that claims it caught up without reading a page.
    writeFileSync(adapter, `export default { name: 'quoted', capabilities: { delivery: 'at-least-once' }, run: async (world) => { await world.caughtUp(); } };\n`);
    const r = await cli('check', '--adapter', adapter, '--scenario', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.fail);
    const replay = r.out.match(/Replay: (npx tidemark replay .*)$/m)![1]!;
    expect(replay).toBe(`npx tidemark replay --adapter '${adapter.replace(/'/g, `'\\''`)}' --scenario failed-event-holds-watermark`);
    // What a POSIX shell makes of it, word by word.
    const words = JSON.parse(execFileSync('sh', ['-c', `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' ${replay.slice('npx tidemark '.length)}`], { encoding: 'utf8' })) as string[];
    expect(words).toEqual(['replay', '--adapter', adapter, '--scenario', 'failed-event-holds-watermark']);
    const again = await cli(...words);
    expect(again.code).toBe(EXIT.fail);
  });

  it('replay --json writes the verdict, anomalies, plan and history', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tidemark-replay-')), 'out', 'replay.json');
    const r = await cli('replay', '--consumer', 'token-as-watermark', '--scenario', 'stale-token', '--json', file);
    expect(r.code).toBe(EXIT.fail);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toMatchObject({ consumer: 'token-as-watermark', adapter: 'builtin:token-as-watermark', scenario: 'stale-token', verdict: 'fail', replay: 'npx tidemark replay --consumer token-as-watermark --scenario stale-token' });
    expect(written.anomalies[0].kind).toBe('token-as-watermark');
    expect(r.out).toContain(`History sha256 ${written.hash}`);
    expect(written.history.steps.length).toBeGreaterThan(0);
  });
});

describe('check output streams, and a time limit bounds the generated worlds', () => {
  it('prints each scenario as it finishes and a heartbeat while worlds run, without a terminal', async () => {
    const lines: string[] = [];
    // A heartbeat every millisecond, so that any run of worlds, however fast the machine, has beats.
    const code = await main(['check', '--consumer', 'reference', '--runs', '300', '--seed', '3', '--heartbeat', '0.001', '--regressions', join(mkdtempSync(join(tmpdir(), 'tidemark-stream-')), 'r.json')], {
      out: (line) => lines.push(line),
      err: () => {},
    });
    expect(code).toBe(EXIT.pass);
    const firstScenario = lines.findIndex((l) => /^ {2}pass +\S+ \(R/.test(l));
    const summary = lines.findIndex((l) => /^generated worlds: pass after 300 worlds/.test(l));
    const beats = lines.flatMap((l, i) => (/^ {2}\.\.\. generated worlds: \d+ of 300 \([\d.]+\/s, about \d+ s left\), \d+ s elapsed$/.test(l) ? [i] : []));
    // Streamed: heartbeats of the generated worlds came between the first scenario's line and the
    // summary, so the scenario line was out while the worlds still ran, not printed with them at the end.
    expect(beats.length).toBeGreaterThan(0);
    expect(firstScenario).toBeGreaterThanOrEqual(0);
    expect(beats.every((i) => i > firstScenario && i < summary)).toBe(true);
  });

  it('replay of a scenario that does not apply to the consumer (a quirk its API never shows) is skipped, exit 2, as check skips it: never PASS', async () => {
    const r = await cli('replay', '--consumer', 'retries-served-scroll-request', '--scenario', 'repeated-page');
    expect(r.code).toBe(EXIT.unknown);
    expect(r.out).toContain("SKIPPED  retries-served-scroll-request: scenario repeated-page does not apply: the consumer's API never serves a repeat page");
    expect(r.out).not.toContain('PASS');
  });

  it('--time-limit stops the generated worlds, and the verdict says how many ran within it', async () => {
    const r = await cli('check', '--consumer', 'reference', '--runs', '1000000', '--seed', '3', '--time-limit', '1');
    expect(r.code).toBe(EXIT.pass);
    const ran = Number(r.out.match(/^verdict: pass \((\d+) of 1000000 generated worlds ran within --time-limit 1 s\)$/m)?.[1]);
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(1000000);
    expect(r.out).toContain(`generated worlds: pass after ${ran} worlds (the time limit of 1 s ended the search; --runs asked 1000000)`);
  });

  it('a time limit that ends the search before any world ran is unknown, never a pass and never a harness error', async () => {
    const r = await cli('check', '--consumer', 'reference', '--runs', '1000', '--seed', '3', '--time-limit', '0.001');
    const ran = Number(r.out.match(/^verdict: \w+ \((\d+) of 1000 generated worlds ran within --time-limit 0.001 s\)$/m)?.[1]);
    // A fast machine may fit a world into a millisecond; then the worlds that ran are judged.
    if (ran === 0) {
      expect(r.code, r.err).toBe(EXIT.unknown);
      expect(r.out).toContain('not a pass: no generated world ran within the time limit');
    } else expect(r.code).toBe(EXIT.pass);
    expect(r.err).not.toContain('harness error');
  });

  it('on a terminal, progress counts generated worlds towards --runs and shrinking apart', () => {
    const shown: (string | null)[] = [];
    const progress = new Progress({ out: () => {}, err: () => {}, status: (l) => shown.push(l) }, { runs: 10, heartbeatMs: 0 });
    for (let i = 0; i < 4; i++) progress.world(false);
    expect(progress.line()).toMatch(/^generated worlds: 4 of 10 \(/);
    progress.world(true);
    progress.world(true);
    expect(progress.line()).toMatch(/^a failure after 4 generated worlds: 2 more tried while shrinking/);
    progress.stop();
    expect(shown.at(-1)).toBeNull();
    expect(shown[0]).toMatch(/^generated worlds: 1 of 10/);
  });

  it('--stall-ms reaches the process bridge: a silent consumer process is declared stalled after it', async () => {
    const r = await cli('check', '--command', 'python3 test/fixtures/process/stalls.py', '--scenario', 'failed-event-holds-watermark', '--stall-ms', '300', '--hello-ms', '5000');
    expect(r.code).toBe(EXIT.unknown);
    // The stall limit ended it, not the 5 s hello limit nor a hang: the verdict names the limit.
    expect(r.out).toContain('sent no call for 0.3 s');
  });
});
