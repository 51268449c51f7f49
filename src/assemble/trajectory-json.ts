import type { Step } from '../normalize/step.ts';
import type { Trajectory } from './trajectory.ts';

/**
 * One closed trajectory as the JSON object written one per line (README "Trajectory lines").
 * Times are decimal nanosecond strings; absent fields are omitted, never empty.
 */
export function trajectoryToJson(t: Trajectory): Record<string, unknown> {
  return {
    key: t.key,
    traceIds: t.traceIds,
    revision: t.revision,
    complete: t.complete,
    incompleteReasons: t.incompleteReasons,
    closedBy: t.closedBy,
    ...(t.refusedSpans > 0 ? { refusedSpans: t.refusedSpans } : {}),
    ...(t.conflicts.length > 0 ? { conflicts: t.conflicts } : {}),
    steps: t.steps.map(stepToJson),
  };
}

export function stepToJson(s: Step): Record<string, unknown> {
  const out: Record<string, unknown> = { id: s.id, traceId: s.traceId };
  if (s.parentId !== undefined) out.parentId = s.parentId;
  out.kind = s.kind;
  out.name = s.name;
  out.convention = s.convention;
  if (s.toolName !== undefined) out.toolName = s.toolName;
  if (s.toolCallId !== undefined) out.toolCallId = s.toolCallId;
  if (s.args !== undefined) {
    out.args = s.args.parsed === undefined ? { raw: s.args.raw, digest: s.args.digest } : s.args;
  }
  if (s.input !== undefined) out.input = s.input;
  if (s.result !== undefined) out.result = s.result;
  if (s.error !== undefined) out.error = s.error;
  if (s.model !== undefined) out.model = s.model;
  if (s.agentName !== undefined) out.agentName = s.agentName;
  if (s.sessionId !== undefined) out.sessionId = s.sessionId;
  if (s.service !== undefined) out.service = s.service;
  out.startTime = s.startTimeUnixNano.toString();
  out.endTime = s.endTimeUnixNano.toString();
  out.statusCode = s.statusCode;
  return out;
}
