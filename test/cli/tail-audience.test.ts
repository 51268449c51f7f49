import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectExternalView, expectInternalView, judgedFinding, l0Findings, replayedFinding } from '../findings/audience-fixture.ts';
import { runCli } from '../helpers/cli.ts';
import { deployRun, harness, judgeAll } from '../judge/judge-harness.ts';
import { walkScript } from '../judge/walk/walk-harness.ts';

describe('trajwatch tail --audience', () => {
  it('external prints none of the internal fields, internal (the default) prints each record whole; an unstrippable line fails', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-audience-'));
    const records = [judgedFinding(), replayedFinding(), ...l0Findings()];
    await writeFile(join(dataDir, 'findings.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const tail = async (...extra: string[]) => {
      const run = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--max', String(records.length), '--timeout-ms', '5000', ...extra]);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
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

describe('trajwatch tail --audience external over the layered walk', () => {
  it('prints every walk finding in its external view (answers, summary, conflicts), exit 0', async () => {
    // The walk runs through the real DecisionPoints against the scripted Chat Completions
    // server, which stands in for the judge's LLM endpoint (no LLM runs here).
    const h = await harness(walkScript({ 'layer.l2-trajectory': { letter: 'A', p: 0.97 } }), {}, { walk: { enabled: true, stopEarly: false } });
    try {
      const walk = (await judgeAll(h.dataDir, h.cfg, [deployRun()])).findings.filter((f) => f.analyst_id === 'layered-walk');
      expect(new Set(walk.map((f) => f.observation?.kind === 'record' && f.observation.name))).toEqual(
        new Set(['layer-question', 'layered-walk', 'layer-conflict']),
      );
      const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-tail-walk-'));
      await writeFile(join(dataDir, 'findings.jsonl'), walk.map((r) => `${JSON.stringify(r)}\n`).join(''));
      const run = await runCli(['tail', '--data-dir', dataDir, '--from-start', '--max', String(walk.length), '--timeout-ms', '5000', '--audience', 'external']);
      expect(run.code, run.stderr).toBe(0);
      const out = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { finding_id: string });
      expect(out.map((r) => r.finding_id)).toEqual(walk.map((f) => f.finding_id));
      for (const r of out) expectExternalView(r);
      expect(run.stdout).not.toMatch(/requested_model|served_model|ledger_key|"receipt"|"cost"/);
    } finally {
      await h.server.close();
    }
  }, 60_000);
});
