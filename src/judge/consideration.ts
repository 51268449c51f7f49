import type { WindowFate } from '../findings/manifest-schema.ts';

/** The judged part of one closed trajectory revision: whether the judge ran, and each window's fate. */
export interface JudgedPart {
  judge: 'enabled' | 'disabled';
  windows: WindowFate[];
}

/** What `consider` answers with the judge disabled: nothing asked for, nothing to wait for. */
export const JUDGE_DISABLED: JudgedPart = Object.freeze({ judge: 'disabled', windows: [] }) as JudgedPart;

/** What decides a fate later: the judged findings, a deferral at shutdown, an error. */
export type SettleFate = (fate: Pick<WindowFate, 'fate' | 'finding_ids'> & Partial<Pick<WindowFate, 'reason' | 'detail'>>) => void;

/**
 * The fates of one trajectory's windows while the judge decides them. Fates known at once
 * (refused, not sampled, replayed) are final when added; a queued window's fate is settled
 * when its findings have been handed on (or it was deferred). {@link outcome} is a value when
 * nothing is pending — the hot path allocates no promise — and otherwise a promise that
 * resolves, never rejects, once every pending fate is settled.
 */
export class Consideration {
  readonly #windows: WindowFate[] = [];
  #pending = 0;
  #sealed = false;
  #resolve: ((part: JudgedPart) => void) | undefined;

  /** A fate already decided. */
  add(fate: WindowFate): void {
    this.#windows.push(fate);
  }

  /** A fate decided later, by calling the returned function once (later calls are ignored). */
  pending(fate: Omit<WindowFate, 'fate' | 'finding_ids'>): SettleFate {
    // Until settled, the window is what it is in the queue: judged, findings still to come.
    const entry: WindowFate = { ...fate, fate: 'judged', finding_ids: [] };
    this.#windows.push(entry);
    this.#pending++;
    let settled = false;
    return (decided) => {
      if (settled) return;
      settled = true;
      entry.fate = decided.fate;
      entry.finding_ids = decided.finding_ids;
      if (decided.reason !== undefined) entry.reason = decided.reason;
      if (decided.detail !== undefined) entry.detail = decided.detail;
      this.#pending--;
      if (this.#sealed && this.#pending === 0) this.#resolve?.(this.#part());
    };
  }

  /** No more fates are added: the part now, or once the pending ones are settled. */
  outcome(): JudgedPart | Promise<JudgedPart> {
    this.#sealed = true;
    if (this.#pending === 0) return this.#part();
    return new Promise<JudgedPart>((resolve) => (this.#resolve = resolve));
  }

  #part(): JudgedPart {
    return { judge: 'enabled', windows: this.#windows };
  }
}
