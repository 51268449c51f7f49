/** A source of numbers in [0, 1), like `Math.random`; injected by tests to make waits deterministic. */
export type RandomSource = () => number;

/**
 * The one retry policy: exponential backoff with full jitter (AWS Architecture Blog,
 * "Exponential Backoff And Jitter"). The n-th wait after a failure (n from 0) is drawn
 * uniformly from [0, min(maxMs, initialMs · 2ⁿ)), so clients that failed together do not
 * retry together; a success resets it.
 *
 * @example
 * const backoff = new Backoff(250, 10_000);
 * for (;;) {
 *   try { await send(); backoff.reset(); break; }
 *   catch { await sleep(backoff.next()); }
 * }
 */
export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly #random: RandomSource;
  /** The current ceiling, min(maxMs, initialMs · 2ⁿ). */
  #ceilingMs: number;

  /** `random` defaults to `Math.random`; `() => 1` gives the ceiling itself (no jitter). */
  constructor(initialMs = 100, maxMs = 5_000, random: RandomSource = Math.random) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.#random = random;
    this.#ceilingMs = Math.min(initialMs, maxMs);
  }

  /** The wait before the next attempt, in [0, ceiling); the ceiling then doubles (bounded by `maxMs`). */
  next(): number {
    const ceiling = this.#ceilingMs;
    this.#ceilingMs = Math.min(ceiling * 2, this.maxMs);
    return Math.floor(this.#random() * ceiling);
  }

  reset(): void {
    this.#ceilingMs = Math.min(this.initialMs, this.maxMs);
  }
}
