import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatClient, JudgeClientSchema } from '../../src/judge/client.ts';
import { LEDGER_FILE } from '../../src/judge/ledger/ledger.ts';
import { harness, judgeAll, type Harness } from './judge-harness.ts';
import { answers, completion, startScriptedServer, type ScriptedReply, type ScriptedServer } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const servers: ScriptedServer[] = [];
const started: Harness[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((s) => s.close()), ...started.splice(0).map((h) => h.server.close())]);
});

async function client(script: (n: number) => ScriptedReply, over: Record<string, unknown> = {}) {
  const server = await startScriptedServer((_b, n) => script(n));
  servers.push(server);
  return new ChatClient(JudgeClientSchema.parse({ baseUrl: server.baseUrl, model: 'judge', backoffMs: 1, timeoutMs: 2_000, ...over }), { env: {} });
}

describe('every physical attempt has its own receipt', () => {
  it('records a timed-out attempt as unknown usage, so the call total is unknown rather than the last attempt alone', async () => {
    const c = await client((n) => (n === 1 ? { hang: true } : { body: completion(answers()) }), {
      timeoutMs: 100,
      pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 1 },
    });
    const r = await c.complete({});
    expect(r.ok).toBe(true);
    expect(r.receipt.attempts).toBe(2);
    expect(r.receipt.perAttempt).toEqual([
      { outcome: 'timeout', status: null, promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null },
      { outcome: 'answered', status: 200, promptTokens: 900, completionTokens: 60, totalTokens: 960, cost: 960 / 1e6, currency: 'USD' },
    ]);
    // The timed-out attempt may have been billed: the sum is not known, and never reads as 960.
    expect(r.receipt).toMatchObject({ promptTokens: null, completionTokens: null, totalTokens: null, cost: null });
  });

  it('itemises error statuses and keeps usage an error body reports', async () => {
    const c = await client((n) =>
      n === 1
        ? { status: 429 }
        : n === 2
          ? { status: 503, body: { error: 'overloaded', usage: { prompt_tokens: 900, completion_tokens: 0 } } }
          : { body: completion(answers()) },
    );
    const r = await c.complete({});
    expect(r.receipt.perAttempt!.map((a) => [a.outcome, a.status, a.totalTokens])).toEqual([
      ['http', 429, null],
      ['http', 503, 900],
      ['answered', 200, 960],
    ]);
    expect(r.receipt.totalTokens).toBeNull();
  });

  it('counts every attempt in the budget: a retry takes a calls-per-minute slot, an unknown attempt is charged at its ceiling', async () => {
    const h = await harness(
      (_b, n) => (n === 1 ? { hang: true } : { body: completion(answers()) }),
      { timeoutMs: 100, retries: 1, maxOutputTokens: 256 },
      {
        budget: { maxConcurrent: 1, callsPerMinute: 30, tokensPerDay: 1_000_000 },
      },
    );
    started.push(h);
    const clock = Date.UTC(2026, 10, 30, 12);
    const r = await judgeAll(h.dataDir, h.cfg, undefined, () => clock);
    const bodies = h.server.requests;
    const windows = new Set(bodies).size;
    expect(bodies).toHaveLength(windows + 1);
    const stats = r.dp.stats();
    expect(stats).toMatchObject({ calls: windows, attempts: windows + 1, unknownUsageAttempts: 1 });
    expect(stats.tokens).toEqual({ prompt: 900 * windows, completion: 60 * windows });
    // Known attempts at their reported 960; the timed-out one at every request byte a token plus the output cap.
    const ceiling = Buffer.byteLength(bodies[0]!) + 256;
    expect(stats.budgetRemaining['tokens-per-day']).toBe(1_000_000 - 960 * windows - ceiling);
    expect(stats.budgetRemaining['calls-per-minute']).toBe(30 - (windows + 1));
    // The ledger result keeps both attempts of the retried call.
    const results = (await readFile(join(h.dataDir, 'judge', LEDGER_FILE), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; receipt?: { attempts: number; perAttempt: { outcome: string }[] } })
      .filter((l) => l.type === 'result');
    const retried = results.find((x) => x.receipt!.attempts === 2)!;
    expect(retried.receipt!.perAttempt.map((a) => a.outcome)).toEqual(['timeout', 'answered']);
    expect(r.calls.map((c) => c.receipt.attempts).sort()).toEqual([...Array<number>(windows - 1).fill(1), 2]);
  });
});
