import type { CaptureConflict, IncompleteReason, Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';

/** Where stage 1 sends a closed trace that names a session (`repartition/forwarder.ts`). */
export interface TrajectoryForward {
  /**
   * Takes `t` (resolves once the broker acknowledged it, never rejects: it retries) or
   * returns undefined, and `t` is analyzed here. `captured`: its steps as captured.
   */
  forward(t: Trajectory, captured: () => Step[]): Promise<void> | undefined;
  /** A reason to refuse input now (in-flight bytes at their bound), or undefined. */
  backpressure(): string | undefined;
}

/** One closed stage-1 trace as stage 2 takes it from the internal topic (`repartition/record.ts`). */
export interface ForwardedTrace {
  sessionId: string;
  traceId: string;
  steps: readonly Step[];
  capture: { incompleteReasons: readonly IncompleteReason[]; conflicts: readonly CaptureConflict[]; refusedSpans: number };
}
