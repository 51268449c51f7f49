import type { CodeEvalHit as CodeEvalHitOf, PatternHit } from './hit.ts';
import type { SilenceReason } from './l0-check.ts';
import type { L0Pattern } from './registry.ts';

/** What the inline checks produce: pure data that `findings/` turns into findings. */

export { L0_PATTERNS, type L0Pattern } from './registry.ts';

/** An L0 pattern that, on a complete capture, did not look at everything it reads. */
export interface CheckSilence extends SilenceReason {
  pattern: L0Pattern;
}

/** A fired L0 pattern of a registered check (see `hit.ts`). */
export type CodeEvalHit = CodeEvalHitOf<L0Pattern>;

export type L0Hit = PatternHit<L0Pattern>;

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
