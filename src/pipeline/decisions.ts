import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import type { Finding } from '../findings/schema.ts';
import type { JudgedPart } from '../judge/consideration.ts';

/** What the pipeline needs of the judge (`judge/decision-points.ts`). */
export interface Decisions {
  /**
   * Never blocks, never throws: samples windows and queues judge calls within budget. Returns
   * every window's fate — at once when nothing was queued, else a promise (never rejected)
   * that resolves after the queued windows' findings went to `emitJudged` or were deferred.
   */
  consider(t: Trajectory, checks: CheckResults, inlineFindings: readonly Finding[]): JudgedPart | Promise<JudgedPart>;
  /** Waits for the calls in flight (end of a replay: every queued window is judged). */
  drain(): Promise<void>;
  /** Shutdown begins: windows from here on are recorded as deferred, never paid for. */
  beginShutdown(): void;
  /** Shutdown: queued windows are recorded as deferred and calls in flight are cancelled. */
  close(): Promise<void>;
}
