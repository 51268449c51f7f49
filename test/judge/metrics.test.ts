import { describe, expect, it } from 'vitest';
import { Registry, register } from 'prom-client';
import type { DecisionPointStats } from '../../src/judge/decision-points.ts';
import { newCounters } from '../../src/judge/judge-stats.ts';
import { judgeCallMetrics, registerJudgeMetrics } from '../../src/judge/metrics.ts';
import { sample } from '../helpers/metric-sample.ts';

function judgeStats(): DecisionPointStats {
  return {
    ...newCounters(),
    budgetRemaining: { 'tokens-per-day': 1000, 'calls-per-minute': 30, 'queued-windows': 64 },
    certified: { 'evidence.unverified-completion': true, 'tool.error-ignored': false },
  };
}

describe('judge metrics', () => {
  it('mirrors judge tokens, shows cost only once a call was priced in USD, and exports budgets and calibration per question', async () => {
    const s = judgeStats();
    const registry = new Registry();
    registerJudgeMetrics(registry, () => s);
    const observeCall = judgeCallMetrics(registry);
    let text = await registry.metrics();
    expect(sample(text, 'trajwatch_judge_tokens_total{kind="prompt"}')).toBe(0);
    expect(text).not.toMatch(/^trajwatch_judge_cost_usd_total /m);
    expect(sample(text, 'trajwatch_judge_budget_remaining{budget="calls-per-minute"}')).toBe(30);
    expect(sample(text, 'trajwatch_calibration_certified{question="evidence.unverified-completion"}')).toBe(1);
    expect(sample(text, 'trajwatch_calibration_certified{question="tool.error-ignored"}')).toBe(0);

    expect(sample(text, 'trajwatch_judge_attempts_total{usage="unknown"}')).toBe(0);

    s.attempts = 3;
    s.unknownUsageAttempts = 1;
    s.tokens = { prompt: 900, completion: 60 };
    s.cost = { USD: 0.0015 };
    s.failures = { 'bad-answer': 1 };
    observeCall({
      seconds: 0.2,
      outcome: 'answered',
      receipt: { promptTokens: 900, completionTokens: 60, totalTokens: 960, cost: 0.0015, currency: 'USD', attempts: 1 },
    });
    text = await registry.metrics();
    expect(sample(text, 'trajwatch_judge_tokens_total{kind="prompt"}')).toBe(900);
    // Every physical attempt, and the ones whose usage is unknown (may have been billed).
    expect(sample(text, 'trajwatch_judge_attempts_total{usage="reported"}')).toBe(2);
    expect(sample(text, 'trajwatch_judge_attempts_total{usage="unknown"}')).toBe(1);
    expect(sample(text, 'trajwatch_judge_cost_usd_total')).toBe(0.0015);
    expect(sample(text, 'trajwatch_judge_failures_total{reason="bad-answer"}')).toBe(1);
    expect(sample(text, 'trajwatch_judge_latency_seconds_count{outcome="answered"}')).toBe(1);
    // Known outcomes exist at 0 before their first call, so rate() sees that call.
    expect(sample(text, 'trajwatch_judge_latency_seconds_count{outcome="timeout"}')).toBe(0);
  });

  it('declares nothing and counts nothing without a registry (telemetry off)', async () => {
    registerJudgeMetrics(undefined, judgeStats);
    judgeCallMetrics(undefined)({ seconds: 1, outcome: 'answered', receipt: undefined as never });
    // prom-client's global registry is where a metric without `registers` would land: nothing did.
    expect(await register.metrics()).not.toMatch(/trajwatch_/);
  });
});
