import type { CaptureConflict, IncompleteReason, SessionConflict } from './trajectory.ts';

/**
 * What a trajectory's next revision inherits from the revisions before it, whether or not
 * their steps are still kept: a capture known to have lost, refused, conflicted or cut spans
 * stays known so, so no later revision can claim an absence the capture cannot support.
 */
export interface Inherited {
  /** Inherited by every later revision. */
  reasons: IncompleteReason[];
  /** Inherited only by a revision opened after the steps were let go (see {@link WITH_STEPS}). */
  reasonsWithoutSteps: IncompleteReason[];
  conflicts: CaptureConflict[];
  sessionConflicts: SessionConflict[];
  refusedSpans: number;
}

/**
 * Reasons about the shape of the steps at hand, or about how this revision closed: recomputed
 * at each close from the revision's own (merged) steps. A late root can heal `root-not-seen`;
 * a late parent, `orphan-parents`. When the earlier steps were let go, the revision says
 * `previous-revision-not-retained` instead (inherited like every other reason).
 */
const RECOMPUTED: ReadonlySet<IncompleteReason> = new Set(['root-not-seen', 'orphan-parents', 'idle-timeout', 'end-of-input']);

/**
 * Recomputed while the steps are kept, since what they are about is kept with them; inherited
 * once the steps were let go: `content-without-span` (the held content goes with the steps, so
 * a late span can no longer join it).
 */
const WITH_STEPS: ReadonlySet<IncompleteReason> = new Set(['content-without-span']);

/** Splits a closed revision's reasons into what every later revision inherits and what only one without the steps does. */
export function inheritedReasons(reasons: readonly IncompleteReason[]): Pick<Inherited, 'reasons' | 'reasonsWithoutSteps'> {
  return {
    reasons: reasons.filter((r) => !RECOMPUTED.has(r) && !WITH_STEPS.has(r)),
    reasonsWithoutSteps: reasons.filter((r) => WITH_STEPS.has(r)),
  };
}
