import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'tidemark-adapter-reload-'));
const adapter = (name: string): string =>
  `export default { name: '${name}', capabilities: { delivery: 'at-least-once' as const }, run: async (world: { caughtUp(): Promise<void> }) => world.caughtUp() };\n`;

describe('a TypeScript adapter is read anew at each load', () => {
  it('also when the loader module itself is evaluated a second time in the process', async () => {
    // Each load has a URL of its own (`?load=N`). A second evaluation of the loader module in
    // the same process (vi.resetModules under isolate: false, as exit-listener.test.ts does;
    // two copies of the package) must not number its loads from 1 again: Node has cached
    // those URLs with the file as it was then.
    const file = join(tmp, 'versioned.ts');
    writeFileSync(file, adapter('v1'));
    const first = await import('../src/adapter/load.js');
    expect((await first.loadAdapter(file)).name).toBe('v1');
    vi.resetModules();
    const second = await import('../src/adapter/load.js');
    expect(second.loadAdapter).not.toBe(first.loadAdapter);
    writeFileSync(file, adapter('v2'));
    expect((await second.loadAdapter(file)).name).toBe('v2');
  });

  it('also what it imports, after a load that failed: Node keeps a module that failed as failed', async () => {
    const { loadAdapter } = await import('../src/adapter/load.js');
    const dir = mkdtempSync(join(tmp, 'esm-'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(dir, 'adapter.ts'), `import { name } from './dependency.js';\nexport default { name, capabilities: { delivery: 'at-least-once' as const }, run: async (world: { caughtUp(): Promise<void> }) => world.caughtUp() };\n`);
    writeFileSync(join(dir, 'dependency.ts'), "throw new Error('DATABASE_URL is not set');\nexport const name = 'never';\n");
    await expect(loadAdapter(join(dir, 'adapter.ts'))).rejects.toThrow(/the module threw while loading: DATABASE_URL is not set/);
    writeFileSync(join(dir, 'dependency.ts'), "export const name = 'fixed';\n");
    expect((await loadAdapter(join(dir, 'adapter.ts'))).name).toBe('fixed');
  });
});
