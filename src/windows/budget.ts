import { z } from 'zod';

/** What judging may spend. Windows beyond it are deferred and recorded, never dropped silently. */
export const BudgetSchema = z
  .strictObject({
    /** Judge requests started per rolling minute. */
    callsPerMinute: z.int().min(1).default(30),
    /** Tokens (prompt + completion) per UTC day; an unknown usage is charged at its estimate. */
    tokensPerDay: z.int().min(1).default(2_000_000),
    /** Judge requests in flight at once. */
    maxConcurrent: z.int().min(1).max(64).default(2),
    /** Windows admitted and waiting for a concurrency slot; beyond this they are deferred. */
    maxQueuedWindows: z.int().min(0).max(100_000).default(64),
  })
  .prefault({});

export type Budget = z.infer<typeof BudgetSchema>;

export type BudgetDecision = { ok: true } | { ok: false; reason: 'calls-per-minute' | 'tokens-per-day' | 'queue-full' };

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * The judge's spending meter. `admit` reserves a call and an estimate of its tokens; `settle`
 * replaces the estimate with the real usage when the provider reports it. The clock is
 * injected: budgets are about wall time, identities never are.
 */
export class BudgetMeter {
  readonly #budget: Budget;
  readonly #now: () => number;
  /** Start times of calls in the last minute, oldest first; at most `callsPerMinute` long. */
  #recentCalls: number[] = [];
  #day = -1;
  #tokensToday = 0;

  constructor(budget: Budget, now: () => number = Date.now) {
    this.#budget = budget;
    this.#now = now;
  }

  /** Reserve one call and `estimatedTokens`, or say why not. `queued` is the current wait queue. */
  admit(estimatedTokens: number, queued: number, inFlight: number): BudgetDecision {
    const now = this.#now();
    this.#rollDay(now);
    while (this.#recentCalls.length > 0 && this.#recentCalls[0]! <= now - MINUTE_MS) this.#recentCalls.shift();
    if (this.#recentCalls.length >= this.#budget.callsPerMinute) return { ok: false, reason: 'calls-per-minute' };
    if (this.#tokensToday + estimatedTokens > this.#budget.tokensPerDay) return { ok: false, reason: 'tokens-per-day' };
    if (inFlight >= this.#budget.maxConcurrent && queued >= this.#budget.maxQueuedWindows) return { ok: false, reason: 'queue-full' };
    this.#recentCalls.push(now);
    this.#tokensToday += estimatedTokens;
    return { ok: true };
  }

  /**
   * Replace a reservation's estimate with what the call is charged: `chargedTokens` summed over
   * its physical attempts (an attempt of unknown usage at its ceiling; null = no figure at all:
   * keep the estimate). `retries` attempts beyond the first also take calls-per-minute slots, so a
   * call that retried may leave the minute over budget; later admissions wait for it.
   */
  settle(estimatedTokens: number, chargedTokens: number | null, retries = 0): void {
    const now = this.#now();
    for (let i = 0; i < retries; i++) this.#recentCalls.push(now);
    if (chargedTokens === null) return;
    this.#tokensToday = Math.max(0, this.#tokensToday - estimatedTokens + chargedTokens);
  }

  get tokensToday(): number {
    return this.#tokensToday;
  }

  #rollDay(now: number): void {
    const day = Math.floor(now / DAY_MS);
    if (day !== this.#day) {
      this.#day = day;
      this.#tokensToday = 0;
    }
  }
}
