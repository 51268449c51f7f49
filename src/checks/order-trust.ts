import { captureGaps } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';

/**
 * Whether the trajectory's timestamps contradict its span tree (a `clock-skew` capture gap):
 * then "before" and "after" read from them prove nothing, and the checks whose candidates rest
 * on order ("no gate before the send", "no later success") do not run.
 */
export function orderUntrusted(t: Trajectory): boolean {
  return captureGaps(t.steps).some((g) => g.reason === 'clock-skew');
}
