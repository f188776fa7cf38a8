/**
 * An Airbyte source, unmodified, through `tidemark check --airbyte CMD --api FILE`: the plain
 * Node example (per-stream STATE once a read is complete, an exclusive `updated_after`, the
 * next page in a Link header) passes, and its buggy twin, which checkpoints after every page,
 * is caught with the right anomaly and replays to the same history.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { argvOf, cli } from './support.js';

const API = 'examples/airbyte/api.json';
const hashOf = (out: string): string | undefined => /History sha256 ([0-9a-f]{64})/.exec(out)?.[1];

describe('the example Airbyte source', () => {
  it('passes generated worlds, each sync attempt a real process', async () => {
    const r = await cli('check', '--airbyte', 'node examples/airbyte/source.mjs', '--api', API, '--runs', '15', '--seed', '5');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toMatch(/generated worlds: pass after 15 worlds/);
    expect(r.out).toContain('pass     binding-change-same-store (R2)');
  });

  it('its buggy twin, checkpointing after every page, is a premature watermark; the replay gives the same history', async () => {
    const buggy = 'node examples/airbyte/source-buggy.mjs';
    const r = await cli('check', '--airbyte', buggy, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  airbyte-source: premature-watermark');
    // updated_after=42 would skip e42b, which the next page held: the state claimed it done.
    expect(r.out).toContain('committed the watermark 42 (inclusive) while e42b at 42#e42b had no durable outcome');
    const replay = /Replay: (npx tidemark replay .*)$/m.exec(r.out)?.[1];
    expect(replay).toBe(`npx tidemark replay --airbyte '${buggy}' --api ${API} --scenario ties-across-page-boundary`);
    const again = await cli(...argvOf(replay as string));
    expect(again.code, again.out + again.err).toBe(EXIT.fail);
    expect(hashOf(again.out)).toBeDefined();
    expect(hashOf(again.out)).toBe(hashOf(r.out));
  });

  it('a Singer tap checked as an Airbyte source is unknown: it refuses `read`, and prints nothing a platform can use', async () => {
    const r = await cli('check', '--airbyte', 'python3 examples/singer/tap_events.py', '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the connector printed no Airbyte RECORD or STATE line: it exited with code 2, 5 times in a row');
    expect(r.err).toContain('stderr tail: usage: tap_events.py');
  });
});
