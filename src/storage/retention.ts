/** Named bounds of one log on disk. */
export interface RetentionLimits {
  /** Bytes the log's files may hold; closed segments beyond it are deleted, oldest first. */
  maxBytes: number;
  /** Closed segments last written longer ago than this are deleted; undefined: no age limit. */
  maxAgeHours?: number | undefined;
}

/** What retention needs to know of a segment. */
export interface RetainedSegment {
  sizeBytes: number;
  /** When it was last written (ms since the epoch). */
  modifiedMs: number;
}

export interface RetentionPlan<S> {
  /** Closed segments to delete now, oldest first. */
  remove: S[];
  /** Bytes left after the removal, with the incoming bytes. */
  totalBytes: number;
  /** The segments still needed (and the active one) alone leave no room for the incoming bytes. */
  full: boolean;
}

/**
 * The retention policy, pure. `segments` are oldest first, the last is the active one (never
 * deleted). A closed segment goes when it is older than `maxAgeHours`, or while the files with
 * `incomingBytes` would exceed `maxBytes` — oldest first, skipping any the owner still
 * `needed` (unreleased write-ahead log, unacknowledged outbox records). `full` says the
 * needed data alone fills `maxBytes`: the owner then refuses new input instead of deleting.
 *
 * @example
 * planRetention(files.segments, { maxBytes: 1 << 30 }, () => false, batch.length, Date.now())
 */
export function planRetention<S extends RetainedSegment>(
  segments: readonly S[],
  limits: RetentionLimits,
  needed: (segment: S) => boolean,
  incomingBytes: number,
  nowMs: number,
): RetentionPlan<S> {
  let totalBytes = incomingBytes;
  for (const s of segments) totalBytes += s.sizeBytes;
  const oldestKeptMs = limits.maxAgeHours === undefined ? -Infinity : nowMs - limits.maxAgeHours * 3_600_000;
  const remove: S[] = [];
  for (const s of segments.slice(0, -1)) {
    const tooOld = s.modifiedMs < oldestKeptMs;
    if (!tooOld && totalBytes <= limits.maxBytes) continue;
    if (needed(s)) continue;
    remove.push(s);
    totalBytes -= s.sizeBytes;
  }
  return { remove, totalBytes, full: totalBytes > limits.maxBytes };
}
