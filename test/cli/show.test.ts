import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { logFiles, readLogLines } from '../../src/cli/local-log-files.ts';
import { runCli } from '../helpers/cli.ts';
import { IN_REPO_DIR } from '../helpers/trail-corpus.ts';

const KEY = '272cdc645b731837366576b37d40fb65';

/** The log at `path` split as the storage layer rotates it: closed `<stem>.<offset of first byte>.jsonl` files, then the active one. */
async function rotate(path: string, cuts: number[]): Promise<void> {
  const lines = (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `${l}\n`);
  let offset = 0;
  let from = 0;
  for (const cut of [...cuts, lines.length]) {
    const part = lines.slice(from, cut).join('');
    const name = cut === lines.length ? path : path.replace(/\.jsonl$/, `.${String(offset).padStart(16, '0')}.jsonl`);
    await writeFile(name, part);
    offset += Buffer.byteLength(part);
    from = cut;
  }
}

describe('trajwatch show KEY', () => {
  let dataDir: string;
  let shown: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-show-'));
    const replay = await runCli([
      'replay',
      join(IN_REPO_DIR, `${KEY}.otlp.json.gz`),
      join(IN_REPO_DIR, 'fdaf88f3c0437bf27438b60ba4102c8a.otlp.json.gz'),
      '--trajectories',
      join(dataDir, 'trajectories.jsonl'),
      '--findings',
      join(dataDir, 'findings.jsonl'),
    ]);
    expect(replay.code, replay.stderr).toBe(0);
    const run = await runCli(['show', KEY, '--data-dir', dataDir]);
    expect(run.code, run.stderr).toBe(0);
    shown = run.stdout;
  });

  it('prints a header, one line per step in order with offset and duration, and each finding under the step its evidence names', async () => {
    const lines = shown.split('\n');
    expect(lines[0]).toBe(`trajectory ${KEY}  revision 1  complete  (closed by quiet-after-root)`);
    expect(lines[1]).toBe(`traces: ${KEY}  steps: 58  findings: 2`);
    expect(lines[2]).toBe('capture gap: tool-result-not-captured on 1 span(s)');
    expect(lines).toContain('started 2025-03-25T08:50:19.971Z');
    expect(lines.filter((l) => /^\s+[+-]\d+\.\d{3}s\s+\d+\.\d{3}s  /.test(l))).toHaveLength(58);
    expect(lines.find((l) => l.includes(' process_item'))).toMatch(/^\s+\+0\.000s\s+354\.567s  other\s+process_item$/);
    // Step 22 failed; its error-output finding is marked on the next line, nested as deep.
    const step22 = lines.findIndex((l) => / Step 22  ✗ smolagents\.utils\.AgentExecutionError: /.test(l));
    expect(step22).toBeGreaterThan(0);
    expect(lines[step22]).toMatch(/… \(\+\d+ chars\)$/);
    expect(lines[step22 + 1]).toMatch(/^\s+▲ low    error-output: Candidate error-output \(not a verdict\): other step "Step 22" failed$/);
    expect(lines.filter((l) => l.includes('▲'))).toHaveLength(2);
    expect(shown).not.toContain('findings naming no step');
  });

  it('takes a unique prefix of the key; an ambiguous or unknown one exits 1 saying why', async () => {
    expect((await runCli(['show', KEY.slice(0, 6), '--data-dir', dataDir])).stdout).toBe(shown);
    const none = await runCli(['show', 'no-such-key', '--data-dir', dataDir]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^show: no trajectory with key no-such-key \(or starting with it\) in .*trajectories\.jsonl \(2 trajectory lines read\)\n$/);
    const usage = await runCli(['show', '--data-dir', dataDir]);
    expect(usage.code).toBe(2);
  });

  it('reads the rotated segments of both logs too, giving the same timeline', async () => {
    const rotated = await mkdtemp(join(tmpdir(), 'trajwatch-show-rotated-'));
    for (const name of ['trajectories.jsonl', 'findings.jsonl']) await writeFile(join(rotated, name), await readFile(join(dataDir, name)));
    await rotate(join(rotated, 'trajectories.jsonl'), [1]);
    await rotate(join(rotated, 'findings.jsonl'), [1, 2]);
    expect((await logFiles(join(rotated, 'findings.jsonl'))).map((f) => f.split('/').pop())).toHaveLength(3);
    const run = await runCli(['show', KEY, '--data-dir', rotated]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(shown);
  });

  it('shows the latest revision, with the findings up to it, once each', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-show-rev-'));
    const step = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
      id,
      traceId: 'a'.repeat(32),
      kind: 'tool',
      toolName: name,
      startTime: '1700000000000000000',
      endTime: '1700000000500000000',
      ...extra,
    });
    const rev = (revision: number, steps: unknown[]) => ({
      key: 'conv-r',
      traceIds: ['a'.repeat(32)],
      revision,
      complete: revision > 1,
      incompleteReasons: revision > 1 ? [] : ['root-not-seen'],
      steps,
    });
    const finding = (id: string, revision: number, span: string) => ({
      finding_id: id,
      area: 'error-output',
      severity: 'low',
      claim: `claim ${id}`,
      subject: { trajectory_key: 'conv-r', revision },
      evidence_refs: [{ kind: 'span', uri: `span:${'a'.repeat(32)}/${span}` }],
    });
    await writeFile(
      join(dir, 'trajectories.jsonl'),
      [
        rev(1, [step('1111111111111111', 'search')]),
        rev(2, [step('1111111111111111', 'search'), step('2222222222222222', 'se\u001b[31march', { error: { message: 'boom' } })]),
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
    await writeFile(
      join(dir, 'findings.jsonl'),
      [
        finding('f-a', 1, '1111111111111111'),
        finding('f-a', 2, '1111111111111111'),
        finding('f-b', 2, '2222222222222222'),
        finding('f-c', 2, '9999999999999999'),
        finding('f-d', 3, '1111111111111111'),
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
    const run = await runCli(['show', 'conv-r', '--data-dir', dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('trajectory conv-r  revision 2  complete\n');
    expect(run.stdout).toContain('steps: 2  findings: 3');
    expect(run.stdout).toContain('se\\x1b[31march  ✗ boom');
    expect(run.stdout.match(/claim f-a/g)).toHaveLength(1);
    expect(run.stdout).toContain('findings naming no step of this revision:\n  ▲ low    error-output: claim f-c\n');
    expect(run.stdout).not.toContain('claim f-d');
    await writeFile(join(dir, 'trajectories.jsonl'), `${JSON.stringify({ ...rev(1, []), key: 'conv-s' })}\n`, { flag: 'a' });
    const ambiguous = await runCli(['show', 'conv-', '--data-dir', dir]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toBe('show: 2 trajectories start with conv-: conv-r, conv-s\n');
  });
});

describe('reading a rotated local log (src/cli/local-log-files.ts)', () => {
  it('is the closed segments in offset order (by number, not by name length), then the active file; other files are not part of it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-log-files-'));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'findings.0000000000001000.jsonl'), 'c\n');
    await writeFile(join(dir, 'findings.0000000000000010.jsonl'), 'b\n');
    await writeFile(join(dir, 'findings.0000000000000000.jsonl'), 'a\n');
    await writeFile(join(dir, 'findings.jsonl'), 'd\ne-partial');
    for (const other of ['findings.12.jsonl', 'findings.jsonl.tmp', 'trajectories.0000000000000000.jsonl', 'alarms.jsonl'])
      await writeFile(join(dir, other), 'x\n');
    expect(await readLogLines(join(dir, 'findings.jsonl'))).toEqual(['a', 'b', 'c', 'd']);
    await rename(join(dir, 'findings.jsonl'), join(dir, 'findings.0000000000001002.jsonl'));
    expect(await readLogLines(join(dir, 'findings.jsonl'))).toEqual(['a', 'b', 'c', 'd']);
    expect(await readLogLines(join(dir, 'missing.jsonl'))).toEqual([]);
  });
});
