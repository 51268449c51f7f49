import type { Step, ToolArgs } from '../normalize/step.ts';
import { captureGaps } from './capture-gaps.ts';
import type { Trajectory } from './trajectory.ts';

export interface TrajectoryJsonOptions {
  /**
   * Include llm steps' `input` (the prompt messages). Off by default: each LLM call repeats
   * the whole conversation so far, so prompts grow quadratically with a run's length and
   * would dominate the log; the analysis reads them in memory either way.
   */
  llmInput: boolean;
}

/**
 * One closed trajectory as the JSON object written one per line (README "Trajectories").
 * Times are decimal nanosecond strings; absent fields are omitted, never empty.
 */
export function trajectoryToJson(t: Trajectory, options: TrajectoryJsonOptions = { llmInput: false }): Record<string, unknown> {
  return {
    key: t.key,
    traceIds: t.traceIds,
    revision: t.revision,
    complete: t.complete,
    incompleteReasons: t.incompleteReasons,
    closedBy: t.closedBy,
    ...(t.refusedSpans > 0 ? { refusedSpans: t.refusedSpans } : {}),
    ...(t.conflicts.length > 0 ? { conflicts: t.conflicts } : {}),
    ...(t.sessionConflicts !== undefined && t.sessionConflicts.length > 0 ? { sessionConflicts: t.sessionConflicts } : {}),
    ...gapsField(t),
    steps: stepsToJson(t.steps, options),
  };
}

/** `captureGaps`: what the instrumentation did not record, by reason, with the span ids concerned. */
function gapsField(t: Trajectory): Record<string, unknown> {
  const gaps = captureGaps(t.steps);
  return gaps.length === 0 ? {} : { captureGaps: gaps };
}

function stepsToJson(steps: readonly Step[], options: TrajectoryJsonOptions): Record<string, unknown>[] {
  return steps.map((s) => stepToJson(s, options));
}

/**
 * One step. Facts derived from the LLM request a tool step answers (`linkRequests`) are marked
 * so they are never mistaken for captured ones: `toolCallIdDerived: true`, `args.source:
 * 'request'` (with the span's own text as `args.captured`).
 */
export function stepToJson(s: Step, options: TrajectoryJsonOptions = { llmInput: false }): Record<string, unknown> {
  const out: Record<string, unknown> = { id: s.id, traceId: s.traceId };
  if (s.parentId !== undefined) out.parentId = s.parentId;
  out.kind = s.kind;
  out.name = s.name;
  out.convention = s.convention;
  if (s.toolName !== undefined) out.toolName = s.toolName;
  if (s.toolCallId !== undefined) out.toolCallId = s.toolCallId;
  if (s.toolCallIdSource === 'request') out.toolCallIdDerived = true;
  if (s.args !== undefined) out.args = argsToJson(s.args);
  if (s.input !== undefined && (s.kind !== 'llm' || options.llmInput)) out.input = s.input;
  if (s.result !== undefined) out.result = s.result;
  if (s.error !== undefined) out.error = s.error;
  if (s.model !== undefined) out.model = s.model;
  if (s.agentName !== undefined) out.agentName = s.agentName;
  if (s.sessionId !== undefined) out.sessionId = s.sessionId;
  if (s.service !== undefined) out.service = s.service;
  if (s.unreadConvention !== undefined) out.unreadConvention = s.unreadConvention;
  out.startTime = s.startTimeUnixNano.toString();
  out.endTime = s.endTimeUnixNano.toString();
  out.statusCode = s.statusCode;
  return out;
}

/** `declared` is an input to the checks, not part of the line's documented shape. */
function argsToJson(args: ToolArgs): Record<string, unknown> {
  const out: Record<string, unknown> = { raw: args.raw };
  if (args.parsed !== undefined) out.parsed = args.parsed;
  if (args.recorded !== undefined) out.recorded = args.recorded;
  if (args.wrappedAt !== undefined) out.wrappedAt = args.wrappedAt;
  out.digest = args.digest;
  if (args.source !== undefined) out.source = args.source;
  if (args.captured !== undefined) out.captured = args.captured;
  if (args.capturedAs !== undefined) out.capturedAs = args.capturedAs;
  return out;
}
