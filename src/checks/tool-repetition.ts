import type { Trajectory } from '../assemble/trajectory.ts';
import type { ExcludedAttempt, RepetitionGroup, RepetitionObservation } from './check-result.ts';
import { compareCodeUnits } from '../normalize/sort-small.ts';

/** Reason text for a span refused because two different payloads arrived under its id. */
export const CONFLICT_REASON = 'capture-conflict';
/** Reason a tool call cannot join a group: its arguments were not captured. */
export const ARGS_NOT_CAPTURED_REASON = 'tool-args-not-captured';
/** Reason a tool call cannot join a group: its tool name was not captured. */
export const NAME_NOT_CAPTURED_REASON = 'tool-name-not-captured';

/**
 * Exact tool repetition: tool calls with the same tool name and the same canonical-argument
 * digest (`args.digest`, computed by normalize: reordered keys and whitespace do not matter),
 * counted over the steps, which must be distinct spans (`runChecks` passes `withDistinctSteps`).
 *
 * - A span id under a capture conflict is refused: not counted, listed in `excluded`.
 * - A call whose arguments or tool name were not captured joins no group: absent arguments
 *   or names are unknown, not equal. It also makes absence unprovable.
 * - `none-observed` needs a complete capture with every tool call's arguments and no
 *   conflict; otherwise no repetition is `unavailable` with the reasons.
 * Groups come in trajectory order of their first attempt; attempts in trajectory order.
 */
export function toolRepetition(t: Trajectory): RepetitionObservation {
  const conflicted = new Set(t.conflicts.map((c) => `${c.traceId}/${c.spanId}`));
  const excluded: ExcludedAttempt[] = t.conflicts.length === 0 ? [] : excludedAttempts(t.conflicts);

  const groups = new Map<string, RepetitionGroup>();
  let argsMissing = false;
  let nameMissing = false;
  for (const step of t.steps) {
    if (step.kind !== 'tool') continue;
    if (step.toolName === undefined) {
      nameMissing = true;
      continue;
    }
    if (conflicted.size > 0 && conflicted.has(`${step.traceId}/${step.id}`)) continue;
    if (step.args === undefined) {
      argsMissing = true;
      continue;
    }
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
  if (argsMissing) reasons.push(ARGS_NOT_CAPTURED_REASON);
  if (nameMissing) reasons.push(NAME_NOT_CAPTURED_REASON);
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
