/**
 * An Airbyte source, unmodified, through `tidemark check --airbyte CMD --api FILE`: the plain
 * Node example (per-stream STATE once a read is complete, an exclusive `updated_after` asked
 * from a second before the bookmark, the next page in a Link header) passes, and its buggy
 * twin, which checkpoints each page before writing its records, is caught with the right
 * anomaly and replays to the same history; and the same for a source built on a connector
 * framework from the registry.
 */
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/cli.js';
import { argvOf, cli } from './support.js';

const API = 'examples/airbyte/api.json';
const hashOf = (out: string): string | undefined => /History sha256 ([0-9a-f]{64})/.exec(out)?.[1];

describe('the example Airbyte source', () => {
  // Every named scenario its API allows, and a few generated worlds: each world is several
  // sync attempts, each a process start, and what generated worlds add here is the source
  // meeting the generator's shapes at all, not a soak.
  it('passes the named scenarios and generated worlds, each sync attempt a real process', async () => {
    const r = await cli('check', '--airbyte', 'node examples/airbyte/source.mjs', '--api', API, '--runs', '3', '--seed', '5');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toMatch(/scenarios: 9 of 12 passed, 3 untested \(their adversity never fired\), 5 skipped/);
    expect(r.out).toMatch(/generated worlds: pass after 3 worlds \([1-9]\d* world calls\)/);
    expect(r.out).toContain('pass     binding-change-same-store (R2)');
  });

  it('its buggy twin, checkpointing each page before its records, is a premature watermark; the replay gives the same history', async () => {
    const buggy = 'node examples/airbyte/source-buggy.mjs';
    const r = await cli('check', '--airbyte', buggy, '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  airbyte-source: premature-watermark');
    // The first page's STATE, printed before its RECORDs, claimed e41 done before it was written.
    expect(r.out).toContain('committed the watermark 42 (exclusive) while e41 at 41#e41 had no durable outcome');
    const replay = /Replay: (npx tidemark replay .*)$/m.exec(r.out)?.[1];
    expect(replay).toBe(`npx tidemark replay --airbyte '${buggy}' --api ${API} --scenario ties-across-page-boundary`);
    const again = await cli(...argvOf(replay as string));
    expect(again.code, again.out + again.err).toBe(EXIT.fail);
    expect(hashOf(again.out)).toBeDefined();
    expect(hashOf(again.out)).toBe(hashOf(r.out));
  });

  it('records written under another stream are no effect of this one: phantoms, not a pass', async () => {
    const r = await cli('check', '--airbyte', 'node test/fixtures/connector/other-stream.mjs', '--api', API, '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out).toBe(EXIT.fail);
    expect(r.out).toContain('phantom-effect');
  });

  it('records whose cursor value is not the one their version was served at are divergent, though their content is', async () => {
    const r = await cli('check', '--airbyte', 'node test/fixtures/connector/cursor-shifted.mjs', '--api', API, '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  airbyte-source: divergent-duplicate');
    // e41 was served at key 41 (00:00:41); the record said an hour later, key 3641.
    expect(r.out).toMatch(/the first effect for e41 at step \d+ carries the key \[3641\], but the source served it at \[41\]/);
    expect(r.out).toMatch(/emit effect e41 at key 3641 -> ok/);
  });

  it('a STATE after records without the bookmark is told in a note, and dropping the bookmark so is a regression', async () => {
    const r = await cli('check', '--airbyte', 'node test/fixtures/connector/state-in-progress.mjs', '--api', API, '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toMatch(/note: \d+ STATE message\(s\) the connector wrote after its records held no value at the bookmark path "updated_at" \(the first: the "events" stream_state has no "updated_at": its keys are "progress"\); each was persisted as a null watermark, which claims nothing done/);
    // The next sync's in-progress state forgets the bookmark the first sync ended with.
    expect(r.out).toContain('FAIL  airbyte-source: watermark-regression');
  });

  it.each([
    // Threw while the platform read it, and the world restarted the sync for ever: a hang.
    ['global-state-null', 'its global.stream_states[0] is null, not an object'],
    // Read as a state without the bookmark: unknown, but blaming the description's bookmark path.
    ['unknown-type', 'its type is string "PER_STREAM", not one of "STREAM", "GLOBAL", "LEGACY"'],
    ['no-descriptor', 'its stream has no stream_descriptor (it is absent)'],
    ['state-not-object', 'its stream.stream_state is number '],
  ])('a STATE of a shape the protocol does not define (%s) is unknown, saying what is wrong with it', async (shape, problem) => {
    const r = await cli('check', '--airbyte', `node test/fixtures/connector/state-shape.mjs ${shape}`, '--api', API, '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain(`the run could not be judged: the connector wrote a STATE whose shape the Airbyte protocol does not define (docs/connectors.md, "What the platform does"): ${problem}`);
    expect(r.out).toMatch(/verdict: unknown$/);
  });

  it.each(['date', 'datetime'])('a date-only API, its records written as a %s, passes: a datetime at midnight UTC is its day (it carried no key, a divergent-duplicate)', async (style) => {
    const r = await cli('check', '--airbyte', `node test/fixtures/connector/date-source.mjs ${style}`, '--api', 'test/fixtures/connector/api-date.json', '--scenario', 'failed-event-holds-watermark');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toContain('pass     failed-event-holds-watermark (R6 R7 R8)');
  });

  describe('a source that keeps its bookmark as ISO 8601 for an epoch-seconds API', () => {
    const source = (file: string): string => `node test/fixtures/connector/iso-bookmark.mjs ${file}`;
    it('described so (state.format), passes; its bookmark was a token-as-watermark', async () => {
      const r = await cli('check', '--airbyte', source('examples/airbyte/source.mjs'), '--api', 'test/fixtures/connector/api-iso-bookmark.json', '--scenario', 'failed-event-holds-watermark');
      expect(r.code, r.out + r.err).toBe(EXIT.pass);
    });

    it('not described so, is unknown, naming the field that says it', async () => {
      const r = await cli('check', '--airbyte', source('examples/airbyte/source.mjs'), '--api', API, '--scenario', 'failed-event-holds-watermark');
      expect(r.code, r.out + r.err).toBe(EXIT.unknown);
      expect(r.err).toContain('the run could not be judged: the bookmark "2024-01-01T00:00:4');
      expect(r.err).toContain('is no cursor value in the cursor\'s format, epoch-seconds, but reads as one in iso8601: set state.format to "iso8601" in the API description');
    });

    it('its buggy twin, described so, is still a premature watermark', async () => {
      const r = await cli('check', '--airbyte', source('examples/airbyte/source-buggy.mjs'), '--api', 'test/fixtures/connector/api-iso-bookmark.json', '--scenario', 'ties-across-page-boundary');
      expect(r.code, r.out + r.err).toBe(EXIT.fail);
      expect(r.out).toContain('committed the watermark 42 (exclusive) while e41 at 41#e41 had no durable outcome');
    });
  });

  it('a Singer tap checked as an Airbyte source is unknown: it refuses `read`, and prints nothing a platform can use', async () => {
    const r = await cli('check', '--airbyte', 'python3 examples/singer/tap_events.py', '--api', API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.unknown);
    expect(r.err).toContain('the connector printed no Airbyte RECORD or STATE line: it exited with code 2, 5 times in a row');
    expect(r.err).toContain('stderr tail: usage: tap_events.py');
  });
});

/**
 * The same API read by a source built on a real connector framework from the registry,
 * faros-airbyte-cdk (a devDependency): its framework writes gzipped state, several STATE
 * messages of its own per sync and a wall-clock time into the state, and takes about a
 * second to import, so these checks run one named world each.
 */
describe('an Airbyte source built on faros-airbyte-cdk', () => {
  const FAROS_API = 'examples/airbyte/api-faros.json';
  it('passes the world its twin fails', async () => {
    const r = await cli('check', '--airbyte', 'node examples/airbyte/source-faros.mjs', '--api', FAROS_API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.pass);
    expect(r.out).toContain('pass     ties-across-page-boundary (R1 R6)');
  });

  // The framework writes a wall-clock time into its state: the replay, which runs the world
  // three times and compares the histories (a different one is unknown), shows that tidemark's
  // fixed clock makes the runs the same. The twin shares the framework and its state handling.
  it('its twin, a > cursor on a shared timestamp checkpointed mid-stream, is a premature watermark; the replay gives the same history on every run although its state holds the clock', async () => {
    const buggy = 'node examples/airbyte/source-faros-buggy.mjs';
    const r = await cli('check', '--airbyte', buggy, '--api', FAROS_API, '--scenario', 'ties-across-page-boundary');
    expect(r.code, r.out + r.err).toBe(EXIT.fail);
    expect(r.out).toContain('FAIL  airbyte-source: premature-watermark');
    // Killed after the checkpoint at e42a, the next sync asked updated_after=42 and never read e42b.
    expect(r.out).toContain('committed the watermark 43 (exclusive) while e42b at 42#e42b had no durable outcome');
    expect(r.out).toMatch(/commit \[watermark \{"key":\[42\],"inclusive":false\} .* -> CRASH after it took effect/);
    // The framework's own LOG lines are in the failure text: the second sync starts from 42.
    expect(r.out).toMatch(/Connector output \(.*\):\n\s+w1#1\s+LOG INFO /);
    expect(r.out).toContain('LOG INFO Setting initial state of events stream to {"updated_at":1704067242}');
    const replay = /Replay: (npx tidemark replay .*)$/m.exec(r.out)?.[1];
    expect(replay).toBe(`npx tidemark replay --airbyte '${buggy}' --api ${FAROS_API} --scenario ties-across-page-boundary`);
    const again = await cli(...argvOf(replay as string));
    expect(again.code, again.out + again.err).toBe(EXIT.fail);
    expect(hashOf(again.out)).toBeDefined();
    expect(hashOf(again.out)).toBe(hashOf(r.out));
  });
});
