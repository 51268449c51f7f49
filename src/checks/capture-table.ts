import { CAPTURE_GAP_REASONS, type CaptureGap, type CaptureGapReason } from '../assemble/capture-gaps.ts';

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
 * subject, with the row's sentence and what the gap names; undefined when no such gap is present.
 */
export function tableSilence(row: HiddenBy, gaps: readonly CaptureGap[]): { reason: CaptureGapReason; detail: string } | undefined {
  const gap = gaps.find((g) => row[g.reason].hides);
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
