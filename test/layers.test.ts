/**
 * Imports flow one way: model/ <- scenarios/ <- src/ <- test/. The oracle must not lean on
 * the runtime it judges, plans must not depend on how they are executed, and inside src/ the
 * world must not lean on what reports on it. Read from the import statements themselves, so
 * that a new file cannot slip past.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(ROOT, path)).isDirectory() ? sources(path) : /\.ts$/.test(name) ? [path] : [];
  });
}

/** Every relative module a file imports (static, dynamic and type-only), as a path from the repository root. */
function importsOf(file: string): { target: string; typeOnly: boolean }[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: { target: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)) {
    out.push({ target: relative(ROOT, resolve(dirname(join(ROOT, file)), m[3] as string)).replace(/\.js$/, '.ts'), typeOnly: m[2] !== undefined });
  }
  for (const m of text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    out.push({ target: relative(ROOT, resolve(dirname(join(ROOT, file)), m[1] as string)).replace(/\.js$/, '.ts'), typeOnly: false });
  }
  return out;
}

const layer = (path: string): string => path.split('/')[0] as string;
const RANK: Record<string, number> = { model: 0, scenarios: 1, src: 2, bench: 3, test: 3 };

describe('imports flow one way', () => {
  it('model <- scenarios <- src: no layer imports from a layer above it', () => {
    const upward: string[] = [];
    for (const file of [...sources('model'), ...sources('scenarios'), ...sources('src')]) {
      for (const { target } of importsOf(file)) {
        const to = RANK[layer(target)];
        if (to === undefined || to > (RANK[layer(file)] as number)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('the model is pure: it imports no Node module, so it can read no clock, file or random source', () => {
    const impure = sources('model').filter((f) => /from\s+['"]node:/.test(readFileSync(join(ROOT, f), 'utf8')) || /\bprocess\.|Math\.random|Date\.now/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(impure).toEqual([]);
  });

  it('the world does not lean on what runs, judges or reports on it', () => {
    const wrong = sources('src/world').flatMap((file) =>
      importsOf(file)
        .filter(({ target, typeOnly }) => target.startsWith('src/') && !target.startsWith('src/world/') && !(typeOnly && target === 'src/adapter/consumer.ts') && target !== 'src/adapter/errors.ts')
        .map(({ target }) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it('the run, the self-tests and the adapters do not lean on the CLI that drives them, nor reports on the CLI', () => {
    const wrong = [...sources('src/report'), ...sources('src/run'), ...sources('src/selftest'), ...sources('src/adapter/process')].flatMap((file) =>
      importsOf(file)
        // The activity board is how long-running work says what it is doing, for the watchdog.
        .filter(({ target }) => (target === 'src/cli.ts' || target.startsWith('src/cli/')) && target !== 'src/cli/activity.ts')
        .map(({ target }) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it('the scan sees imports: it finds model/ imported by scenarios/', () => {
    expect(importsOf('scenarios/plan.ts').some((i) => i.target.startsWith('model/'))).toBe(true);
  });
});
