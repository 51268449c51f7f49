import type { DecisionPointStats, JudgeCall } from './decision-points.ts';
import { byLabel, byReason, histogram, type MetricRegistry, mirrorCounter, mirrorTotal, readLabelledGauge, type Reading } from '../telemetry/metrics.ts';

const JUDGE_CALL_OUTCOMES: readonly JudgeCall['outcome'][] = ['answered', 'bad-answer', 'timeout', 'cancelled', 'network', 'http', 'bad-response'];

/** Seconds, from a fast local call to a slow model behind a queue. */
const JUDGE_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Times one judge call: the decision points' `onCall` option. */
export type JudgeCallObserver = (call: JudgeCall) => void;

const OFF: JudgeCallObserver = () => {};

/**
 * The judge's series, mirrored from {@link DecisionPointStats} at scrape time: windows,
 * calls, attempts, failures, redactions, ledger errors, tokens, cost, budgets, calibration.
 * Without a registry: nothing.
 */
export function registerJudgeMetrics(registry: MetricRegistry, read: () => DecisionPointStats): void {
  if (registry === undefined) return;
  mirrorCounter(
    registry,
    'trajwatch_windows_total',
    'Windows extracted, refused (over a cap) or deferred (over budget), by reason.',
    ['outcome', 'reason'],
    () => {
      const s = read();
      return [[{ outcome: 'extracted', reason: '' }, s.windowsBuilt], ...byReason(s.refused, 'refused'), ...byReason(s.deferred, 'deferred')];
    },
  );
  mirrorCounter(
    registry,
    'trajwatch_judge_calls_total',
    'Judge requests by outcome: called (paid), replayed from the ledger (free), conflict.',
    ['outcome'],
    () => {
      const s = read();
      return byLabel('outcome', { called: s.calls, replayed: s.replays, conflict: s.conflicts, 'unresolved-intent': s.unresolvedIntents });
    },
  );
  mirrorCounter(
    registry,
    'trajwatch_judge_attempts_total',
    'Physical judge HTTP attempts, retries included, by usage: reported, or unknown (no usage came back; may have been billed, charged to the budget at its ceiling).',
    ['usage'],
    () => {
      const s = read();
      return byLabel('usage', { reported: s.attempts - s.unknownUsageAttempts, unknown: s.unknownUsageAttempts });
    },
  );
  mirrorCounter(
    registry,
    'trajwatch_judge_failures_total',
    'Judge calls that failed (timeout, HTTP error, unparseable answer...), by reason.',
    ['reason'],
    () => byLabel('reason', read().failures),
  );
  mirrorTotal(registry, 'trajwatch_redactions_total', 'Secrets redacted from window content before a judge request.', () => read().redactions);
  mirrorTotal(registry, 'trajwatch_ledger_errors_total', 'Decision-ledger writes that failed.', () => read().ledgerErrors);
  mirrorCounter(
    registry,
    'trajwatch_judge_tokens_total',
    'Tokens the judge provider reported, by kind (prompt, completion), summed over attempts; attempts without usage add nothing.',
    ['kind'],
    () => {
      const { prompt, completion } = read().tokens;
      return byLabel('kind', { prompt, completion });
    },
  );
  mirrorCounter(
    registry,
    'trajwatch_judge_cost_usd_total',
    'Judge spend in US dollars, from client.pricing; absent while no call was priced in USD (unknown is not zero).',
    [],
    () => {
      const usd = read().cost.USD;
      return usd === undefined ? [] : [[{}, usd]];
    },
  );
  readLabelledGauge(
    registry,
    'trajwatch_judge_budget_remaining',
    'What is left of each judge budget now: tokens-per-day (tokens), calls-per-minute (calls), queued-windows (windows).',
    ['budget'],
    () => byLabel('budget', read().budgetRemaining),
  );
  readLabelledGauge(
    registry,
    'trajwatch_calibration_certified',
    'Per question: 1 when an installed certificate qualifies it for the configured model and window policy, else 0 (it cannot act).',
    ['question'],
    () => Object.entries(read().certified).map(([question, ok]): Reading => [{ question }, ok ? 1 : 0]),
  );
}

/** Judge call latency by outcome (`trajwatch_judge_latency_seconds`), fed by the returned observer; a no-op without a registry. */
export function judgeCallMetrics(registry: MetricRegistry): JudgeCallObserver {
  if (registry === undefined) return OFF;
  const latency = histogram(
    registry,
    'trajwatch_judge_latency_seconds',
    'Judge call duration (retries and backoff included), by outcome: answered, bad-answer, or the failure kind.',
    JUDGE_LATENCY_BUCKETS,
    ['outcome'],
  );
  // Known outcomes start at 0, so rate() sees the first call of each.
  for (const outcome of JUDGE_CALL_OUTCOMES) latency.zero({ outcome });
  return (call) => latency.observe({ outcome: call.outcome }, call.seconds);
}
