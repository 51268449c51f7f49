import { BudgetMeter, type Budget, type BudgetDecision } from '../windows/budget.ts';
import type { BudgetName } from './judge-stats.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * What judging may spend, and what is left of it. Bounds (`judge.budget`): `callsPerMinute`
 * (rolling minute), `tokensPerDay` (UTC day), `maxConcurrent`, `maxQueuedWindows`. When a
 * bound is reached `admit` says which (`calls-per-minute`, `tokens-per-day`, `queue-full`) and
 * the caller defers the window with that reason: nothing waits, nothing is dropped unrecorded.
 *
 * The spending rules are `BudgetMeter`'s; this part adds the view `stats().budgetRemaining`
 * reads (admissions of the last minute, at most `callsPerMinute` plus the retries they made).
 */
export class JudgeBudget {
  readonly #budget: Budget;
  readonly #meter: BudgetMeter;
  readonly #now: () => number;
  /** Admission times in the last minute, oldest first: the calls-per-minute view. */
  readonly #admittedAt: number[] = [];
  #lastAdmittedAt: number | undefined;

  constructor(budget: Budget, now: () => number) {
    this.#budget = budget;
    this.#now = now;
    this.#meter = new BudgetMeter(budget, now);
  }

  /** Reserve one call and `estimatedTokens`, or say which bound refuses it. */
  admit(estimatedTokens: number, queued: number, inFlight: number): BudgetDecision {
    const admitted = this.#meter.admit(estimatedTokens, queued, inFlight);
    if (!admitted.ok) return admitted;
    const now = this.#now();
    this.#forgetOld(now);
    this.#admittedAt.push(now);
    return admitted;
  }

  /**
   * Replace a reservation's estimate with what the call is charged (see `BudgetMeter.settle`);
   * retries beyond the first attempt also take calls-per-minute slots.
   */
  spent(estimatedTokens: number, chargedTokens: number | null, attempts: number): void {
    const retries = Math.max(0, attempts - 1);
    this.#meter.settle(estimatedTokens, chargedTokens, retries);
    const now = this.#now();
    for (let i = 0; i < retries; i++) this.#admittedAt.push(now);
  }

  /** What is left of each budget now, with `queued` windows waiting. */
  remaining(queued: number): Record<BudgetName, number> {
    const now = this.#now();
    this.#forgetOld(now);
    const last = this.#admittedAt.at(-1) ?? this.#lastAdmittedAt;
    // The meter rolls its day only when it next admits: a new UTC day has the whole budget.
    const sameDay = last !== undefined && Math.floor(last / DAY_MS) === Math.floor(now / DAY_MS);
    return {
      'tokens-per-day': Math.max(0, this.#budget.tokensPerDay - (sameDay ? this.#meter.tokensToday : 0)),
      'calls-per-minute': Math.max(0, this.#budget.callsPerMinute - this.#admittedAt.length),
      'queued-windows': Math.max(0, this.#budget.maxQueuedWindows - queued),
    };
  }

  #forgetOld(now: number): void {
    while (this.#admittedAt.length > 0 && this.#admittedAt[0]! <= now - MINUTE_MS) this.#lastAdmittedAt = this.#admittedAt.shift();
  }
}
