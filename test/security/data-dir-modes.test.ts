/**
 * Raw telemetry (prompts, tool payloads, possibly credentials in content) is its owner's alone:
 * every directory serve creates under the data directory is 0700, every file 0600 — the WAL,
 * the local logs, the Kafka outbox, the judge's ledger.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { startScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';

async function modes(dir: string): Promise<{ path: string; mode: number; dir: boolean }[]> {
  const out: { path: string; mode: number; dir: boolean }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const st = await stat(path);
    out.push({ path, mode: st.mode & 0o777, dir: entry.isDirectory() });
    if (entry.isDirectory()) out.push(...(await modes(path)));
  }
  return out;
}

describe('data directory modes', () => {
  it('serve creates every directory 0700 and every file 0600 under the data directory', async () => {
    // A stand-in model endpoint (no real LLM can run here); nothing is sampled, so it is never called.
    const model = await startScriptedServer(() => ({ hang: true }));
    const serve = await startServe({
      assembler: { quietPeriodMs: 100 },
      judge: {
        enabled: true,
        client: { baseUrl: model.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, timeoutMs: 1_000 },
        sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: false } },
      },
      // Nothing listens on port 9: findings wait in the outbox, which is what is checked here.
      kafka: { brokers: ['127.0.0.1:9'], connectionTimeoutMs: 200, requestTimeoutMs: 500, retryInitialMs: 100, retryMaxMs: 500 },
    });
    try {
      expect((await postJson(serve.url, agentRunRequest({ traceId: '0d0d0000000000000000000000000001' }))).status).toBe(200);
      await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.length > 0);
      const found = (await modes(serve.dataDir)).filter((e) => !e.path.endsWith('config.json'));
      const names = found.map((e) => e.path.slice(serve.dataDir.length + 1));
      // The parts under test are there.
      for (const part of ['wal', 'trajectories.jsonl', 'findings.jsonl', 'outbox/kafka', 'judge']) expect(names).toContain(part);
      const open = found.filter((e) => (e.mode & 0o077) !== 0 || e.mode !== (e.dir ? 0o700 : 0o600));
      expect(open.map((e) => `${e.path.slice(serve.dataDir.length + 1)} ${e.mode.toString(8)}`)).toEqual([]);
    } finally {
      await serve.stop();
      await model.close();
    }
  });
});
