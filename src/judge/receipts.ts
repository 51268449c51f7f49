/**
 * What judge calls cost, attempt by attempt. Every physical HTTP attempt (retries included)
 * has its own entry. Usage the provider did not report is unknown (null), never zero: a
 * timed-out or failed attempt may have been billed even though no answer came back.
 */

/** How one physical attempt ended. */
export type AttemptOutcome = 'answered' | 'http' | 'timeout' | 'network' | 'cancelled' | 'bad-response';

export interface AttemptReceipt {
  outcome: AttemptOutcome;
  /** The HTTP status, when a response arrived. */
  status: number | null;
  /** As reported by the provider for this attempt; null = not reported (unknown). */
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  /** From `client.pricing` and the reported usage; null when either is missing. */
  cost: number | null;
  currency: string | null;
}

/** One invocation's receipt: the attempts, and their sums where every attempt's usage is known. */
export interface Receipt {
  /**
   * Summed over `perAttempt`; null as soon as one attempt's figure is unknown, so a partial sum
   * is never read as the whole.
   */
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  cost: number | null;
  currency: string | null;
  /** Physical HTTP attempts made, retries included. */
  attempts: number;
  /** One entry per attempt, in order. Absent only on records written before attempts were itemised. */
  perAttempt?: AttemptReceipt[];
}

/** The receipt of an invocation that made no physical attempt. */
export function emptyReceipt(): Receipt {
  return { promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null, attempts: 0, perAttempt: [] };
}

/** An attempt that got no usage report: everything about its cost is unknown. */
export function unknownUsage(outcome: AttemptOutcome, status: number | null = null): AttemptReceipt {
  return { outcome, status, promptTokens: null, completionTokens: null, totalTokens: null, cost: null, currency: null };
}

const sum = (values: readonly (number | null)[]): number | null =>
  values.length === 0 || values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + v!, 0);

/** The invocation's receipt from its attempts. */
export function receiptOf(perAttempt: readonly AttemptReceipt[]): Receipt {
  const currencies = new Set(perAttempt.map((a) => a.currency));
  const cost = currencies.size === 1 ? sum(perAttempt.map((a) => a.cost)) : null;
  return {
    promptTokens: sum(perAttempt.map((a) => a.promptTokens)),
    completionTokens: sum(perAttempt.map((a) => a.completionTokens)),
    totalTokens: sum(perAttempt.map((a) => a.totalTokens)),
    cost,
    currency: cost === null ? null : [...currencies][0]!,
    attempts: perAttempt.length,
    perAttempt: perAttempt.map((a) => ({ ...a })),
  };
}

/** Attempts whose usage the provider did not report. */
export function unknownUsageAttempts(r: Receipt): number {
  return (r.perAttempt ?? []).filter((a) => a.totalTokens === null).length;
}

/**
 * Tokens an invocation is charged against the budget: each attempt's reported total, and for
 * an attempt of unknown usage the most it could have cost (`ceilingTokens`). Conservative on
 * purpose: an unknown attempt may have been billed in full.
 */
export function chargedTokens(r: Receipt, ceilingTokens: number): number {
  const attempts = r.perAttempt;
  if (attempts === undefined) return r.totalTokens ?? ceilingTokens * r.attempts;
  return attempts.reduce((n, a) => n + (a.totalTokens ?? ceilingTokens), 0);
}

/**
 * The most one attempt of a request of `requestBytes` bytes can use: every byte a prompt
 * token (a byte-level BPE token covers at least one byte) plus the full completion cap.
 */
export function attemptCeilingTokens(requestBytes: number, maxOutputTokens: number): number {
  return requestBytes + maxOutputTokens;
}
