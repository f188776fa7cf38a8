/**
 * `tidemark judge FILE`: a recorded history judged again, running nothing; printed as check
 * prints a failure, with check's exit codes, and a file that is not a valid history is a
 * usage error that names the field.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import type { History } from '../model/history.js';
import { syntheticHistory, withoutOneEffect } from '../bench/histories.js';
import { cli } from './support.js';
import { ev, timeline } from './model/histories.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-judge-'));
let files = 0;

function write(value: unknown): string {
  const file = join(dir, `history-${files++}.json`);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

/** What replay --json wrote for a named scenario, and what replay printed. */
async function replayed(consumer: string, scenario: string): Promise<{ file: string; json: { history: History }; out: string; code: number }> {
  const file = join(dir, `replay-${files++}.json`);
  const r = await cli('replay', '--consumer', consumer, '--scenario', scenario, '--json', file);
  return { file, json: JSON.parse(readFileSync(file, 'utf8')) as { history: History }, out: r.out, code: r.code };
}

describe('tidemark judge', () => {
  it('judges what replay --json wrote, and the bare history in it, as check would: a failure, exit 1', async () => {
    const r = await replayed('max-position-fetched', 'failed-event-holds-watermark');
    expect(r.code).toBe(EXIT.fail);
    const hash = /History sha256 (\w+)/.exec(r.out)![1];
    for (const file of [r.file, write(r.json.history)]) {
      const j = await cli('judge', file);
      expect(j.code).toBe(EXIT.fail);
      expect(j.out).toContain(`FAIL  ${file}: premature-watermark (R6 R7 R8 R9 R10)`);
      expect(j.out).toContain('source: insertion-stable, page size 3, lease time to live 8 steps');
      expect(j.out).toContain('If this fails, check R6');
      // The same history, byte for byte, as the world recorded it.
      expect(j.out).toContain(`History sha256 ${hash}`);
      expect(j.out.split('\n').at(-1)).toBe('verdict: fail');
    }
  });

  it('exits 0 only after a printed passing verdict', async () => {
    const r = await replayed('reference', 'failed-event-holds-watermark');
    const j = await cli('judge', r.file);
    expect(j.code).toBe(EXIT.pass);
    expect(j.out.split('\n')[0]).toBe(`PASS  ${r.file}`);
    expect(j.out.split('\n').at(-1)).toBe('verdict: pass');
  });

  it("a scenario's replay whose adversity never fired is untested (exit 2) in replay, in its JSON and in judge; its bare history is judged as a history", async () => {
    // Exactly-once delivery makes its effects durable in commits: the crash this scenario puts after an emit has no emit to fire at.
    const r = await replayed('reference-exactly-once', 'crash-between-effect-and-completion');
    expect(r.code, r.out).toBe(EXIT.unknown);
    expect(r.out).toContain('UNTESTED  reference-exactly-once: scenario crash-between-effect-and-completion broke no rule, but the adversity it exists for never fired');
    const json = r.json as unknown as { verdict: string; reason: string };
    expect(json.verdict).toBe('unknown');
    expect(json.reason).toMatch(/^the adversity the scenario exists for never fired: the crash-after planned at emit #\d+ never fired/);
    const j = await cli('judge', r.file);
    expect(j.code, j.out).toBe(EXIT.unknown);
    expect(j.out.split('\n')[0]).toMatch(new RegExp(`^UNTESTED  ${r.file}: scenario crash-between-effect-and-completion broke no rule, but the adversity it exists for never fired: the crash-after`));
    expect(j.out.split('\n').at(-1)).toBe('verdict: unknown');
    // A bare history does not say it is a scenario's: it is judged for what it shows.
    expect((await cli('judge', write(r.json.history))).code).toBe(EXIT.pass);
  });

  it('a history that cannot be judged is unknown (exit 2), with the reason', async () => {
    const t = timeline({ initial: [ev('a', 1)] });
    t.start();
    t.hung();
    const j = await cli('judge', write(t.build()));
    expect(j.code).toBe(EXIT.unknown);
    expect(j.out).toMatch(/^UNKNOWN {2}.*: the run could not be judged: .*w1#1/);
    expect(j.out.split('\n').at(-1)).toBe('verdict: unknown');
  });

  it('a world that contradicts its ground truth is a harness error (exit 4), never the consumer', async () => {
    const [a, b] = [ev('a', 1), ev('b', 2)];
    const t = timeline({ initial: [a, b], pageSize: 2 });
    t.start();
    t.fetch([a], { limit: 2 }); // the source ends the stream with b still in it
    t.handle(a);
    t.caughtUp();
    const j = await cli('judge', write(t.build()));
    expect(j.code).toBe(EXIT.error);
    expect(j.out).toContain('HARNESS ERROR');
    expect(j.out).toContain('step 1: fetch 1 served [a], but from there the eligible stream holds [a b]');
    expect(j.out.split('\n').at(-1)).toBe('verdict: error');
  });

  it('a file that is not a valid history exits 3 naming the field, where it sits in the file', async () => {
    const r = await replayed('reference', 'failed-event-holds-watermark');
    const wrapped = structuredClone(r.json) as unknown as { history: { header: { initial: { version: unknown }[] } } };
    wrapped.history.header.initial[0]!.version = '1';
    const j = await cli('judge', write(wrapped));
    expect(j.code).toBe(EXIT.usage);
    expect(j.err).toContain('is not a valid history: history.header.initial[0].version: an integer >= 1, got "1"');
    const bare = await cli('judge', write(wrapped.history));
    expect(bare.code).toBe(EXIT.usage);
    expect(bare.err).toContain('is not a valid history: header.initial[0].version: an integer >= 1, got "1"');
  });

  it('a history of another format ("version": "1", or none, as before the header carried the plan) exits 3 naming header.version', async () => {
    const r = await replayed('reference', 'failed-event-holds-watermark');
    const { version: _version, ...header } = r.json.history.header;
    for (const older of [header, { ...header, version: '1' }]) {
      const j = await cli('judge', write({ header: older, steps: r.json.history.steps }));
      expect(j.code).toBe(EXIT.usage);
      expect(j.err).toMatch(/is not a valid history: header\.version: 5, the history format this tidemark judges \(.*record it again by replaying its seed and path\), (missing|got "1")/);
    }
  });

  it('a wrapped history that is not the one its hash names exits 3: the file was edited after it was written', async () => {
    const r = await replayed('max-position-fetched', 'failed-event-holds-watermark');
    const edited = structuredClone(r.json) as unknown as { history: { header: { contract: unknown } }; hash: string };
    // A failing world made to look like one whose source promises nothing, where the watermark it passed could be judged otherwise.
    edited.history.header.contract = { kind: 'none' };
    const j = await cli('judge', write(edited));
    expect(j.code, j.out).toBe(EXIT.usage);
    expect(j.err).toContain(`the history is not the one its hash names (${edited.hash}): the file was edited or cut after it was written`);
  });

  it('a directory or a device is refused before it is read: /dev/zero would be read for ever', async () => {
    for (const path of [dir, '/dev/zero']) {
      const j = await cli('judge', path);
      expect(j.code).toBe(EXIT.usage);
      expect(j.err).toContain(`${path} is not a regular file`);
    }
  });

  it.each([
    ['no file', [], 'judge takes one FILE'],
    ['two files', ['a.json', 'b.json'], 'judge takes one FILE'],
    ['a file that is not there', [join(dir, 'nowhere.json')], 'cannot read'],
    ['a file that is not JSON', ['{ not json'], 'is not JSON'],
    ['JSON that holds no history', [{ verdict: 'pass' }], 'holds neither a history'],
  ])('%s is a usage error', async (_, args, message) => {
    const argv = args.map((a) => (typeof a === 'string' && (a.endsWith('.json') || a === '') ? a : write(a)));
    const j = await cli('judge', ...argv);
    expect(j.code).toBe(EXIT.usage);
    expect(j.err).toContain(message);
  });

  it('a long history shows the timeline around the witness, not every step', async () => {
    const history = withoutOneEffect(syntheticHistory({ steps: 5000, mutationEvery: null }));
    const j = await cli('judge', write(history));
    expect(j.code).toBe(EXIT.fail);
    expect(j.out).toContain(`${history.steps.length} steps, shown around the witness`);
    expect(j.out.split('\n').length).toBeLessThan(200);
  });
});
