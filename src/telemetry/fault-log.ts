import type { Logger } from './logger.ts';

/** Default of `FaultLog`'s interval: at most one line of each kind (begins, changes, recoveries) per second. */
export const FAULT_LOG_INTERVAL_MS = 1_000;

type LineKind = 'begin' | 'change' | 'recover';

/**
 * Logs a fault that repeats (a refused request, a sink behind, a log that cannot be written)
 * once when it begins, once when its reason changes, and once when it ends, with how many
 * times it was seen and for how long — never once per repeat. The metrics count every
 * occurrence; this says when an episode began and ended (OTel's dropped-span accounting).
 *
 * Hysteresis: a state that flaps (refusing, accepting, refusing, ... many times a second) is
 * written at most once per kind of change per `intervalMs`. A change inside the interval is
 * held; when the interval ends, the state then is written if it differs from the one last
 * written, with how many changes were held (`flaps`).
 *
 * @example
 * const refusals = new FaultLog(logger, 'refusing OTLP requests');
 * refusals.observe(status === 503 ? reason : undefined);
 */
export class FaultLog {
  readonly #logger: Logger;
  readonly #what: string;
  readonly #now: () => number;
  readonly #intervalMs: number;
  /** The state now: the fault's reason, or undefined when healthy. */
  #reason: string | undefined;
  /** The state the log last said. */
  #written: string | undefined;
  /** Occurrences since the last line (the one that began it included). */
  #count = 0;
  #sinceMs = 0;
  /** Changes of state held since the last line. */
  #flaps = 0;
  #context: Record<string, unknown> = {};
  readonly #lastMs: Record<LineKind, number> = { begin: -Infinity, change: -Infinity, recover: -Infinity };
  #timer: NodeJS.Timeout | undefined;

  /** `what` names the fault in every line, e.g. `refusing OTLP requests`. */
  constructor(logger: Logger, what: string, now: () => number = Date.now, intervalMs = FAULT_LOG_INTERVAL_MS) {
    this.#logger = logger;
    this.#what = what;
    this.#now = now;
    this.#intervalMs = intervalMs;
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
    this.#count++;
    if (this.#reason === reason) return;
    if (this.#reason === undefined && this.#written === undefined) this.#sinceMs = this.#now();
    this.#reason = reason;
    this.#changed(context);
  }

  /** A success: written only when it ends an episode, with its count and duration. */
  ok(context: Record<string, unknown> = {}): void {
    if (this.#reason === undefined) return;
    this.#reason = undefined;
    this.#changed(context);
  }

  #kind(): LineKind | undefined {
    if (this.#reason === this.#written) return undefined;
    if (this.#written === undefined) return 'begin';
    return this.#reason === undefined ? 'recover' : 'change';
  }

  #changed(context: Record<string, unknown>): void {
    this.#context = context;
    const kind = this.#kind();
    if (kind !== undefined && this.#now() - this.#lastMs[kind] >= this.#intervalMs) return this.#write(kind);
    this.#flaps++;
    if (this.#timer !== undefined) return;
    const since = kind === undefined ? Math.max(...Object.values(this.#lastMs)) : this.#lastMs[kind];
    this.#timer = setTimeout(() => this.#settle(), Math.max(0, since + this.#intervalMs - this.#now()));
    this.#timer.unref();
  }

  /** The interval ended: the state now is written if it is not the one last said. */
  #settle(): void {
    this.#timer = undefined;
    const kind = this.#kind();
    if (kind === undefined) return;
    this.#write(kind);
  }

  #write(kind: LineKind): void {
    const flaps = this.#flaps > 0 ? { flaps: this.#flaps } : {};
    const context = this.#context;
    if (kind === 'begin') {
      this.#logger.warn({ ...context, reason: this.#reason, ...flaps }, `${this.#what}: ${this.#reason}`);
      this.#count = 1;
    } else if (kind === 'change') {
      this.#logger.warn(
        { ...context, reason: this.#reason, previous: this.#written, occurrences: this.#count - 1, ...flaps },
        `${this.#what}: now ${this.#reason}`,
      );
      this.#count = 1;
    } else {
      this.#logger.info(
        { ...context, reason: this.#written, occurrences: this.#count, durationMs: this.#now() - this.#sinceMs, ...flaps },
        `${this.#what}: recovered`,
      );
      this.#count = 0;
    }
    this.#written = this.#reason;
    this.#flaps = 0;
    this.#lastMs[kind] = this.#now();
  }
}
