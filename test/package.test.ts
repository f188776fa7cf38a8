import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The package must stand on its own: a user who installs the tarball gets the license, the
 * seed procedure and the design the docs refer to, the examples and protocol clients the
 * docs tell them to copy, source maps whose sources are there, and no build at install
 * time. And a reader of the README or the docs, in the package or the repository, never
 * follows a link out of it.
 */
const ROOT = resolve(import.meta.dirname, '..');

interface Pack {
  readonly dir: string;
  readonly files: ReadonlySet<string>;
}

/**
 * Lists exactly what `npm pack` would publish, with the build in place. The repository is
 * copied to a temporary directory and built there, so the test never writes into the
 * working tree and sees the build as `prepack` makes it; `--ignore-scripts` because the
 * build has just run, and `--dry-run` because only the list matters (no network either).
 */
function pack(): Pack {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-pack-'));
  const skip = new Set(['node_modules', '.git', 'dist', 'coverage']);
  for (const entry of readdirSync(ROOT)) {
    if (!skip.has(entry)) cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'pipe' });
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--offline'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [report] = JSON.parse(out) as [{ files: { path: string }[] }];
  return { dir, files: new Set(report.files.map((f) => f.path)) };
}

/**
 * The .map files whose sources are neither in the package nor inlined: each such map sends
 * a stack frame or a debugger to a file the user does not have.
 */
function mapsWithoutSources(p: Pack): string[] {
  const missing: string[] = [];
  for (const file of [...p.files].filter((f) => f.endsWith('.map'))) {
    const map = JSON.parse(readFileSync(join(p.dir, file), 'utf8')) as { sources: string[]; sourceRoot?: string; sourcesContent?: (string | null)[] };
    map.sources.forEach((source, i) => {
      if (typeof map.sourcesContent?.[i] === 'string') return;
      const target = posix.normalize(posix.join(posix.dirname(file), map.sourceRoot ?? '', source));
      if (!p.files.has(target)) missing.push(`${file} -> ${source}`);
    });
  }
  return missing;
}

/** A Markdown link found in a file: where it points, and on which line. */
interface Link {
  readonly target: string;
  readonly line: number;
}

/**
 * The links of a Markdown text: inline links and images `[text](target "title")`, reference
 * definitions `[id]: target`, autolinks `<scheme:...>` and HTML `href`/`src` attributes.
 * Fenced code blocks and inline code are not links, and are skipped.
 */
function markdownLinks(text: string): Link[] {
  const links: Link[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (marker !== undefined && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence !== null) return;
    const prose = raw.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (definition) links.push({ target: definition[1]!, line });
    for (const m of prose.matchAll(/<([a-z][a-z0-9+.-]*:[^\s>]*)>/gi)) links.push({ target: m[1]!, line });
    for (const m of prose.matchAll(/\b(?:href|src)\s*=\s*["']([^"']*)["']/gi)) links.push({ target: m[1]!, line });
  });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence = false;
  for (const raw of markdown.split('\n')) {
    if (/^\s{0,3}(`{3,}|~{3,})/.test(raw)) fence = !fence;
    const heading = fence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (!heading) continue;
    const base = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/**
 * Every link of a Markdown file that leaves the repository or points at nothing: a URL
 * (any scheme, or protocol-relative), a path outside `root`, a file that does not exist,
 * or an anchor no heading of the target defines.
 */
function badLinks(file: string, root: string): string[] {
  const bad: string[] = [];
  const text = readFileSync(file, 'utf8');
  for (const { target, line } of markdownLinks(text)) {
    const where = `${relative(root, file)}:${line}: ${target}`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
      bad.push(`${where} (leaves the repository)`);
      continue;
    }
    const [path = '', anchor] = target.split('#');
    const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (resolved !== root && !resolved.startsWith(root + sep)) {
      bad.push(`${where} (outside the repository)`);
      continue;
    }
    if (!existsSync(resolved)) {
      bad.push(`${where} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && statSync(resolved).isFile() && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      bad.push(`${where} (no heading for #${anchor})`);
    }
  }
  return bad;
}

/** README.md and every Markdown file under docs/: what a package user reads. */
function readerDocs(root: string): string[] {
  return [join(root, 'README.md'), ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(root, 'docs', f))];
}

