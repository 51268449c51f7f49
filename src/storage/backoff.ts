/**
 * Bounded exponential backoff between attempts at a failing disk: the first wait is
 * `initialMs`, each next one doubles, never beyond `maxMs`; a success resets it.
 */
export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  #nextMs: number;

  constructor(initialMs = 100, maxMs = 5_000) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.#nextMs = initialMs;
  }

  /** The wait before the next attempt; the one after is twice as long (bounded). */
  next(): number {
    const ms = this.#nextMs;
    this.#nextMs = Math.min(ms * 2, this.maxMs);
    return ms;
  }

  reset(): void {
    this.#nextMs = this.initialMs;
  }
}
