import type { Step } from '../normalize/step.ts';

/**
 * Capture artefacts the analysis read past, by reason: what the instrumentation recorded in a
 * form that is its own, not the agent's, and that the LLM request confirmed (`linkRequests`,
 * `confirmedCapture`). Not gaps (nothing is missing) and not findings (the agent did nothing
 * wrong); listed in the manifest's `capture.notes` so that no reading is silent.
 *
 * - `args-python-literal`: a tool step's arguments were captured as a Python literal
 *   (`{'city': 'Lisbon'}`) equal to the request's JSON arguments.
 * - `args-wrapped`: a tool step's arguments were captured inside a framework's wrapper (a
 *   callback envelope, an argument list); the inner arguments, equal to the request's, were read.
 */
export type CaptureNoteReason = 'args-python-literal' | 'args-wrapped';

export const CAPTURE_NOTE_REASONS: readonly CaptureNoteReason[] = ['args-python-literal', 'args-wrapped'];

export interface CaptureNote {
  reason: CaptureNoteReason;
  /** Tool steps concerned, at least 1. */
  count: number;
  detail: string;
}

const DETAIL: Record<CaptureNoteReason, string> = {
  'args-python-literal': "tool arguments captured as a Python literal, not JSON, equal to the request's JSON arguments: read from the request",
  'args-wrapped': "tool arguments captured inside the framework's wrapper: read as the inner arguments, which equal the request's",
};

/** The notes of a trajectory's steps, in the order of `CAPTURE_NOTE_REASONS`; empty when none. Pure. */
export function captureNotes(steps: readonly Step[]): CaptureNote[] {
  const counts = new Map<CaptureNoteReason, number>();
  for (const s of steps) {
    if (s.kind !== 'tool' || s.args === undefined) continue;
    // A wrapper whose inner arguments were themselves a Python literal counts under both.
    if (s.args.capturedAs === 'python-literal') counts.set('args-python-literal', (counts.get('args-python-literal') ?? 0) + 1);
    if (s.args.recorded === 'wrapped') counts.set('args-wrapped', (counts.get('args-wrapped') ?? 0) + 1);
  }
  return CAPTURE_NOTE_REASONS.flatMap((reason) => {
    const count = counts.get(reason);
    return count === undefined ? [] : [{ reason, count, detail: DETAIL[reason] }];
  });
}
