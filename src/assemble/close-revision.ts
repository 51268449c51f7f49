import { sortSmall } from '../core/sort-small.ts';
import { withTexts } from '../normalize/step-texts.ts';
import { linkRequests } from './link-requests.ts';
import type { JoinCounts } from './log-join.ts';
import { hasOrphans, type OpenBuffer } from './open-buffer.ts';
import { type Inherited, inheritedReasons } from './revision-inheritance.ts';
import { treeOrdered } from './clock-skew.ts';
import { compareSteps } from './step-order.ts';
import type { Trajectory } from './trajectory.ts';

/** Why a trajectory was closed. */
export type CloseCause = 'quiet-after-root' | 'idle-timeout' | 'span-limit' | 'end-of-input' | 'shutdown';

/** One closed revision: what is emitted, what later revisions inherit, and what its held content did. */
export interface ClosedRevision {
  trajectory: Trajectory;
  inherited: Inherited;
  /** How the buffer's held content events joined their steps; undefined when it held none. */
  joined: JoinCounts | undefined;
}

/**
 * The trajectory an open buffer closes as: held content joined into its steps, steps in
 * trajectory order, and every reason it is incomplete — from what it recorded while open, from
 * the shape of its steps (no root, orphan parents) and from how it closed.
 */
export function closeRevision(buffer: OpenBuffer, cause: CloseCause): ClosedRevision {
  const reasons = new Set(buffer.reasons);
  const joined = buffer.held?.joinInto(buffer.steps);
  if (joined !== undefined && joined.spanMissing > 0) reasons.add('content-without-span');
  // Timestamps order the steps unless they contradict the span tree (clock skew): then the tree does.
  const steps = treeOrdered(sortSmall([...buffer.steps.values()], compareSteps), compareSteps);
  if (!buffer.rootSeen) reasons.add('root-not-seen');
  if (hasOrphans(buffer.steps)) reasons.add('orphan-parents');
  if (cause === 'idle-timeout') reasons.add('idle-timeout');
  if (cause === 'shutdown') reasons.add('shutdown');
  if (cause === 'end-of-input' && !buffer.rootSeen) reasons.add('end-of-input');
  const incompleteReasons = [...reasons].sort();
  const inherited: Inherited = {
    ...inheritedReasons(incompleteReasons),
    conflicts: buffer.conflicts,
    sessionConflicts: buffer.sessionConflicts,
    refusedSpans: buffer.refusedSpans,
  };
  const trajectory: Trajectory = {
    key: buffer.key,
    traceIds: [...buffer.traceIds].sort(),
    revision: buffer.revision,
    complete: incompleteReasons.length === 0,
    incompleteReasons,
    // The checks see what the requests tell of the tool steps; the retained steps stay as captured.
    steps: linkRequests(withTexts(steps)),
    conflicts: buffer.conflicts,
    ...(buffer.sessionConflicts.length > 0 ? { sessionConflicts: buffer.sessionConflicts } : {}),
    refusedSpans: buffer.refusedSpans,
    closedBy: cause,
  };
  return { trajectory, inherited, joined };
}
