import { REFUSAL } from '../refusal.ts';

/**
 * One memory budget for request bodies in flight, shared by the OTLP/HTTP and OTLP/gRPC
 * receivers (the Collector's memory limiter, applied where the bytes arrive): every body is
 * charged as its bytes are received and as they are inflated, before inflation goes on, and
 * released when its request is answered. A charge that would pass `maxInflightBytes` is
 * refused, and the request with it (503 / RESOURCE_EXHAUSTED + a retry delay,
 * `max-inflight-bytes`), so bodies in flight never hold more than the budget.
 */
export class InflightBudget {
  readonly limitBytes: number;
  #usedBytes = 0;
  #refusals = 0;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  /** Bytes charged now, over every request in flight. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** Charges refused since start (each one a refused request). */
  get refusals(): number {
    return this.#refusals;
  }

  /** A request's account against the budget; `release()` it when the request is answered. */
  open(): InflightCharge {
    return new InflightCharge(this);
  }

  /** @internal used by `InflightCharge`. */
  take(bytes: number): boolean {
    if (this.#usedBytes + bytes > this.limitBytes) {
      this.#refusals += 1;
      return false;
    }
    this.#usedBytes += bytes;
    return true;
  }

  /** @internal used by `InflightCharge`. */
  give(bytes: number): void {
    this.#usedBytes -= bytes;
  }
}

/** What one request holds of the budget. Charges after `release()` are refused. */
export class InflightCharge {
  readonly #budget: InflightBudget;
  #bytes = 0;
  #released = false;

  constructor(budget: InflightBudget) {
    this.#budget = budget;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Charges `bytes` more; false (nothing charged) when the budget cannot take them. */
  charge(bytes: number): boolean {
    if (this.#released || !this.#budget.take(bytes)) return false;
    this.#bytes += bytes;
    return true;
  }

  /** Gives back `bytes` of this request's charge (a reservation larger than what came). */
  refund(bytes: number): void {
    const back = Math.min(bytes, this.#bytes);
    this.#bytes -= back;
    this.#budget.give(back);
  }

  /** Gives back the whole charge; idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.give(this.#bytes);
    this.#bytes = 0;
  }
}

/** The refusal reason when the budget is exhausted (a memory bound: RESOURCE_EXHAUSTED over gRPC). */
export const INFLIGHT_REFUSAL = REFUSAL.maxInflightBytes;
