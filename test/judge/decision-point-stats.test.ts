import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checksConfigSchema } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints, type JudgeCall } from '../../src/judge/decision-points.ts';
import { SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { agentRun } from '../windows/builders.ts';
import { installBoundCertificates, validCertificate } from './certificate-fixture.ts';
import { answers, completion, startScriptedServer, type ScriptedServer } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const CHECKS = checksConfigSchema.parse({});
const Q0 = SEMANTIC_QUESTIONS[0]!.id;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
});

async function judgeRuns(over: Record<string, unknown>, runs: number, certificate?: Record<string, unknown>, client: Record<string, unknown> = {}) {
  // Usage 900 prompt + 60 completion tokens per answer (scripted-chat-server's default).
  server = await startScriptedServer((body) => ({
    body: JSON.stringify(body).includes('GARBLED') ? { choices: [{ message: { content: '?' } }] } : completion(answers()),
  }));
  const dataDir = await mkdtemp(join(tmpdir(), 'trajwatch-judge-stats-'));
  const cfg = JudgeConfigSchema.parse({
    enabled: true,
    client: { baseUrl: server.baseUrl, model: 'judge', retries: 0, ...client },
    sampling: { rate: 0 },
    ...over,
  });
  if (certificate !== undefined) await installBoundCertificates(dataDir, cfg, { servedModel: 'judge-model-2025-01', ...certificate });
  const calls: JudgeCall[] = [];
  const dp = await DecisionPoints.open(dataDir, cfg, { checks: CHECKS, onFindings: () => undefined, onCall: (c) => calls.push(c) });
  for (let i = 0; i < runs; i++) {
    const t = { ...agentRun(1, () => (i === 0 ? 'GARBLED' : 'fine')), key: `run-${i}` };
    dp.consider(t, runChecks(t, CHECKS), []);
  }
  await dp.drain();
  const stats = dp.stats();
  await dp.close();
  return { stats, calls, cfg };
}

describe('decision point stats for metrics', () => {
  it('prices reported usage with client.pricing, by currency', async () => {
    const pricing = { inputPerMillionTokens: 1, outputPerMillionTokens: 10, currency: 'USD' };
    const { stats } = await judgeRuns({}, 2, undefined, { pricing });
    // One answered call: 900 prompt and 60 completion tokens.
    expect(stats.cost.USD).toBeCloseTo((900 * 1 + 60 * 10) / 1e6, 12);
  });

  it('tells onCall of every call with its outcome and duration, and sums reported tokens; without pricing there is no cost', async () => {
    const priced = await judgeRuns({}, 3);
    expect(priced.calls.map((c) => c.outcome).sort()).toEqual(['answered', 'answered', 'bad-answer']);
    expect(priced.calls.every((c) => c.seconds >= 0 && c.seconds < 60)).toBe(true);
    // The garbled answer carried no usage.
    expect(priced.stats.tokens).toEqual({ prompt: 1800, completion: 120 });
    expect(priced.stats.cost).toEqual({});
  });

  it('shows which questions an installed certificate qualifies, and what is left of each budget', async () => {
    const { stats } = await judgeRuns({ budget: { callsPerMinute: 10, tokensPerDay: 100_000, maxQueuedWindows: 5 } }, 2, {});
    expect(stats.certified[Q0]).toBe(true);
    expect(
      Object.entries(stats.certified)
        .filter(([, ok]) => ok)
        .map(([q]) => q),
    ).toEqual([Q0]);
    expect(Object.keys(stats.certified).sort()).toEqual(SEMANTIC_QUESTIONS.map((q) => q.id).sort());
    expect(stats.budgetRemaining['calls-per-minute']).toBe(10 - stats.calls);
    // One answered call reports 960 tokens; the garbled one keeps its estimate.
    expect(stats.budgetRemaining['tokens-per-day']).toBeLessThan(100_000 - 960);
    expect(stats.budgetRemaining['queued-windows']).toBe(5);
  });

  it('does not count a certificate below the minimum kappa as certified', async () => {
    const { stats } = await judgeRuns({}, 0, { kappa: 0.4, kappaInterval: { ...validCertificate().kappaInterval, lower: 0.2, upper: 0.6 } });
    expect(Object.values(stats.certified).every((ok) => !ok)).toBe(true);
  });
});
