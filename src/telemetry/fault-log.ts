import type { Logger } from './logger.ts';

/**
 * Logs a fault that repeats (a refused request, a sink behind, a log that cannot be written)
 * once when it begins, once when its reason changes, and once when it ends, with how many
 * times it was seen and for how long — never once per repeat. The metrics count every
 * occurrence; this says when an episode began and ended (OTel's dropped-span accounting).
 *
 * @example
 * const refusals = new FaultLog(logger, 'refusing OTLP requests');
 * refusals.observe(status === 503 ? reason : undefined);
 */
export class FaultLog {
  readonly #logger: Logger;
  readonly #what: string;
  readonly #now: () => number;
  #reason: string | undefined;
  #count = 0;
  #sinceMs = 0;

  /** `what` names the fault in both lines, e.g. `refusing OTLP requests`. */
  constructor(logger: Logger, what: string, now: () => number = Date.now) {
    this.#logger = logger;
    this.#what = what;
    this.#now = now;
  }

  /** True from the first fault until the recovery. */
  get failing(): boolean {
    return this.#reason !== undefined;
  }

  /** A fault (`reason`) or, with `undefined`, a success; `context` goes on a line that is written. */
  observe(reason: string | undefined, context: Record<string, unknown> = {}): void {
    if (reason === undefined) this.ok(context);
    else this.fault(reason, context);
  }

  /** One occurrence: written only when it begins an episode or changes its reason. */
  fault(reason: string, context: Record<string, unknown> = {}): void {
    if (this.#reason === reason) {
      this.#count++;
      return;
    }
    if (this.#reason === undefined) {
      this.#sinceMs = this.#now();
      this.#logger.warn({ ...context, reason }, `${this.#what}: ${reason}`);
    } else {
      this.#logger.warn({ ...context, reason, previous: this.#reason, occurrences: this.#count }, `${this.#what}: now ${reason}`);
    }
    this.#reason = reason;
    this.#count = 1;
  }

  /** A success: written only when it ends an episode, with its count and duration. */
  ok(context: Record<string, unknown> = {}): void {
    if (this.#reason === undefined) return;
    this.#logger.info(
      { ...context, reason: this.#reason, occurrences: this.#count, durationMs: this.#now() - this.#sinceMs },
      `${this.#what}: recovered`,
    );
    this.#reason = undefined;
    this.#count = 0;
  }
}
