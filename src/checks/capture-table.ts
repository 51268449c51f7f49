import { CAPTURE_GAP_REASONS, type CaptureGap, type CaptureGapReason } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { ChecksConfig } from './config.ts';

/**
 * One cell of the capture table: whether a capture gap kind can hide what a check looks for
 * (its subject), and why. A gap that hides a check's subject keeps the check from claiming
 * absence: its manifest status is `unavailable` with the gap as reason whenever that gap is
 * present and the check did not fire.
 */
export interface GapDecision {
  hides: boolean;
  /** One sentence: how the gap hides the subject, or why it cannot. The manifest's `detail` when it hides. */
  why: string;
  /**
   * With `hides`: it hides the subject only when this holds of the gap's spans (a missing result
   * hides a gate's failure only on a step that may be a gate). Without it, any such gap hides.
   */
  onlyIf?: GapCondition;
}

/** When a gap hides a check's subject: the condition said in words (docs, schema) and tested. */
export interface GapCondition {
  /** "the step is gate-class", for the docs and `trajwatch schema manifest`. */
  what: string;
  holds: (gap: CaptureGap, t: Trajectory, cfg: ChecksConfig) => boolean;
}

/**
 * The gap can hide the check's subject; with `onlyIf`, only where that holds of the gap's spans.
 * @example 'tool-args-not-captured': hides('a send whose arguments were not captured has no known target', OUTBOUND_STEP)
 */
export function hides(why: string, onlyIf?: GapCondition): GapDecision {
  return onlyIf === undefined ? { hides: true, why } : { hides: true, why, onlyIf };
}

/** The gap cannot hide the check's subject: `why` says what the check reads instead. */
export function cannotHide(why: string): GapDecision {
  return { hides: false, why };
}

/** What a `tool-call-not-captured` gap is, as the rows' sentences name it. */
export const UNSPANNED_CALL = 'a requested call that never became a tool span';

/** What an `unread-convention` gap is, as the rows' sentences name it. */
export const UNREAD_SPAN = 'a span in a convention trajwatch does not read';

/** Whether one present gap hides the subject of the check whose decision this is. */
export function gapHides(decision: GapDecision, gap: CaptureGap, t: Trajectory, cfg: ChecksConfig): boolean {
  return decision.hides && (decision.onlyIf === undefined || decision.onlyIf.holds(gap, t, cfg));
}

/**
 * A check's row of the capture table: a decision for every capture gap kind (the record type
 * makes a missing decision a type error; `test/checks/capture-table.test.ts` checks the rows at
 * run time). Declared in the check's registry definition (`L0CheckDefinition.hiddenBy`), and for
 * exact tool repetition beside it (`tool-repetition.ts`); docs and the manifest schema are
 * generated from it.
 */
export type HiddenBy = Readonly<Record<CaptureGapReason, GapDecision>>;

/** The gap kinds a row says hide its subject, in `CAPTURE_GAP_REASONS` order. */
export function hidingKinds(row: HiddenBy): CaptureGapReason[] {
  return CAPTURE_GAP_REASONS.filter((kind) => row[kind].hides);
}

/**
 * Why a check claims no absence on a complete capture, from its row: the first present gap
 * (in `CAPTURE_GAP_REASONS` order, which is `captureGaps`' order) that the row says hides its
 * subject (`gapHides`), with the row's sentence and what the gap names; undefined when no such
 * gap is present.
 */
export function tableSilence(
  row: HiddenBy,
  gaps: readonly CaptureGap[],
  t: Trajectory,
  cfg: ChecksConfig,
): { reason: CaptureGapReason; detail: string } | undefined {
  const gap = gaps.find((g) => gapHides(row[g.reason], g, t, cfg));
  if (gap === undefined) return undefined;
  return { reason: gap.reason, detail: `${row[gap.reason].why} (${gapParticulars(gap)})` };
}

/** What one gap names, for a detail: the tools requested, the conventions, the skew, or the span count. */
export function gapParticulars(gap: CaptureGap): string {
  if (gap.toolNames !== undefined && gap.toolNames.length > 0) return `requested with no tool span: ${gap.toolNames.join(', ')}`;
  if (gap.conventions !== undefined && gap.conventions.length > 0) return `unread: ${gap.conventions.join(', ')}`;
  if (gap.skewNs !== undefined) return `timestamps off by up to ${gap.skewNs} ns`;
  return `${gap.spanIds.length} span(s)`;
}
