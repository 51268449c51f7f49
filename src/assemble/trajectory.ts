import type { Step } from '../normalize/step.ts';

/** Why a trajectory is not a complete capture. Checks read these: see DESIGN.md honesty rules. */
export type IncompleteReason =
  | 'root-not-seen'
  | 'orphan-parents'
  | 'span-limit'
  | 'byte-limit'
  | 'refused-spans'
  | 'idle-timeout'
  | 'end-of-input'
  | 'shutdown'
  | 'previous-revision-not-retained'
  /** Keyed by trace (Kafka source): other traces of the span's session may sit on other partitions. */
  | 'partitioned-session'
  /** A content event (OTLP log record) named a span that never arrived: that span is missing. */
  | 'content-without-span';

/** Two different payloads arrived under one span id; the first is kept, the second recorded. */
export interface CaptureConflict {
  traceId: string;
  spanId: string;
  /** sha256 hex of the kept and of the refused payload. */
  keptDigest: string;
  refusedDigest: string;
}

export interface Trajectory {
  /** Conversation/session id when present, else the trace id. */
  key: string;
  traceIds: string[];
  /** 1 for the first emission; a span arriving after close opens revision + 1. */
  revision: number;
  complete: boolean;
  incompleteReasons: IncompleteReason[];
  /** Ordered by start time, then end time, then span id. */
  steps: Step[];
  conflicts: CaptureConflict[];
  /** Spans refused for this key (span limit, invalid) — counted, never silently lost. */
  refusedSpans: number;
  /** Why it closed: `quiet-after-root`, `idle-timeout`, `span-limit`, `end-of-input`, `shutdown`... */
  closedBy: string;
}
