/** What the inline checks produce: pure data that `findings/` turns into findings. */

export const L0_PATTERNS = [
  'error-output',
  'fault-passthrough',
  'malformed-structure',
  'unguarded-send',
  'out-of-order-gate',
] as const;

export type L0Pattern = (typeof L0_PATTERNS)[number];

/** An L0 pattern that, on a complete capture, did not look at everything it reads. */
export interface CheckSilence {
  pattern: L0Pattern;
  /** A capture-gap reason (`tool-call-not-captured`, `tool-name-not-captured`, ...). */
  reason: string;
  detail: string;
}

/** A fired L0 pattern: a candidate, never a verdict. Shape of the seed's `codeEvalHits`. */
export interface CodeEvalHit {
  pattern: L0Pattern;
  /** The step id (span id) the hit is anchored at. */
  anchor: string;
  /** A short, deterministic description of what matched. */
  detail: string;
}

export interface L0Hit extends CodeEvalHit {
  /** Every step the hit rests on, anchor first, as `{traceId, spanId}`. */
  evidence: { traceId: string; spanId: string }[];
}

/** A group of distinct physical attempts with the same tool name and canonical arguments. */
export interface RepetitionGroup {
  toolName: string;
  argsDigest: string;
  /** Number of distinct span ids. Always >= 2. */
  count: number;
  /** The attempts, in trajectory order. */
  attempts: { traceId: string; spanId: string }[];
}

/**
 * Exact tool repetition, a computed observation. `none-observed` is only possible from a
 * complete capture; an incomplete one with no repetition is `unavailable` with its reasons.
 */
export type RepetitionObservation =
  | { status: 'observed'; groups: RepetitionGroup[]; complete: boolean; excluded?: ExcludedAttempt[] }
  | { status: 'none-observed' }
  | { status: 'unavailable'; reasons: string[]; excluded?: ExcludedAttempt[] };

/** A span left out of the repetition count, and why (e.g. two payloads under its span id). */
export interface ExcludedAttempt {
  traceId: string;
  spanId: string;
  reason: string;
}

export interface CheckResults {
  l0: L0Hit[];
  repetition: RepetitionObservation;
  /**
   * The L0 patterns a complete capture's gaps kept from claiming absence (`checkSilences`):
   * their silence is not "none observed". Empty when nothing was silenced.
   */
  silenced: CheckSilence[];
}
