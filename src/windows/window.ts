import type { EvidenceRef } from '../core/evidence-ref.ts';

/** The three shapes of window: one step and its neighbours, one turn, one agent's subtree. */
export const WINDOW_KINDS = ['event', 'turn', 'agent'] as const;
export type WindowKind = (typeof WINDOW_KINDS)[number];

/** The event id a support answer uses when no event of the window supports the answer. */
export const UNRESOLVED_EVENT_ID = 'unresolved';

/** One event the judge sees: an id unique in its window, the sanitized content, its sources. */
export interface WindowEvent {
  /** `e1`, `e2`, ... in trajectory order; never `unresolved`. */
  id: string;
  /** The sanitized JSON text actually shown to the judge (secrets already redacted). */
  content: string;
  evidenceRefs: EvidenceRef[];
}

/** Why a window was asked for. A window asked for by several triggers lists each once. */
export const WINDOW_TRIGGERS = ['l0-hit', 'outbound', 'terminal', 'sampled'] as const;
export type WindowTrigger = (typeof WINDOW_TRIGGERS)[number];

/**
 * A bounded slice of one trajectory revision, as the judge sees it. Immutable: its times come
 * from the source spans, its id from what it covers, never from the clock.
 */
export interface TraceWindow {
  /** `w1_<24 hex>`: digest of trajectory key, revision, kind, anchor and policy digest. */
  id: string;
  kind: WindowKind;
  triggers: WindowTrigger[];
  /** The step the window was built around, as `<traceId>/<spanId>`. */
  anchor: string;
  traceIds: string[];
  subject: { trajectoryKey: string; revision: number; agent?: string; service?: string };
  /** Earliest start and latest end of the window's steps, ISO-8601 with nanoseconds. */
  startedAt: string;
  endedAt: string;
  /** What the capture could not show (`incomplete-trajectory:...`, `content-not-captured:e3`...). */
  limitations: string[];
  /** Nonempty, in trajectory order. */
  events: WindowEvent[];
  /** Secrets replaced in this window's content. */
  redactions: number;
  /** Digest of the extraction policy that built this window (part of calibration identity). */
  policyDigest: string;
}

/** A window that was asked for but not built or not sent, with the reason. Never silent. */
export interface WindowRefusal {
  trajectoryKey: string;
  revision: number;
  kind: WindowKind;
  anchor: string;
  triggers: WindowTrigger[];
  /** `events-per-window`, `bytes-per-window`, `windows-per-trajectory`, `request-bytes`, `no-agent-step`... */
  reason: string;
  detail: string;
  /** The built window's id, when it was built and then found not to fit its request's caps. */
  windowId?: string;
}
