import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { startScriptedServer } from '../judge/scripted-chat-server.ts';
import { agentRunRequest, postJson } from '../reliability/agent-run.ts';

describe('serve shutdown', () => {
  it('with the write-ahead log off, on SIGTERM closes open trajectories as incomplete (shutdown) and exits 0', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 }, receiver: { wal: { enabled: false } } });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'root',
                  startTimeUnixNano: '1',
                  endTimeUnixNano: '2',
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await fetch(`${serve.url}/v1/traces`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    expect(await serve.stop()).toBe(0);
    const rows = await waitForLines(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === 1, 1_000);
    expect(rows[0]).toMatchObject({ key: '0af7651916cd43dd8448eb211c80319c', complete: false, incompleteReasons: ['shutdown'] });
    expect(serve.output()).toMatch(/stopped/);
  });

  it('with 200 open trajectories and the write-ahead log on: leaves them to the log, stops listening, exits 0; the next start replays and closes every one', async () => {
    const serve = await startServe({ assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 } });
    const open = 200;
    for (let i = 0; i < open; i++) {
      expect((await postJson(serve.url, agentRunRequest({ traceId: `5d${(i + 1).toString(16).padStart(30, '0')}` }))).status).toBe(200);
    }
    expect(await serve.stop()).toBe(0);
    expect(serve.output()).toMatch(/SIGTERM: stopping; open trajectories stay in the write-ahead log/);
    await expect(fetch(`${serve.url}/healthz`)).rejects.toThrow();
    // Nothing closed as `shutdown`: not one of them was written.
    const written = await readFile(join(serve.dataDir, 'trajectories.jsonl'), 'utf8').catch(() => '');
    expect(written).toBe('');

    const next = await startServe({ assembler: { quietPeriodMs: 100 } }, ['--data-dir', serve.dataDir]);
    try {
      expect(next.output()).toMatch(new RegExp(`replayed ${open} request\\(s\\) from the write-ahead log`));
      const rows = await waitForLines<{ key: string; complete: boolean }>(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.length === open, 15_000);
      expect(new Set(rows.map((t) => t.key)).size).toBe(open);
      for (const t of rows) expect(t).toMatchObject({ complete: true });
    } finally {
      expect(await next.stop()).toBe(0);
    }
  });

  it('with a judge call in flight to an endpoint that never answers: SIGTERM cancels it, records it, and serve exits 0 in bounded time', async () => {
    // A stand-in model endpoint that never answers (no real LLM can run here).
    const model = await startScriptedServer(() => ({ hang: true }));
    const serve = await startServe({
      assembler: { quietPeriodMs: 100, idleTimeoutMs: 60_000 },
      judge: {
        enabled: true,
        client: { baseUrl: model.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, timeoutMs: 120_000 },
        sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
      },
    });
    try {
      expect((await postJson(serve.url, agentRunRequest({ traceId: '5e000000000000000000000000000001' }))).status).toBe(200);
      const deadline = Date.now() + 15_000;
      while (model.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(model.requests.length).toBe(1);
      const stoppedAt = Date.now();
      expect(await serve.stop()).toBe(0);
      // Far below the call's own 120 s timeout: shutdown cancels rather than waits.
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
      const ledger = (await readFile(join(serve.dataDir, 'judge', 'ledger.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
      const records = ledger.map((l) => JSON.parse(l) as { type: string; failure?: { kind: string } });
      expect(records.map((r) => r.type)).toEqual(['intent', 'result']);
      expect(records[1]!.failure?.kind).toMatch(/cancelled/);
      expect(serve.output()).toMatch(/SIGTERM: stopping[\s\S]*stopped/);
    } finally {
      await model.close();
    }
  });

  it('a window still queued at SIGTERM is recorded as deferred and never paid for', async () => {
    // A stand-in model endpoint (no real LLM can run here); it must receive nothing.
    const model = await startScriptedServer(() => ({ hang: true }));
    const serve = await startServe({
      assembler: { quietPeriodMs: 60_000, idleTimeoutMs: 60_000 },
      // Without the write-ahead log the open trajectory closes at shutdown, so its window is queued then.
      receiver: { wal: { enabled: false } },
      judge: {
        enabled: true,
        client: { baseUrl: model.baseUrl, model: 'm', apiKeyEnv: null, retries: 0, timeoutMs: 120_000 },
        sampling: { rate: 0, triggers: { l0Hit: false, outbound: false, terminal: true } },
      },
    });
    try {
      expect((await postJson(serve.url, agentRunRequest({ traceId: '5e000000000000000000000000000002' }))).status).toBe(200);
      expect(await serve.stop()).toBe(0);
      expect(model.requests.length).toBe(0);
      const ledger = (await readFile(join(serve.dataDir, 'judge', 'ledger.jsonl'), 'utf8')).split('\n').filter((l) => l !== '');
      expect(ledger.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['deferred']);
    } finally {
      await model.close();
    }
  });
});
