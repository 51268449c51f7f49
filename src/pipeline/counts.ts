import type { ContentEventStats } from '../assemble/assembler.ts';

export interface PipelineCounts {
  spansAccepted: number;
  spansRejected: number;
  trajectoriesClosed: number;
  /** Closed trajectories sent on to stage 2 (repartition) instead of analyzed here. */
  trajectoriesForwarded: number;
  findingsEmitted: number;
  manifestsEmitted: number;
}

/** Log records the pipeline did not hold for a step, by reason (what it held, the assembler counts). */
export interface LogCounts {
  /** Refused by the decoder (malformed ids), reported in the partial success. */
  refused: number;
  /** Not a GenAI content event (an application log): not analysis input. */
  notContentEvent: number;
  /** A content event without a trace and span id: reported in the partial success. */
  noSpanContext: number;
}

/** Every log-record outcome, the pipeline's and the assembler's together, for `trajwatch_logs_total`. */
export function logOutcomes(pipeline: LogCounts, assembler: ContentEventStats): Record<string, number> {
  return {
    refused: pipeline.refused,
    'not-content-event': pipeline.notContentEvent,
    'no-span-context': pipeline.noSpanContext,
    held: assembler.held,
    duplicate: assembler.duplicate,
    late: assembler.late,
    joined: assembler.joined,
    'no-new-facts': assembler.noNewFacts,
    'span-missing': assembler.spanMissing,
  };
}
