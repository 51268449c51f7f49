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
  /**
   * The key may have had closed revisions this process no longer remembers (forgotten past
   * `maxRememberedKeys`, older than the memory's horizon, or the memory cut or lost across a
   * restart): what they held is unknown, so this one claims no absence (docs/reliability.md).
   */
  | 'previous-revision-unknown'
  /** Keyed by trace (Kafka source): other traces of the span's session may sit on other partitions. */
  | 'partitioned-session'
  /** The trace's spans name two different sessions: which run its spans belong to is unknown. */
  | 'session-conflict'
  /** A content event (OTLP log record) named a span that never arrived: that span is missing. */
  | 'content-without-span'
  /** The broker refused a trace of the session on the internal repartition topic: it is missing here. */
  | 'repartition-refused'
  /** A trace of the session came in fragments that could not be put together (lost, over the bound, corrupt): it is missing here. */
  | 'repartition-fragment-lost';

/**
 * Each incomplete reason in one sentence (what the docs and `trajwatch schema manifest` print):
 * the record type keeps the list whole as reasons are added.
 */
export const INCOMPLETE_REASON_TEXT: Readonly<Record<IncompleteReason, string>> = {
  'root-not-seen': 'the root span never arrived',
  'orphan-parents': 'spans name parents that never arrived',
  'span-limit': 'the trajectory hit its span bound; later spans were refused',
  'byte-limit': 'the trajectory hit its byte bound; later spans were refused',
  'refused-spans': 'spans of it were refused (invalid, over a bound)',
  'idle-timeout': 'it went idle and closed before its root span was seen',
  'end-of-input': 'the input ended before its root span was seen',
  shutdown: 'the process shut down while it was open',
  'previous-revision-not-retained': "a late span reopened it, but the earlier revision's steps were no longer kept",
  'partitioned-session': "keyed by trace: other traces of the span's session may sit on other partitions",
  'session-conflict': "the trace's spans name two different sessions",
  'content-without-span': 'a content event named a span that never arrived',
  'repartition-refused': 'the broker refused a trace of the session on the internal repartition topic',
  'repartition-fragment-lost':
    'a trace of the session came in fragments that stage 2 could not put together (one missing past the deadline, over the reassembly bound, or a digest mismatch)',
  'previous-revision-unknown':
    'its key may have closed before (forgotten by the closed-revision memory, or older than a memory that was cut): an earlier revision may exist',
};

/** Every incomplete reason, in `INCOMPLETE_REASON_TEXT` order. */
export const INCOMPLETE_REASONS = Object.keys(INCOMPLETE_REASON_TEXT) as IncompleteReason[];

/** Two different payloads arrived under one span id; the first is kept, the second recorded. */
export interface CaptureConflict {
  traceId: string;
  spanId: string;
  /**
   * sha256 hex of the kept and of the refused payload; when the kept step had been let go,
   * `keptDigest` is its 16-hex fingerprint instead (see `spanFingerprint`).
   */
  keptDigest: string;
  refusedDigest: string;
}

/**
 * A span named a session other than the one its trace had joined. The trace joins the
 * smallest of the ids it names (UTF-16 code-unit order), whatever order its spans arrive in
 * while the trajectories are open; the trajectory it joins records the disagreement.
 */
export interface SessionConflict {
  traceId: string;
  spanId: string;
  /** The session the trace had joined and the one this span named, sorted. */
  sessionIds: [string, string];
}

export interface Trajectory {
  /** Conversation/session id when present, else the trace id. */
  key: string;
  traceIds: string[];
  /**
   * 1 for the first emission; a span arriving after close opens revision + 1, which inherits
   * the earlier revisions' lost-capture reasons, conflicts and refused spans. A revision whose
   * key may have had revisions no longer remembered is numbered as if first, and says
   * `previous-revision-unknown`.
   */
  revision: number;
  complete: boolean;
  incompleteReasons: IncompleteReason[];
  /** Ordered by start time, then end time, then span id. */
  steps: Step[];
  conflicts: CaptureConflict[];
  /** Present (non-empty) only when some trace of it named two sessions (`session-conflict`). */
  sessionConflicts?: SessionConflict[];
  /** Spans refused for this key (span limit, invalid) — counted, never silently lost. */
  refusedSpans: number;
  /** Why it closed: `quiet-after-root`, `idle-timeout`, `span-limit`, `end-of-input`, `shutdown`... */
  closedBy: string;
}
