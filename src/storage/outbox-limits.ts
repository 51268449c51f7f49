import type { StorageError } from '../errors.ts';

/**
 * Named bounds of the outbox. Counts cover records appended and not yet acknowledged,
 * including those still being written.
 */
export interface OutboxLimits {
  /** Unacknowledged serialized bytes at which `append` answers `full`. */
  maxOutboxBytes: number;
  /** Unacknowledged records at which `append` answers `full`. */
  maxOutboxRecords: number;
  /** A single serialized record above this is refused as `too-large` (the receiving end would reject it). */
  maxRecordBytes: number;
  /** A segment file that has reached this size is closed and the next write starts a new one. */
  segmentBytes: number;
}

export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = {
  maxOutboxBytes: 256 * 1024 * 1024,
  maxOutboxRecords: 200_000,
  maxRecordBytes: 900 * 1024,
  segmentBytes: 16 * 1024 * 1024,
};

/** What `append` answers. Refusals accept nothing of the call: the caller keeps the records. */
export type AppendResult =
  | { ok: true; firstSeq: number; lastSeq: number }
  | { ok: false; reason: 'full'; pendingRecords: number; pendingBytes: number }
  | { ok: false; reason: 'too-large'; id: string; bytes: number }
  | { ok: false; reason: 'unwritable'; error: StorageError }
  | { ok: false; reason: 'closed' };

export interface OutboxStats {
  /** Appended and not yet acknowledged (written or still being written). */
  pendingRecords: number;
  pendingBytes: number;
  /** Appended but not yet durable. */
  queuedRecords: number;
  segments: number;
  appendedRecords: number;
  ackedRecords: number;
  refusedFull: number;
  refusedTooLarge: number;
  /** Torn final lines (a crash mid-write) found at open and ignored. */
  tornLinesIgnored: number;
  /** The last write failure while it lasts. */
  failure: StorageError | undefined;
}
