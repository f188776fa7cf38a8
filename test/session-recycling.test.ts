import { describe, expect, it } from 'vitest';
import { findScenario } from '../scenarios/named.js';
import { processConsumer, processStats } from '../src/adapter/process/bridge.js';
import { execute } from '../src/run/execute.js';

/**
 * A session process lives across incarnations, so what it leaks stays. It is replaced after
 * a number of incarnations or past a memory size, and which process serves an incarnation
 * never changes what the world sees: the histories are the same either way.
 */
const HOG = 'node test/fixtures/process/session-hog.mjs';
const plans = ['crash-between-effect-and-completion', 'failed-event-holds-watermark', 'stale-generation-cannot-advance'].map((n) => findScenario(n)!.plan);

async function run(options: { sessionIncarnations?: number; sessionMemoryMb?: number }): Promise<{ hashes: string[]; recycled: number; sessionCrashes: number }> {
  const consumer = await processConsumer(HOG, { kills: 'sampled', warm: false, ...options });
  const hashes: string[] = [];
  // The first world of a sampled run kills for real; the ones after it use sessions.
  for (const plan of [plans[0]!, ...plans, ...plans]) hashes.push((await execute(plan, consumer)).hash);
  const stats = processStats(consumer)!;
  return { hashes, recycled: stats.recycled, sessionCrashes: stats.sessionCrashes };
}

describe('session processes are recycled', () => {
  it('past a memory size or a number of incarnations a fresh process takes over, and the histories stay the same', async () => {
    const kept = await run({});
    expect(kept.recycled).toBe(0);
    expect(kept.sessionCrashes).toBeGreaterThan(3);
    const byMemory = await run({ sessionMemoryMb: 100 });
    expect(byMemory.recycled).toBeGreaterThan(0);
    const byAge = await run({ sessionIncarnations: 2 });
    expect(byAge.recycled).toBeGreaterThan(0);
    expect(byMemory.hashes).toEqual(kept.hashes);
    expect(byAge.hashes).toEqual(kept.hashes);
  });
});
