/**
 * The documents name only what is in the repository: every relative Markdown link and every
 * `src/…`, `test/…`, `scripts/…` (and the like) path in backticks points at a file or folder
 * that exists. A moved or deleted file fails here until the documents that cite it follow.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const CITED_ROOTS = ['src', 'test', 'scripts', 'bench', 'docs', 'dashboards', 'collector-config', 'deploy', 'examples', '.ci'];

/** Every Markdown file of the repository's documentation: README.md, docs/, and the READMEs in the code. */
function documents(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const rel = join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(join(ROOT, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.md') && (dir.startsWith('docs') || name === 'README.md')) out.push(rel);
    }
  };
  for (const dir of ['docs', 'src', 'scripts', 'test', 'examples', 'deploy']) if (existsSync(join(ROOT, dir))) walk(dir);
  return out;
}

/** The paths a document cites that do not exist, each with how it was cited. */
function missingReferences(doc: string, text: string, exists: (path: string) => boolean): string[] {
  const missing: string[] = [];
  for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
    const path = normalize(join(dirname(doc), target));
    if (!exists(path)) missing.push(`link ${target}`);
  }
  const roots = CITED_ROOTS.map((r) => r.replace('.', '\\.')).join('|');
  for (const m of text.matchAll(new RegExp(`\`((?:${roots})/[A-Za-z0-9_./-]+)\``, 'g'))) {
    const path = m[1]!.replace(/\.$/, '');
    if (!exists(path)) missing.push(`path ${path}`);
  }
  return missing;
}

describe('the documents', () => {
  it('cite only files and folders that exist', () => {
    const docs = documents();
    expect(docs.length).toBeGreaterThan(10);
    const missing = docs.flatMap((doc) =>
      missingReferences(doc, readFileSync(join(ROOT, doc), 'utf8'), (p) => existsSync(join(ROOT, p))).map((m) => `${doc}: ${m}`),
    );
    expect(missing).toEqual([]);
  });

  it('a moved file is caught, as a link and as a cited path', () => {
    const exists = (p: string) => p === 'src/there.ts' || p === 'docs/here.md';
    expect(missingReferences('docs/a.md', '[x](here.md) [y](../src/gone.ts) `src/there.ts` `scripts/gone.sh` [z](https://example.com)', exists)).toEqual([
      'link ../src/gone.ts',
      'path scripts/gone.sh',
    ]);
  });
});
