/** Which part of the judge met an unexpected fault; `answer-format`: the server refused `judge.client.answerFormat`. */
export type FaultPart = 'ledger' | 'emit' | 'on-call' | 'judge' | 'label-windows' | 'answer-format';
/** `stats().faults` keys: the parts, and `listener` for a fault listener that threw. */
export type FaultCount = FaultPart | 'listener';

/**
 * An unexpected fault, as a structured event for a logger. Faults are never thrown at the
 * caller: the judge records the window's fate and carries on. `first` is true for the first
 * fault of its part since open, so a logger can log the first occurrence and not every repeat.
 */
export interface JudgeFault {
  event: 'judge-fault';
  part: FaultPart;
  first: boolean;
  message: string;
  error: unknown;
}

export type OnFault = (fault: JudgeFault) => void;

/**
 * Reports faults to `onFault` (every one) and to the older `onError` (every error). With
 * neither, faults are only counted (`stats().faults`): nothing writes to the process's streams
 * on its own — the logger is the caller's to inject. A listener that throws is counted as a
 * `listener` fault and not told of it: a fault report must not become a loop of faults.
 */
export class FaultReporter {
  readonly #onFault: OnFault | undefined;
  readonly #onError: ((err: unknown) => void) | undefined;
  readonly #counts: Record<string, number>;

  constructor(counts: Record<string, number>, onFault?: OnFault, onError?: (err: unknown) => void) {
    this.#counts = counts;
    this.#onFault = onFault;
    this.#onError = onError;
  }

  report(part: FaultPart, error: unknown): void {
    const first = (this.#counts[part] ?? 0) === 0;
    this.#counts[part] = (this.#counts[part] ?? 0) + 1;
    const message = (error as Error)?.message ?? String(error);
    try {
      this.#onError?.(error);
      this.#onFault?.({ event: 'judge-fault', part, first, message, error });
    } catch {
      this.#counts.listener = (this.#counts.listener ?? 0) + 1;
    }
  }
}
