import { compareCodeUnits } from '../core/sort-small.ts';
import type { Step } from '../normalize/step.ts';
import { absorb, isEmptied, moveTrace, type OpenBuffer } from './open-buffer.ts';

/** What session keying reads and changes of the assembler's open trajectories. */
export interface OpenTrajectories {
  /** Open trajectories by key. */
  readonly open: Map<string, OpenBuffer>;
  /** Which trajectory key a trace belongs to (a session can span many traces). */
  readonly traceKey: Map<string, string>;
  /** The open trajectory of `key`, opened (as the next revision of a closed one) when there is none. */
  bufferOf(key: string, activityMs: number): OpenBuffer;
  /** Keeps `buffer`'s close deadline live after it changed. */
  schedule(buffer: OpenBuffer): void;
}

/**
 * The open trajectory a step joins when trajectories are keyed by session: its trace's key so
 * far, or its session's once a span of the trace names one (the trace's spans that came
 * before join the session too). A trace naming two sessions is a session conflict.
 */
export function sessionBufferFor(trajectories: OpenTrajectories, step: Step, activityMs: number): OpenBuffer {
  const byTrace = trajectories.traceKey.get(step.traceId);
  if (step.sessionId !== undefined && byTrace !== undefined && byTrace !== step.traceId && byTrace !== step.sessionId) {
    return sessionConflict(trajectories, step, byTrace, activityMs);
  }
  // A trace keyed by its own id so far joins its session once a span names one.
  const joinsSession = step.sessionId !== undefined && (byTrace === undefined || byTrace === step.traceId);
  const key = joinsSession ? step.sessionId! : (byTrace ?? step.traceId);
  if (byTrace !== key) trajectories.traceKey.set(step.traceId, key);
  const buffer = trajectories.bufferOf(key, activityMs);
  if (joinsSession && byTrace === step.traceId) mergeTraceInto(trajectories, step.traceId, buffer);
  return buffer;
}

/**
 * A span of a trace that joined session `joined` names another session. The trace goes to
 * the smaller id (code-unit order), so the outcome does not depend on which span came first
 * while both are open; its spans already buffered under the other id move with it. The
 * trajectory it joins records the conflict and is incomplete: which run the trace belongs
 * to is unknown, so no absence is claimed from it.
 */
function sessionConflict(trajectories: OpenTrajectories, step: Step, joined: string, activityMs: number): OpenBuffer {
  const named = step.sessionId!;
  const key = compareCodeUnits(named, joined) < 0 ? named : joined;
  const target = trajectories.bufferOf(key, activityMs);
  if (key !== joined) moveTraceBetween(trajectories, step.traceId, joined, target);
  trajectories.traceKey.set(step.traceId, key);
  const sessionIds: [string, string] = key === named ? [named, joined] : [joined, named];
  target.sessionConflicts.push({ traceId: step.traceId, spanId: step.id, sessionIds });
  target.reasons.add('session-conflict');
  return target;
}

/** Moves one trace's buffered spans (and what is recorded about them) from open trajectory `fromKey` to `target`. */
function moveTraceBetween(trajectories: OpenTrajectories, traceId: string, fromKey: string, target: OpenBuffer): void {
  const source = trajectories.open.get(fromKey);
  if (source === undefined || source === target) return;
  moveTrace(source, target, traceId);
  if (isEmptied(source)) trajectories.open.delete(fromKey);
  trajectories.schedule(target);
}

/** Spans of a trace that arrived before the one naming its session join the session. */
function mergeTraceInto(trajectories: OpenTrajectories, traceId: string, target: OpenBuffer): void {
  const source = trajectories.open.get(traceId);
  if (source === undefined || source === target) return;
  absorb(source, target);
  for (const t of source.traceIds) trajectories.traceKey.set(t, target.key);
  trajectories.open.delete(traceId);
  trajectories.schedule(target);
}
