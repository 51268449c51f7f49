import { afterEach, describe, expect, it } from 'vitest';
import { ChatClient, JudgeClientSchema } from '../../src/judge/client.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import type { JudgeFault } from '../../src/judge/fault.ts';
import { formatRefusal, requestedFormat } from '../../src/judge/format-refusal.ts';
import { readLedger } from '../../src/judge/ledger/ledger.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { join } from 'node:path';
import { CHECKS, deployRun, harness, type Harness } from './judge-harness.ts';
import { answers, completion, type ScriptedReply } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint; the refusal body
// is the one llama-cpp-python 0.3.36's server answers `response_format: {type: "json_schema"}`
// with (HTTP 500, pydantic's literal error), as measured in test/judge/real-server.test.ts.
const LLAMA_CPP_PYTHON_REFUSAL = {
  error: {
    message:
      "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]",
    type: 'internal_server_error',
  },
};

/** A server that takes json_object and lines, and refuses json_schema as llama-cpp-python does. */
const llamaCppPython = (body: Record<string, unknown>): ScriptedReply =>
  requestedFormat(body) === 'json_schema' ? { status: 500, body: LLAMA_CPP_PYTHON_REFUSAL } : { body: completion(answers()) };

const started: Harness[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.server.close()));
});

describe('a server that refuses the answer format asked for', () => {
  it('is told apart from other error answers: an error status whose body names the field the format went in', () => {
    const body = JSON.stringify(LLAMA_CPP_PYTHON_REFUSAL);
    expect(formatRefusal('json_schema', 500, body)).toMatch(/^the server refused judge\.client\.answerFormat json_schema \(HTTP 500, response_format: /);
    expect(formatRefusal('json_schema', 500, body)).toContain('set judge.client.answerFormat to json_object');
    expect(formatRefusal('grammar', 400, '{"error":"unknown field grammar"}')).toContain('set judge.client.answerFormat to json_schema');
    expect(formatRefusal('lines', 500, body)).toBeNull(); // nothing structured was asked for
    expect(formatRefusal('json_schema', 500, '{"error":"overloaded"}')).toBeNull();
    expect(formatRefusal('json_schema', 401, body)).toBeNull();
    expect(formatRefusal('json_schema', 429, body)).toBeNull();
    expect(requestedFormat({ response_format: { type: 'json_object' } })).toBe('json_object');
    expect(requestedFormat({ grammar: 'root ::= "x"' })).toBe('grammar');
    expect(requestedFormat({ messages: [] })).toBe('lines');
  });

  it('fails the call at once, not retried, naming judge.client.answerFormat and what to set instead', async () => {
    const h = await harness(llamaCppPython);
    started.push(h);
    const client = new ChatClient(JudgeClientSchema.parse({ baseUrl: h.server.baseUrl, model: 'judge', apiKeyEnv: null, retries: 2, backoffMs: 1 }));
    const out = await client.complete({ model: 'judge', messages: [], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.refusedFormat).toBe('json_schema');
    expect(out.failure).toMatchObject({ kind: 'http', status: 500 });
    expect(out.failure.message).toContain('judge.client.answerFormat');
    expect(out.failure.message).toContain('json_object');
    expect(out.receipt.attempts).toBe(1);
    expect(h.server.requests).toHaveLength(1);
    // The same server answers a request that asks for no structured format.
    const other = await client.complete({ model: 'judge', messages: 'not a list' });
    expect(other.ok).toBe(true);
  });

  it('the judge reports it as an answer-format fault (one log line for its first) and records the window as that http failure, never as bad answers', async () => {
    const h = await harness(llamaCppPython, { retries: 2 });
    started.push(h);
    expect(h.cfg.client.answerFormat).toBe('json_schema');
    const faults: JudgeFault[] = [];
    const dp = await DecisionPoints.open(h.dataDir, h.cfg, { checks: CHECKS, onFindings: () => undefined, onFault: (f) => faults.push(f) });
    const t = deployRun();
    await dp.consider(t, runChecks(t, CHECKS), []);
    await dp.drain();
    const stats = dp.stats();
    await dp.close();
    expect(stats.failures['bad-answer']).toBeUndefined();
    expect(stats.failures.http).toBe(stats.calls);
    expect(stats.faults['answer-format']).toBe(stats.calls);
    expect(h.server.requests).toHaveLength(stats.calls); // no retries
    expect(faults.filter((f) => f.part === 'answer-format').map((f) => f.first)).toEqual([true, ...Array(stats.calls - 1).fill(false)]);
    expect(faults[0]!.message).toContain('judge.client.answerFormat json_schema');
    const results = (await readLedger(join(h.dataDir, 'judge', 'ledger.jsonl'))).filter((r) => r.type === 'result');
    expect(results.length).toBe(stats.calls);
    for (const r of results) if (r.type === 'result') expect(r.failure?.message).toContain('set judge.client.answerFormat to json_object');
  });

  it('with the format it names configured, the same server answers in protocol', async () => {
    const h = await harness(llamaCppPython, { answerFormat: 'json_object' });
    started.push(h);
    const dp = await DecisionPoints.open(h.dataDir, h.cfg, { checks: CHECKS, onFindings: () => undefined });
    const t = deployRun();
    await dp.consider(t, runChecks(t, CHECKS), []);
    await dp.drain();
    const stats = dp.stats();
    await dp.close();
    expect(stats.calls).toBeGreaterThan(0);
    expect(stats.failures).toEqual({});
    expect(stats.faults['answer-format']).toBeUndefined();
  });
});
