import { REFUSAL } from '../ingest/refusal.ts';
import type { JsonlLog } from './jsonl-log.ts';

/**
 * Why a local log cannot take more now: `unwritable` while its writes fail, `backlog` while more
 * than `maxPendingBytes` wait to be written; undefined when it can. The trajectory log and the
 * findings logs refuse by it, each with its own names (`refusal.ts`).
 */
export function logRefusal<R extends string>(log: JsonlLog, maxPendingBytes: number, reasons: { unwritable: R; backlog: R }): R | undefined {
  if (log.failure !== undefined) return reasons.unwritable;
  if (log.pendingBytes > maxPendingBytes) return reasons.backlog;
  return undefined;
}

/** The trajectory log's refusals. */
export const TRAJECTORY_LOG_REFUSALS = { unwritable: REFUSAL.trajectoryLogUnwritable, backlog: REFUSAL.trajectoryLogBacklog } as const;

/** The findings and alarms logs' refusals. */
export const FINDINGS_LOG_REFUSALS = { unwritable: REFUSAL.findingsLogUnwritable, backlog: REFUSAL.findingsLogBacklog } as const;
