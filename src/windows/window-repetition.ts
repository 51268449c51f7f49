import type { Trajectory } from '../assemble/trajectory.ts';
import type { RepetitionObservation } from '../checks/check-result.ts';
import { hidingKinds } from '../checks/capture-table.ts';
import { toolRepetition } from '../checks/tool-repetition.ts';
import { toolRepetitionHiddenBy } from '../checks/tool-repetition-hidden-by.ts';
import { spanUri } from '../core/evidence-ref.ts';
import type { Step } from '../normalize/step.ts';
import { windowGaps } from './window-gaps.ts';
import type { TraceWindow } from './window.ts';

/**
 * The gaps that make a window's "no repetition" unprovable: those tool repetition's row of the
 * capture table lists, and clock skew, since which steps a window holds is read from order.
 */
const WINDOW_REPETITION_HIDDEN_BY: ReadonlySet<string> = new Set([...hidingKinds(toolRepetitionHiddenBy), 'clock-skew']);

/**
 * Exact tool repetition among a window's own steps, by the inline rule (`toolRepetition`) run
 * over them: presence from any capture (≥ 2 attempts of one group inside the window); absence
 * (`none-observed`) only when the trajectory is complete, every tool call of the window has its
 * name and arguments captured, none under a capture conflict, and no capture gap that hides
 * repetition touches the window (`windowGaps`: a requested call missing before it, too).
 * Conflicts on spans outside the window do not touch it.
 */
export function windowRepetition(t: Trajectory, w: TraceWindow): RepetitionObservation {
  const uris = new Set<string>();
  for (const e of w.events) for (const r of e.evidenceRefs) uris.add(r.uri);
  const inWindow = (traceId: string, spanId: string) => uris.has(spanUri(traceId, spanId));
  const steps = t.steps.filter((s) => inWindow(s.traceId, s.id));
  const own = toolRepetition({ ...t, steps, conflicts: t.conflicts.filter((c) => inWindow(c.traceId, c.spanId)) });
  const inherited = windowGaps(t, (s: Step) => inWindow(s.traceId, s.id), lastEnd(steps))
    .map((g) => g.reason)
    .filter((reason) => WINDOW_REPETITION_HIDDEN_BY.has(reason));
  if (inherited.length === 0) return own;
  if (own.status === 'observed') return { ...own, complete: false };
  const reasons = own.status === 'unavailable' ? [...own.reasons] : [];
  for (const reason of inherited) if (!reasons.includes(reason)) reasons.push(reason);
  return own.status === 'unavailable' ? { ...own, reasons } : { status: 'unavailable', reasons };
}

function lastEnd(steps: readonly Step[]): bigint {
  let end = 0n;
  for (const s of steps) if (s.endTimeUnixNano > end) end = s.endTimeUnixNano;
  return end;
}
