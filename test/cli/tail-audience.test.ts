import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectExternalView, expectInternalView, judgedFinding, l0Findings, replayedFinding } from '../findings/audience-fixture.ts';
import { runCli } from '../helpers/cli.ts';

describe('trajwatch tail --audience', () => {
  it('external prints none of the internal fields, internal (the default) prints each record whole; an unstrippable line fails', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-audience-'));
    const records = [judgedFinding(), replayedFinding(), ...l0Findings()];
    await writeFile(join(dataDir, 'findings.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const tail = async (...extra: string[]) => {
      const run = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--max', String(records.length), '--timeout-ms', '5000', ...extra]);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown);
    };
    const external = await tail('--audience', 'external');
    expect(external).toHaveLength(records.length);
    for (const r of external) expectExternalView(r);
    const internal = await tail('--audience', 'internal');
    internal.forEach((r, i) => expectInternalView(r, records[i]!));

    const bad = await runCli(['tail', '--data-dir', dataDir, '--audience', 'partner', '--timeout-ms', '100']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--audience/);
    await writeFile(join(dataDir, 'findings.jsonl'), 'not json\n');
    const broken = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--audience', 'external', '--timeout-ms', '3000']);
    expect(broken.code).not.toBe(0);
    expect(broken.stdout).toBe('');
    expect(broken.stderr).toMatch(/not JSON/);
  }, 60_000);
});
