import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import { runCli } from '../helpers/cli.ts';

const CLI = new URL('../../src/cli/main.ts', import.meta.url).pathname;

// Two records of the local findings log as serve writes them: a finding, then the manifest of
// its trajectory revision (shapes abridged: tail tells them apart by record_kind alone).
const FINDING = JSON.stringify({ schema_version: '1.1.0', finding_id: `f1_${'a'.repeat(64)}`, area: 'error-output' });
const MANIFEST = JSON.stringify({ record_kind: 'analysis-manifest', schema_version: '1.0.0', manifest_id: `m1_${'b'.repeat(64)}` });

describe('trajwatch tail over a findings log that also holds analysis manifests', () => {
  it('prints findings by default, manifests with --kind manifest, both with --kind all', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-'));
    await writeFile(join(dataDir, 'findings.jsonl'), `${FINDING}\n${MANIFEST}\n`);
    const tail = async (...extra: string[]) => {
      const run = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--timeout-ms', '1500', ...extra]);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout
        .trim()
        .split('\n')
        .filter((l) => l !== '');
    };
    expect(await tail()).toEqual([FINDING]);
    expect(await tail('--kind', 'manifest')).toEqual([MANIFEST]);
    expect(await tail('--kind', 'all')).toEqual([FINDING, MANIFEST]);
    const bad = await runCli(['tail', '--data-dir', dataDir, '--kind', 'alarm', '--timeout-ms', '100']);
    expect(bad.code).not.toBe(0);
  });

  it('--from-start prints a rotated log whole: its closed files oldest first, then the active one', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-'));
    const log = await JsonlLog.open(join(dataDir, 'findings.jsonl'), { retention: { maxBytes: 64 * 1024, segmentBytes: 4096 } });
    const lines = Array.from({ length: 120 }, (_, i) => JSON.stringify({ schema_version: '1.1.0', finding_id: `f${i}`, pad: 'z'.repeat(80) }));
    for (const line of lines) {
      log.append([line]);
      await log.flushed();
    }
    await log.close();
    expect(log.disk.segments).toBeGreaterThan(2);
    const run = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--max', String(lines.length), '--timeout-ms', '5000']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(lines);
  });
});

describe('trajwatch tail --format', () => {
  const RECORD = JSON.stringify({
    finding_id: `f1_${'c'.repeat(64)}`,
    area: 'error-output',
    severity: 'low',
    claim: 'Candidate error-output (not a verdict): tool "search" failed',
    subject: { trajectory_key: 'conv-tty', revision: 1 },
    observed_at: '2026-11-30T09:15:02.125000000Z',
  });
  const TEXT = '2026-11-30T09:15:02.125000000Z  low    error-output  conv-tty  Candidate error-output (not a verdict): tool "search" failed';
  const withLog = async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-format-'));
    await writeFile(join(dataDir, 'findings.jsonl'), `${RECORD}\n`);
    return dataDir;
  };

  it('text: one readable line per finding; json: the record as written (the default into a pipe)', async () => {
    const dataDir = await withLog();
    const args = ['tail', '--data-dir', dataDir, '--from-start', '--max', '1', '--timeout-ms', '5000'];
    expect((await runCli([...args, '--format', 'text'])).stdout).toBe(`${TEXT}\n`);
    expect((await runCli([...args, '--format', 'json'])).stdout).toBe(`${RECORD}\n`);
    expect((await runCli(args)).stdout).toBe(`${RECORD}\n`);
    const bad = await runCli([...args, '--format', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format: expected text or json, got "yaml"');
  });

  it('defaults to text on a terminal (run under a pseudo-terminal by script(1))', async () => {
    const dataDir = await withLog();
    const command = [process.execPath, CLI, 'tail', '--data-dir', dataDir, '--from-start', '--max', '1', '--timeout-ms', '5000'].map((a) => `'${a}'`).join(' ');
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile('script', ['-qec', command, '/dev/null'], { timeout: 30_000 }, (err, out) => (err === null ? resolve(out) : reject(err))),
    );
    expect(stdout.replace(/\r\n/g, '\n')).toBe(`${TEXT}\n`);
  });
});
