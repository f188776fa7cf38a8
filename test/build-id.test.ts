import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeDigest, tidemarkBuild } from '../src/run/build.js';
import { TIDEMARK_VERSION } from '../src/run/regressions.js';

let trees = 0;

/** A tree of code as tidemark's is laid out, with one file's text given; its notes differ from every other tree's. */
function tree(text: string): string {
  const root = mkdtempSync(join(tmpdir(), 'tidemark-build-'));
  for (const dir of ['model', 'scenarios', 'src/run']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'model', 'truth.ts'), text);
  writeFileSync(join(root, 'src', 'run', 'check.js'), 'export const x = 1;\n');
  // Not code: left out.
  writeFileSync(join(root, 'src', 'run', 'notes.md'), `tree ${++trees}`);
  return root;
}

describe('the tidemark build a result names', () => {
  it('is the version and a digest of the code: two commits of one version are two builds', () => {
    expect(tidemarkBuild()).toMatch(new RegExp(`^${TIDEMARK_VERSION.replaceAll('.', '\\.')}\\+[0-9a-f]{12}$`));
    // The same code digests the same, wherever it lies; one byte more is another build.
    expect(codeDigest(tree('a'))).toBe(codeDigest(tree('a')));
    expect(codeDigest(tree('a'))).not.toBe(codeDigest(tree('a ')));
  });
});
