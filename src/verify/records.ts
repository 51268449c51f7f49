import type { AnalysisManifest } from '../findings/manifest-schema.ts';
import type { Finding } from '../findings/schema.ts';
import type { Audience } from '../findings/audience.ts';
import type { RecordLocation } from './violation.ts';

/** The part of a trajectory line (`trajectories.jsonl`, `trajectoryToJson`) verify reads. */
export interface TrajectoryLine {
  key: string;
  traceIds: string[];
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  closedBy?: string;
  refusedSpans?: number;
  conflicts?: unknown[];
  captureGaps?: { reason: string; spanIds: string[] }[];
  /** Each step's span and what the capture table's conditions read of it (`spansMayPlay`). */
  steps: { id: string; traceId: string; kind?: string; toolName?: string; agentName?: string }[];
}

/** A line of the closed-revision memory (`revisions/seg-*.jsonl`, `encodeRemembered`). */
export interface RememberedLine {
  n: number;
  key: string;
  revision: number;
}

/**
 * Where a findings stream was read and which view it holds: a local log or a topic, and the
 * audience its writer was configured with (an external stream holds stripped records).
 */
export interface FindingsSource {
  /** `findings.jsonl`, `alarms.jsonl` or `kafka:<topic>`: the report names it. */
  name: string;
  audience: Audience;
}

/** One record of a findings stream, where it was read. */
export type StreamRecord = { kind: 'finding'; record: Finding; at: RecordLocation } | { kind: 'manifest'; record: AnalysisManifest; at: RecordLocation };

/** One accepted traces request of the span write-ahead log: its spans, and whether the log released it. */
export interface WalRequest {
  seq: number;
  /** Below the log's release floor: finished (its trajectories closed, their output durable). */
  released: boolean;
  spans: { traceId: string; spanId: string }[];
  at: RecordLocation;
}

/** The key a record is about, for the report. */
export function keyOf(record: Finding | AnalysisManifest): string {
  return record.subject.trajectory_key;
}
