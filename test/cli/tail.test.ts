import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import { runCli } from '../helpers/cli.ts';

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
      return run.stdout.trim().split('\n').filter((l) => l !== '');
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
