import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { readRegressions } from '../src/run/regressions.js';
import { argvOf, cli } from './support.js';

/**
 * One adapter file serves every variant of a consumer: `--option KEY=VALUE` is handed to the
 * function it exports, and travels with every replay command and regression entry, so a
 * failure of one variant replays that variant and no other.
 */
const ADAPTER = 'examples/ledger-variants.ts';
const SCENARIO = 'failed-event-holds-watermark';
const dir = mkdtempSync(join(tmpdir(), 'tidemark-options-'));

describe('--option KEY=VALUE', () => {
  it('picks the variant: the buggy one fails, its replay command names the option and replays the same history', async () => {
    const file = join(dir, 'regressions.json');
    const buggy = await cli('check', '--adapter', ADAPTER, '--option', 'failed=skip', '--scenario', SCENARIO, '--regressions', file);
    expect(buggy.code).toBe(EXIT.fail);
    const replay = buggy.out.match(/Replay: (npx tidemark replay .*)$/m)![1]!;
    expect(replay).toBe(`npx tidemark replay --adapter ${ADAPTER} --option failed=skip --scenario ${SCENARIO}`);
    const hash = buggy.out.match(/History sha256 (\w+)/)![1];
    const again = await cli(...argvOf(replay), '--regressions', file);
    expect(again.code).toBe(EXIT.fail);
    expect(again.out).toContain(`History sha256 ${hash}`);
    const entries = readRegressions(file).entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ adapter: ADAPTER, options: { failed: 'skip' }, kind: 'scenario', scenario: SCENARIO });

    // The correct variant of the same file passes, and its check does not replay the other's entry.
    const correct = await cli('check', '--adapter', ADAPTER, '--option', 'failed=stop', '--scenario', SCENARIO, '--regressions', file);
    expect(correct.code).toBe(EXIT.pass);
    expect(correct.out).not.toContain('replayed first');
    expect(correct.out).toContain(`regressions (${file}): 1 recorded failure(s) of other targets not replayed: --adapter ${ADAPTER} --option failed=skip`);
    const buggyAgain = await cli('check', '--adapter', ADAPTER, '--option', 'failed=skip', '--scenario', SCENARIO, '--regressions', file);
    expect(buggyAgain.out).toContain('1 replayed first, 1 still failing');
    // --prune of one variant leaves the other's entries as they are.
    const pruned = await cli('regressions', '--file', file, '--prune', '--adapter', ADAPTER, '--option', 'failed=stop');
    expect(pruned.out).toContain('1 entry of other targets left as they are');
  });

  it('is refused when malformed, repeated, or given to a module that exports a consumer rather than a function', async () => {
    const cases: [string[], string][] = [
      [['--adapter', ADAPTER, '--option', 'failed'], "--option must look like KEY=VALUE (a key of letters, digits, '.', '_' or '-'), got 'failed'"],
      [['--adapter', ADAPTER, '--option', 'failed=skip', '--option', 'failed=stop'], "--option failed is given twice ('failed=skip' and 'failed=stop')"],
      [['--adapter', 'examples/ledger-consumer.ts', '--option', 'failed=skip'], 'it exports a consumer, not a function; export a function taking the options'],
      [['--adapter', ADAPTER, '--option', 'failed=sometimes'], 'its factory threw: failed=sometimes: expected stop or skip'],
      [['--consumer', 'reference', '--option', 'x=1'], '--option is for an --adapter module or a --command process'],
    ];
    for (const [argv, message] of cases) {
      const r = await cli('check', ...argv, '--scenario', SCENARIO);
      expect(r.code, r.err).toBe(EXIT.usage);
      expect(r.err).toContain(message);
    }
  });

  it('every recorded failure gets a short id: replay ID and replay --last replay it exactly, options and all', async () => {
    const file = join(dir, 'ids.json');
    const check = await cli('check', '--adapter', ADAPTER, '--option', 'failed=skip', '--runs', '50', '--seed', '3', '--regressions', file);
    expect(check.code).toBe(EXIT.fail);
    const entries = JSON.parse(readFileSync(file, 'utf8')).entries as { id: string; kind: string; hash: string }[];
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(e.id).toMatch(/^[0-9a-f]{8}$/);
      expect(check.out).toMatch(new RegExp(`^ {2}${e.id} {2}(scenario|world) `, 'm'));
    }
    const world = entries.find((e) => e.kind === 'world')!;
    const byId = await cli('replay', world.id.slice(0, 5), '--regressions', file);
    expect(byId.code).toBe(EXIT.fail);
    expect(byId.out).toMatch(new RegExp(`^replaying ${world.id}: npx tidemark replay --adapter ${ADAPTER} --option failed=skip --seed 3 --path "[\\d:]+"$`, 'm'));
    expect(byId.out).toContain(`History sha256 ${world.hash}`);
    const last = await cli('replay', '--last', '--regressions', file);
    expect(last.out).toContain(`replaying ${entries.at(-1)!.id}:`);
    expect(last.out).toContain(`History sha256 ${entries.at(-1)!.hash}`);

    const refused: [string[], string][] = [
      [['ffffffff'], 'no failure with ID ffffffff in'],
      [['zz'], "'zz' is not an ID"],
      [[world.id, '--seed', '3'], 'an ID (or --last) names the target and the world itself: not with --seed'],
      [[world.id, '--last'], 'give an ID or --last, not both'],
    ];
    for (const [argv, message] of refused) {
      const r = await cli('replay', ...argv, '--regressions', file);
      expect(r.code, r.err).toBe(EXIT.usage);
      expect(r.err).toContain(message);
    }
  });
});
