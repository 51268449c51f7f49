import { afterEach, describe, expect, it } from 'vitest';
import { ChatClient, JudgeClientSchema } from '../../src/judge/client.ts';
import { answers, completion, startScriptedServer, type ScriptedReply, type ScriptedServer } from './scripted-chat-server.ts';

// The scripted server stands in for an OpenAI-compatible LLM endpoint, which cannot run here.
let server: ScriptedServer | undefined;
const started: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function client(script: (n: number) => ScriptedReply, over: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  server = await startScriptedServer((_b, n) => script(n));
  started.push(server);
  const cfg = JudgeClientSchema.parse({ baseUrl: server.baseUrl, model: 'judge', backoffMs: 1, timeoutMs: 2_000, ...over });
  return new ChatClient(cfg, { env });
}

describe('Chat Completions client', () => {
  it('returns content, logprobs, served model and a receipt with cost from usage', async () => {
    const c = await client(
      () => ({ body: completion(answers()) }),
      { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 } },
      { TRAJWATCH_JUDGE_API_KEY: 'k-123' },
    );
    const r = await c.complete({ model: 'judge', messages: [] });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.servedModel).toBe('judge-model-2025-01');
    expect(r.logprobs).not.toBeNull();
    const cost = (900 + 120) / 1e6;
    expect(r.receipt).toEqual({
      promptTokens: 900,
      completionTokens: 60,
      totalTokens: 960,
      cost,
      currency: 'USD',
      attempts: 1,
      perAttempt: [{ outcome: 'answered', status: 200, promptTokens: 900, completionTokens: 60, totalTokens: 960, cost, currency: 'USD' }],
    });
    expect(server!.authorizations[0]).toBe('Bearer k-123');
  });

  it('keeps missing usage unknown (null), never zero', async () => {
    const c = await client(() => ({ body: completion(answers(), { usage: null }) }), { pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 } });
    const r = await c.complete({});
    expect(r.receipt).toMatchObject({ promptTokens: null, completionTokens: null, totalTokens: null, cost: null });
  });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    const c = await client((n) => (n === 1 ? { status: 429 } : n === 2 ? { status: 503 } : { body: completion(answers()) }));
    const r = await c.complete({});
    expect(r.ok).toBe(true);
    expect(r.receipt.attempts).toBe(3);
  });

  it('does not retry a 400 and reports it as a value', async () => {
    const c = await client(() => ({ status: 400, body: { error: 'bad' } }));
    const r = await c.complete({});
    expect(r).toMatchObject({ ok: false, failure: { kind: 'http', status: 400 }, receipt: { attempts: 1 } });
  });

  it('times out each attempt and reports a timeout after the retries', async () => {
    const c = await client(() => ({ hang: true }), { timeoutMs: 50, retries: 1 });
    const r = await c.complete({});
    expect(r).toMatchObject({ ok: false, failure: { kind: 'timeout' }, receipt: { attempts: 2 } });
  });

  it('stops at once when cancelled', async () => {
    const c = await client(() => ({ hang: true }), { timeoutMs: 60_000 });
    const abort = new AbortController();
    const pending = c.complete({}, abort.signal);
    setTimeout(() => abort.abort(), 20);
    expect(await pending).toMatchObject({ ok: false, failure: { kind: 'cancelled' } });
  });

  it('reports a body that is not a chat completion as bad-response', async () => {
    const c = await client(() => ({ body: '<html>gateway</html>' }));
    expect(await c.complete({})).toMatchObject({ ok: false, failure: { kind: 'bad-response' } });
    const d = await client(() => ({ body: { choices: 'nope' } }));
    expect(await d.complete({})).toMatchObject({ ok: false, failure: { kind: 'bad-response' } });
  });
});
