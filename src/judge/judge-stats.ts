import type { FailureKind } from './client.ts';
import type { Receipt } from './receipts.ts';
import { unknownUsageAttempts } from './receipts.ts';

/** Budgets with something left to spend (see `BudgetSchema`), as `stats().budgetRemaining` keys. */
export type BudgetName = 'tokens-per-day' | 'calls-per-minute' | 'queued-windows';

/** One judge call as it ended: how long it took, what came of it, what it cost. */
export interface JudgeCall {
  /** Wall time of the call, retries and backoff included. */
  seconds: number;
  /** `answered`, a transport failure, or `bad-answer` (an answer that did not parse). */
  outcome: 'answered' | FailureKind | 'bad-answer';
  receipt: Receipt;
  /** For a failure: the HTTP status, when there was one, and what went wrong. */
  failure?: { status?: number; message: string };
}

/** What a judging path (the trace questions, the layered walk) did with its windows, counted. */
export interface OutcomeCounts {
  /** Windows refused, by reason. */
  refused: Record<string, number>;
  /** Deferred windows by reason: the budget's, `shutdown`, or `ledger-full`. */
  deferred: Record<string, number>;
  /** Answers read back from the ledger instead of paid for again. */
  replays: number;
  findings: number;
  alarms: number;
}

export interface DecisionPointStats extends OutcomeCounts {
  windowsBuilt: number;
  /** Invocations dispatched (each may make several physical attempts). */
  calls: number;
  /** Physical HTTP attempts, retries included: each may have been billed. */
  attempts: number;
  /** Attempts whose usage the provider did not report (timeouts, errors): cost unknown, charged at the ceiling. */
  unknownUsageAttempts: number;
  conflicts: number;
  unresolvedIntents: number;
  duplicates: number;
  failures: Record<string, number>;
  redactions: number;
  ledgerErrors: number;
  /**
   * Unexpected faults by part (`ledger`, `emit`, `on-call`, `judge`, `label-windows`, `answer-format`: the server refused the answer format; `listener`: an `onFault`/`onError` that threw): each went to
   * `onFault`. Always present in `DecisionPoints.stats()`; optional for stats built elsewhere.
   */
  faults?: Record<string, number>;
  /** Tokens the provider reported, summed over attempts; an attempt without usage adds nothing. */
  tokens: { prompt: number; completion: number };
  /** Cost by currency, only for calls priced by `client.pricing`; empty when nothing is priced. */
  cost: Record<string, number>;
  /** The ledger's size (see `LedgerBounds`); zeros when the judge is disabled. Always present in `DecisionPoints.stats()`. */
  ledger?: LedgerStats;
  /** What is left of each budget now. */
  budgetRemaining: Record<BudgetName, number>;
  /** Per question: whether an installed certificate qualifies it (see `CertificateStore.qualifies`). */
  certified: Record<string, boolean>;
}

export interface LedgerStats {
  /** The ledger file's size now. */
  bytes: number;
  /** Bytes of the lines replay needs (intents and results): what compaction keeps. */
  liveBytes: number;
  /** Keys (intents) held in the in-memory index. */
  keys: number;
  /** Compactions done since open. */
  compactions: number;
  /** Refused/deferred audit lines not written because the ledger was full (the manifest still names them). */
  skipsNotRecorded: number;
}

/** The counters `DecisionPoints` keeps; `stats()` adds what is read from its parts at the time. */
export type JudgeCounters = Omit<DecisionPointStats, 'budgetRemaining' | 'certified' | 'ledger' | 'faults'> & { faults: Record<string, number> };

export function newCounters(): JudgeCounters {
  return {
    windowsBuilt: 0,
    refused: {},
    deferred: {},
    calls: 0,
    attempts: 0,
    unknownUsageAttempts: 0,
    replays: 0,
    conflicts: 0,
    unresolvedIntents: 0,
    duplicates: 0,
    failures: {},
    redactions: 0,
    findings: 0,
    alarms: 0,
    ledgerErrors: 0,
    faults: {},
    tokens: { prompt: 0, completion: 0 },
    cost: {},
  };
}

export const bump = (m: Record<string, number>, k: string): void => {
  m[k] = (m[k] ?? 0) + 1;
};

/** Adds one call's physical attempts, reported tokens and cost to the counters. */
export function countReceipt(c: JudgeCounters, receipt: Receipt): void {
  c.attempts += receipt.attempts;
  c.unknownUsageAttempts += unknownUsageAttempts(receipt);
  for (const a of receipt.perAttempt ?? []) {
    c.tokens.prompt += a.promptTokens ?? 0;
    c.tokens.completion += a.completionTokens ?? 0;
    if (a.cost !== null && a.currency !== null) c.cost[a.currency] = (c.cost[a.currency] ?? 0) + a.cost;
  }
}
