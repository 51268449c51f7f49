import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectExternalView } from '../findings/audience-fixture.ts';
import { runCli } from '../helpers/cli.ts';
import { startScriptedServer } from '../judge/scripted-chat-server.ts';
import { walkScript } from '../judge/walk/walk-harness.ts';
import { agentRunRequest } from '../reliability/agent-run.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint (no LLM runs here).

describe('trajwatch replay with the walk on and the findings log on audience: external', () => {
  it('writes every walk finding in its external view and exits 0; nothing refused, no quarantine', async () => {
    const model = await startScriptedServer(walkScript());
    try {
      const dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-audience-'));
      const config = join(dir, 'config.json');
      await writeFile(
        config,
        JSON.stringify({
          dataDir: join(dir, 'data'),
          sinks: { localLog: { audience: { findings: 'external' } } },
          judge: {
            enabled: true,
            client: { baseUrl: model.baseUrl, model: 'judge', apiKeyEnv: null, backoffMs: 1, timeoutMs: 5_000 },
            sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
            walk: { enabled: true },
          },
        }),
      );
      const input = join(dir, 'run.json');
      await writeFile(input, JSON.stringify(agentRunRequest({ traceId: '7d000000000000000000000000000001' })));
      const findings = join(dir, 'findings.jsonl');
      const run = await runCli(['replay', input, '--findings', findings, '--config', config]);
      expect(run.stderr).not.toMatch(/refused/);
      expect(run.code, run.stderr).toBe(0);
      const lines = (await readFile(findings, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const walk = lines.filter((l) => l.analyst_id === 'layered-walk');
      expect(walk.map((l) => l.area)).toContain('walk.summary');
      expect(walk.map((l) => l.area)).toContain('layer.l1-outcome');
      for (const l of lines) expectExternalView(l);
      await expect(readFile(join(dir, 'data', 'audience-refused.jsonl'), 'utf8')).resolves.toBe('');
    } finally {
      await model.close();
    }
  }, 60_000);
});
