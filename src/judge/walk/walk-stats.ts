import type { OutcomeCounts } from '../judge-stats.ts';

/** What the walk did, counted: `DecisionPoints.walkStats()`. Every refusal and deferral by reason. */
export interface WalkStats extends OutcomeCounts {
  /** Walks run (one per sampled trajectory revision while the walk is on). */
  walks: number;
  /** Walks that stopped after L1 by the stopping rule. */
  earlyExits: number;
  /** Layer and verifier invocations dispatched, by `L1`…`L4` and `verifier`. */
  calls: Record<string, number>;
  conflicts: number;
  /** Positive answers the verifier took down to escalate. */
  downgrades: number;
}

export function newWalkStats(): WalkStats {
  return { walks: 0, earlyExits: 0, calls: {}, replays: 0, refused: {}, deferred: {}, conflicts: 0, findings: 0, alarms: 0, downgrades: 0 };
}
