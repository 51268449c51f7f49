import type { Trajectory } from '../assemble/trajectory.ts';
import { captureGaps, type CaptureGapReason } from '../assemble/capture-gaps.ts';
import type { ExcludedAttempt, RepetitionGroup, RepetitionObservation } from './check-result.ts';
import { hidingKinds } from './capture-table.ts';
import { toolRepetitionHiddenBy } from './tool-repetition-hidden-by.ts';
import { compareCodeUnits } from '../core/sort-small.ts';

/** Reason text for a span refused because two different payloads arrived under its id. */
export const CONFLICT_REASON = 'capture-conflict';
/** The capture gaps (`captureGaps`) that make "no repetition" unprovable: the row's hiding kinds. */
const GAPS_HIDING_REPETITION: ReadonlySet<CaptureGapReason> = new Set(hidingKinds(toolRepetitionHiddenBy));

/**
 * Exact tool repetition: tool calls with the same tool name and the same canonical-argument
 * digest (`args.digest`, computed by normalize: reordered keys and whitespace do not matter),
 * counted over the steps, which must be distinct spans (`runChecks` passes `withDistinctSteps`).
 *
 * - A span id under a capture conflict is refused: not counted, listed in `excluded`.
 * - A call whose arguments or tool name were not captured joins no group: absent arguments
 *   or names are unknown, not equal. It also makes absence unprovable.
 * - `none-observed` needs a complete capture with no capture gap that hides repetition
 *   (`GAPS_HIDING_REPETITION`) and no conflict; otherwise no repetition is `unavailable` with
 *   the reasons (the gap reasons in `captureGaps` order).
 * Groups come in trajectory order of their first attempt; attempts in trajectory order.
 */
export function toolRepetition(t: Trajectory): RepetitionObservation {
  const conflicted = new Set(t.conflicts.map((c) => `${c.traceId}/${c.spanId}`));
  const excluded: ExcludedAttempt[] = t.conflicts.length === 0 ? [] : excludedAttempts(t.conflicts);

  const groups = new Map<string, RepetitionGroup>();
  for (const step of t.steps) {
    if (step.kind !== 'tool' || step.toolName === undefined || step.args === undefined) continue;
    if (conflicted.size > 0 && conflicted.has(`${step.traceId}/${step.id}`)) continue;
    const key = `${step.toolName}\u0000${step.args.digest}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { toolName: step.toolName, argsDigest: step.args.digest, count: 0, attempts: [] };
      groups.set(key, group);
    }
    group.count++;
    group.attempts.push({ traceId: step.traceId, spanId: step.id });
  }

  const repeated: RepetitionGroup[] = [];
  for (const g of groups.values()) if (g.count >= 2) repeated.push(g);

  const reasons: string[] = [...t.incompleteReasons];
  if (!t.complete && reasons.length === 0) reasons.push('incomplete');
  for (const gap of captureGaps(t.steps)) if (GAPS_HIDING_REPETITION.has(gap.reason)) reasons.push(gap.reason);
  if (excluded.length > 0) reasons.push(CONFLICT_REASON);

  if (repeated.length > 0) {
    const observed: RepetitionObservation = { status: 'observed', groups: repeated, complete: reasons.length === 0 };
    if (excluded.length > 0) observed.excluded = excluded;
    return observed;
  }
  if (reasons.length === 0) return { status: 'none-observed' };
  const unavailable: RepetitionObservation = { status: 'unavailable', reasons };
  if (excluded.length > 0) unavailable.excluded = excluded;
  return unavailable;
}

/** Conflicted spans as excluded attempts, once each, sorted by trace and span id. */
function excludedAttempts(conflicts: Trajectory['conflicts']): ExcludedAttempt[] {
  return [...conflicts]
    .sort((a, b) => compareCodeUnits(a.traceId, b.traceId) || compareCodeUnits(a.spanId, b.spanId))
    .map((c) => ({ traceId: c.traceId, spanId: c.spanId, reason: CONFLICT_REASON }))
    .filter((e, i, all) => i === 0 || e.spanId !== all[i - 1]!.spanId || e.traceId !== all[i - 1]!.traceId);
}
