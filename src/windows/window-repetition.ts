import type { Trajectory } from '../assemble/trajectory.ts';
import type { RepetitionObservation } from '../checks/check-result.ts';
import { toolRepetition } from '../checks/tool-repetition.ts';
import { spanUri } from '../core/evidence-ref.ts';
import type { TraceWindow } from './window.ts';

/**
 * Exact tool repetition among a window's own steps, by the inline rule (`toolRepetition`) run
 * over them: presence from any capture (≥ 2 attempts of one group inside the window); absence
 * (`none-observed`) only when the trajectory is complete and every tool call of the window has
 * its name and arguments captured, none under a capture conflict. Conflicts on spans outside
 * the window do not touch it.
 */
export function windowRepetition(t: Trajectory, w: TraceWindow): RepetitionObservation {
  const uris = new Set<string>();
  for (const e of w.events) for (const r of e.evidenceRefs) uris.add(r.uri);
  const inWindow = (traceId: string, spanId: string) => uris.has(spanUri(traceId, spanId));
  return toolRepetition({
    ...t,
    steps: t.steps.filter((s) => inWindow(s.traceId, s.id)),
    conflicts: t.conflicts.filter((c) => inWindow(c.traceId, c.spanId)),
  });
}