describe('the published package', () => {
  let p: Pack;
  beforeAll(() => {
    p = pack();
  });

  it('carries the license, the docs the README links to, and what package.json points at', () => {
    for (const file of ['LICENSE', 'README.md', 'package.json', 'docs/seed-procedure.md', 'docs/design.md', 'docs/adapters.md', 'docs/protocol.md']) {
      expect(p.files, file).toContain(file);
    }
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      license: string;
      bin: Record<string, string>;
      main: string;
      types: string;
      exports: Record<string, { types: string; default: string }>;
    };
    const entries = [...Object.values(manifest.bin), manifest.main, manifest.types, ...Object.values(manifest.exports).flatMap((e) => [e.types, e.default])];
    for (const entry of entries) expect(p.files, entry).toContain(posix.normalize(entry));
    expect(manifest.license).toBe('MIT');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the tidemark authors\n/);
  });

  it('ships every example and protocol client the README and docs tell users to copy', () => {
    const named = new Set<string>();
    for (const doc of readerDocs(ROOT)) {
      for (const m of readFileSync(doc, 'utf8').matchAll(/\bexamples\/[\w./-]*\.(?:ts|mjs|js|py)\b/g)) named.add(m[0]);
    }
    // The protocol guide's table of clients and consumers, at the least.
    for (const client of ['examples/python/tidemark_client.py', 'examples/node/client.mjs', 'examples/python/sqlite_ledger.py']) expect(named).toContain(client);
    for (const file of named) {
      expect(existsSync(join(ROOT, file)), `${file} is named in the docs but does not exist`).toBe(true);
      expect(p.files, file).toContain(file);
    }
  });

  it('has no source map whose source is missing from the package', () => {
    const maps = [...p.files].filter((f) => f.endsWith('.map'));
    // The build emits maps: if that changes, this test must still look at something.
    expect(maps.length).toBeGreaterThan(0);
    expect(mapsWithoutSources(p)).toEqual([]);
  });

  it('does not build at install time: no install scripts, the build runs before packing', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(scripts, hook).not.toHaveProperty(hook);
    expect(scripts.prepack).toBe('npm run build');
  });

  it('holds every file the README and the docs link to, so the links work in an installed copy too', () => {
    const targets = readerDocs(ROOT).flatMap((doc) =>
      markdownLinks(readFileSync(doc, 'utf8'))
        .map((l) => l.target.split('#')[0]!)
        .filter((path) => path !== '')
        .map((path) => relative(ROOT, resolve(dirname(doc), decodeURIComponent(path))).split(sep).join('/')),
    );
    expect(targets).toContain('docs/seed-procedure.md');
    // A directory counts when something under it is packed.
    const packed = (target: string): boolean => p.files.has(target) || [...p.files].some((f) => f.startsWith(`${target.replace(/\/$/, '')}/`));
    expect(targets.filter((t) => !packed(t))).toEqual([]);
  });

  it('exports what judges a history recorded elsewhere: parseHistory, its HistoryError, and check', async () => {
    const api = (await import(pathToFileURL(join(p.dir, 'dist/src/index.js')).href)) as Record<string, unknown>;
    expect(typeof api.parseHistory).toBe('function');
    expect(typeof api.check).toBe('function');
    expect(typeof api.HistoryError).toBe('function');
    // Used as the docs show: a history that is not one is refused with the field's path (a header without its format, first).
    const parse = api.parseHistory as (value: unknown) => unknown;
    let thrown: unknown;
    try {
      parse({ header: {}, steps: [] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(api.HistoryError as new () => Error);
    expect((thrown as { path: string }).path).toBe('header.version');
  });

  it('names its repository', () => {
    const { repository } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository: unknown };
    expect(repository).toEqual({ type: 'git', url: 'git+https://github.com/tidemark-dev/tidemark.git' });
  });
});

describe('links in the README and the docs', () => {
  it('stay inside the repository and point at files and headings that exist', () => {
    const docs = readerDocs(ROOT);
    expect(docs.map((d) => relative(ROOT, d))).toEqual(expect.arrayContaining(['README.md', 'docs/design.md', 'docs/seed-procedure.md']));
    expect(docs.flatMap((d) => badLinks(d, ROOT))).toEqual([]);
  });

  it('the checker finds each kind of bad link, and ignores code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tidemark-links-'));
    const file = join(dir, 'README.md');
    cpSync(join(ROOT, 'docs/design.md'), join(dir, 'design.md'));
    const text = [
      '# Title',
      'The [seed](../shared/seed/000.txt), the [design](../shared/DESIGN.md), [a site](https://example.com),',
      '[protocol-relative](//example.com/x), <mailto:someone@example.com>, [gone](docs/gone.md),',
      '[no such heading](design.md#nowhere), [fine](design.md#exit-codes), [here](#title).',
      '<a href="http://example.com">html</a>',
      '[ref]: https://example.com/ref',
      '`[in code](../outside.md)`',
      '```md',
      '[in a fence](../outside.md)',
      '```',
    ].join('\n');
    writeFileSync(file, text);
    const bad = badLinks(file, dir);
    expect(bad).toEqual([
      'README.md:2: ../shared/seed/000.txt (outside the repository)',
      'README.md:2: ../shared/DESIGN.md (outside the repository)',
      'README.md:2: https://example.com (leaves the repository)',
      'README.md:3: //example.com/x (leaves the repository)',
      'README.md:3: docs/gone.md (no such file)',
      'README.md:3: mailto:someone@example.com (leaves the repository)',
      'README.md:4: design.md#nowhere (no heading for #nowhere)',
      'README.md:5: http://example.com (leaves the repository)',
      'README.md:6: https://example.com/ref (leaves the repository)',
    ]);
  });
});
