import { captureGaps, missingToolCalls, type CaptureGap } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';

/** How a limitation names a requested call whose request carried no tool name. */
export const UNNAMED_TOOL = 'unnamed-tool';

/**
 * The capture gaps that touch a window: every gap of the trajectory (`captureGaps`) that
 * concerns a step the window could have held, so that nothing the window says of itself rests
 * on a capture that hid part of it.
 *
 * - A gap on steps (a tool name, arguments or result not captured, an unread convention) touches
 *   the window when one of those steps is in it; `spanIds` keeps those.
 * - A requested call with no tool span (`tool-call-not-captured`) touches it when the hidden
 *   call could have run inside the window: it would have started at or after its request
 *   (`matchRequestedToolCalls`), so a request by an llm step that started no later than the
 *   window ended, inside the window or before it, touches it. `spanIds` are those llm steps,
 *   `toolNames` the names they asked for.
 * - `clock-skew` touches every window: which steps a window holds is read from their order.
 *
 * Returned in `captureGaps` order. Pure.
 */
export function windowGaps(t: Trajectory, inWindow: (step: Step) => boolean, endUnixNano: bigint): CaptureGap[] {
  const gaps = captureGaps(t.steps);
  if (gaps.length === 0) return [];
  const byId = new Map<string, Step[]>();
  for (const s of t.steps) {
    const list = byId.get(s.id);
    if (list === undefined) byId.set(s.id, [s]);
    else list.push(s);
  }
  const held = (spanId: string) => (byId.get(spanId) ?? []).some(inWindow);
  const out: CaptureGap[] = [];
  for (const gap of gaps) {
    if (gap.reason === 'clock-skew') {
      out.push(gap);
      continue;
    }
    if (gap.reason === 'tool-call-not-captured') {
      const touching = touchingRequests(t, endUnixNano);
      if (touching !== undefined) out.push(touching);
      continue;
    }
    const spanIds = gap.spanIds.filter(held);
    if (spanIds.length > 0) out.push({ ...gap, spanIds });
  }
  return out;
}

/** The missing requested calls whose hidden call could have started by `endUnixNano`, as one gap. */
function touchingRequests(t: Trajectory, endUnixNano: bigint): CaptureGap | undefined {
  const spanIds: string[] = [];
  const names: string[] = [];
  for (const call of missingToolCalls(t.steps)) {
    const llm = t.steps[call.llmIndex]!;
    if (llm.startTimeUnixNano > endUnixNano) continue;
    if (spanIds[spanIds.length - 1] !== llm.id) spanIds.push(llm.id);
    const name = call.name ?? UNNAMED_TOOL;
    if (!names.includes(name)) names.push(name);
  }
  if (spanIds.length === 0) return undefined;
  return { reason: 'tool-call-not-captured', spanIds, toolNames: names };
}

/**
 * What the judge is told of the gaps touching a window (`TraceWindow.limitations`): a missing
 * requested call by the tool it named (`tool-call-not-captured:send_email`), a gap on a step
 * by the event that shows it (`tool-args-not-captured:e2`), clock skew as `clock-skew`.
 */
export function gapLimitations(gaps: readonly CaptureGap[], eventIdOf: (spanId: string) => string | undefined): string[] {
  const out: string[] = [];
  for (const gap of gaps) {
    if (gap.reason === 'tool-call-not-captured') {
      for (const name of gap.toolNames ?? [UNNAMED_TOOL]) out.push(`${gap.reason}:${name}`);
    } else if (gap.reason === 'clock-skew') {
      out.push(gap.reason);
    } else {
      for (const id of gap.spanIds) {
        const event = eventIdOf(id);
        if (event !== undefined) out.push(`${gap.reason}:${event}`);
      }
    }
  }
  return out;
}
