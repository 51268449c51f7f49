import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_REPO_DIR, IN_REPO_TRACE_IDS, resolveTrailCorpus, SHARED_DIR, SHARED_ONLY_TRACE_IDS, trailCorpus, wantedCorpus } from './trail-corpus.ts';

const corpus = trailCorpus();
// The line a reader of the CI output looks for: which TRAIL traces this run's tests had.
console.log(`TRAIL corpus: ${corpus.description}`);

describe('the TRAIL corpus of this run', () => {
  it(`is ${corpus.description}`, () => {
    const ids = corpus.files.map((f) => f.traceId);
    const expected = corpus.kind === 'full' ? [...IN_REPO_TRACE_IDS, ...SHARED_ONLY_TRACE_IDS] : [...IN_REPO_TRACE_IDS];
    expect(ids).toEqual(expected.sort());
    expect(corpus.files.filter((f) => f.inRepo).map((f) => f.traceId)).toEqual([...IN_REPO_TRACE_IDS]);
    // npm test needs nothing outside the repository: the full corpus only when asked for.
    expect(corpus.kind).toBe(wantedCorpus());
  });

  it('reads the five in-repo traces from the repository, never from shared/', () => {
    for (const f of corpus.files.filter((x) => x.inRepo)) {
      expect(f.otlpPath.startsWith(IN_REPO_DIR)).toBe(true);
      expect(f.labelsPath.startsWith(IN_REPO_DIR)).toBe(true);
    }
    for (const f of corpus.files.filter((x) => !x.inRepo)) expect(f.otlpPath.startsWith(SHARED_DIR)).toBe(true);
  });
});

describe('test/fixtures/trail-dev in the repository', () => {
  it('holds exactly the five SWE-bench traces with their labels, and a README with source and licence', () => {
    const expected = [...IN_REPO_TRACE_IDS.flatMap((id) => [`${id}.labels.json`, `${id}.otlp.json.gz`]), 'README.md'].sort();
    expect(readdirSync(IN_REPO_DIR).sort()).toEqual(expected);
    const readme = readFileSync(join(IN_REPO_DIR, 'README.md'), 'utf8');
    expect(readme).toMatch(/TRAIL/);
    expect(readme).toMatch(/Patronus AI/);
    expect(readme).toMatch(/MIT/);
    for (const id of IN_REPO_TRACE_IDS) expect(readme).toContain(id);
  });

  // Only with shared/ present: a table keyed by the copies that exist there (none without it).
  for (const f of corpus.kind === 'full' ? corpus.files.filter((x) => x.inRepo) : []) {
    it(`${f.traceId}: the in-repo copy is byte-identical to the one in shared/`, () => {
      expect(readFileSync(f.otlpPath).equals(readFileSync(join(SHARED_DIR, `${f.traceId}.otlp.json.gz`)))).toBe(true);
      expect(readFileSync(f.labelsPath).equals(readFileSync(join(SHARED_DIR, `${f.traceId}.labels.json`)))).toBe(true);
    });
  }
});

describe('resolving the TRAIL corpus', () => {
  const missing = join(tmpdir(), 'trajwatch-no-such-shared-dir', 'fixtures', 'trail-dev');

  it('runs the five in-repo traces by default, and says so, without looking for shared/', () => {
    const c = resolveTrailCorpus({ sharedDir: missing, want: wantedCorpus({}) });
    expect(wantedCorpus({})).toBe('in-repo');
    expect(c.kind).toBe('in-repo');
    expect(c.files.map((f) => f.traceId)).toEqual([...IN_REPO_TRACE_IDS]);
    expect(c.files.every((f) => f.inRepo && f.otlpPath.startsWith(IN_REPO_DIR))).toBe(true);
    expect(c.description).toMatch(/^in-repo: 5 SWE-bench traces/);
    // even with a complete shared/ beside it, the default run reads only the repository
    expect(resolveTrailCorpus({ want: 'in-repo' }).kind).toBe('in-repo');
  });

  it('takes the full corpus only from TRAJWATCH_TRAIL_CORPUS=full, and refuses other values', () => {
    expect(wantedCorpus({ TRAJWATCH_TRAIL_CORPUS: 'full' })).toBe('full');
    expect(wantedCorpus({ TRAJWATCH_TRAIL_CORPUS: 'in-repo' })).toBe('in-repo');
    expect(() => wantedCorpus({ TRAJWATCH_TRAIL_CORPUS: 'all' })).toThrow(/TRAJWATCH_TRAIL_CORPUS="all": expected "full" or "in-repo"/);
  });

  it('fails when the full corpus is asked for and shared/ is missing, instead of running fewer traces', () => {
    expect(() => resolveTrailCorpus({ sharedDir: missing, want: 'full' })).toThrow(/full corpus was asked for .* is missing/);
  });

  it('fails when the full corpus is asked for and shared/ lacks one of the 26, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trajwatch-trail-corpus-'));
    const absent = SHARED_ONLY_TRACE_IDS[0]!;
    // Empty stand-in files: resolving reads names only.
    for (const id of [...IN_REPO_TRACE_IDS, ...SHARED_ONLY_TRACE_IDS.slice(1)]) {
      for (const suffix of ['.otlp.json.gz', '.labels.json']) copyFileSync('/dev/null', join(dir, `${id}${suffix}`));
    }
    expect(() => resolveTrailCorpus({ sharedDir: dir, want: 'full' })).toThrow(new RegExp(`missing: ${absent}; unexpected: none`));
  });

  it('fails when the in-repo folder holds anything but the five (a GAIA trace must never be added there)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trajwatch-trail-inrepo-'));
    for (const id of [...IN_REPO_TRACE_IDS, SHARED_ONLY_TRACE_IDS[0]!]) {
      for (const suffix of ['.otlp.json.gz', '.labels.json']) copyFileSync('/dev/null', join(dir, `${id}${suffix}`));
    }
    expect(() => resolveTrailCorpus({ inRepoDir: dir, sharedDir: missing })).toThrow(/must hold exactly the five SWE-bench traces/);
  });
});
