import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TIDEMARK_VERSION } from './regressions.js';

/**
 * Which tidemark wrote a result, closer than its version: the version, then the first 12 hex
 * digits of the sha256 of its own code (model/, scenarios/ and src/, as this install holds
 * them, source or built) and of the fast-check it draws worlds with. The package version is
 * the same at every commit between two releases, and two builds that share it may draw other
 * worlds from one seed and path, or judge a history by another rule: the shards of one run
 * must come from one build (src/cli/merge.ts). Worked out once, on first use: it reads every
 * file of the code, a few milliseconds, which only commands that write or read a run's
 * identity pay.
 */
export function tidemarkBuild(): string {
  return (build ??= `${TIDEMARK_VERSION}+${codeDigest(codeRoot()).slice(0, 12)}`);
}

let build: string | undefined;

/** The directory model/, scenarios/ and src/ sit in: the repository's root from source, dist/ when built. */
function codeRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** The sha256 of the code under `root` (its model/, scenarios/ and src/), and of the fast-check version. */
export function codeDigest(root: string): string {
  const h = createHash('sha256');
  for (const dir of ['model', 'scenarios', 'src']) {
    if (!existsSync(join(root, dir))) continue;
    for (const file of codeFiles(join(root, dir))) {
      // Named by its path from the root, in POSIX form: the same build hashes the same on every system.
      h.update(relative(root, file).split(sep).join('/'));
      h.update('\0');
      h.update(readFileSync(file));
      h.update('\0');
    }
  }
  h.update(`fast-check@${fastCheckVersion()}`);
  return h.digest('hex');
}

/** The code files under a directory, in a stable order: sorted by name, level by level. */
function codeFiles(dir: string): string[] {
  const out: string[] = [];
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...codeFiles(path));
    else if (e.isFile() && /\.(ts|js|mjs|cjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The version of the fast-check this tidemark resolves: the package.json above the module it loads. */
function fastCheckVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('fast-check'));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'fast-check' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here: look further up.
    }
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}
