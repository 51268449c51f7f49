import { CAPTURE_GAP_REASONS, CAPTURE_GAP_TEXT, type CaptureGapReason } from '../assemble/capture-gaps.ts';
import { INCOMPLETE_REASON_TEXT, INCOMPLETE_REASONS, type IncompleteReason } from '../assemble/trajectory.ts';
import { CAPTURE_TABLE } from '../checks/registry.ts';
import type { GapDecision } from '../checks/capture-table.ts';

/** What an incomplete capture does to every check that did not fire. */
export const INCOMPLETE_SILENCE =
  'every check that did not fire is unavailable (reason incomplete-capture): an incomplete capture can show that something happened, never that it did not';

/** One capture gap kind: what is missing, the checks it silences on a complete capture, and why for each check. */
export interface GapState {
  kind: CaptureGapReason;
  missing: string;
  silences: string[];
  why: Record<string, { hides: boolean; why: string; onlyIf?: string }>;
}

/** Every capture state and what it silences: the incomplete reasons, then the capture gap kinds. */
export interface CaptureStates {
  incomplete: { reasons: { reason: IncompleteReason; means: string }[]; silences: string[]; effect: string };
  gaps: GapState[];
}

/**
 * Every capture state and which checks each silences, generated from the capture table
 * (`CAPTURE_TABLE`, the checks' `hiddenBy` rows) and the reason lists, so that the schema and
 * docs/checks.md cannot drift from what the manifest does.
 */
export function captureStates(): CaptureStates {
  return {
    incomplete: {
      reasons: INCOMPLETE_REASONS.map((reason) => ({ reason, means: INCOMPLETE_REASON_TEXT[reason] })),
      silences: CAPTURE_TABLE.map((r) => r.check),
      effect: INCOMPLETE_SILENCE,
    },
    gaps: CAPTURE_GAP_REASONS.map((kind) => ({
      kind,
      missing: CAPTURE_GAP_TEXT[kind],
      silences: CAPTURE_TABLE.filter((r) => r.hiddenBy[kind].hides).map((r) => r.check),
      why: Object.fromEntries(CAPTURE_TABLE.map((r) => [r.check, decisionText(r.hiddenBy[kind])])),
    })),
  };
}

/** A capture-table cell as data: a conditional cell's condition in words (`onlyIf`). */
export function decisionText(d: GapDecision): { hides: boolean; why: string; onlyIf?: string } {
  return { hides: d.hides, why: d.why, ...(d.onlyIf === undefined ? {} : { onlyIf: d.onlyIf.what }) };
}

/** The `reason` of an `unavailable` check status, described from the table (the manifest schema's description). */
export function unavailableReasonDescription(): string {
  const gaps = captureStates().gaps.map((g) => `${g.kind} (silences ${g.silences.length === 0 ? 'nothing' : g.silences.join(', ')})`);
  return [
    'Why the check is unavailable: incomplete-capture (the capture is incomplete for one of the reasons capture_states.incomplete lists; every check that did not fire says so);',
    `on a complete capture, the first present capture gap its row of the capture table lists: ${gaps.join('; ')};`,
    "or input of the check's own not captured (run-outcome-not-captured). Absent for the other statuses. capture_states at the schema's root lists every capture state, with why for each check.",
  ].join(' ');
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/**
 * The capture table as markdown, for docs/checks.md (between its markers, rewritten by
 * `scripts/docs/capture-table-doc.ts`, compared by `test/findings/capture-states.test.ts`): one row
 * per gap kind, one column per check, each cell "silenced" or "—" with the row's why.
 */
export function captureTableMarkdown(): string {
  const checks = CAPTURE_TABLE.map((r) => r.check);
  const lines = [`| gap kind | what is missing | ${checks.map((c) => `\`${c}\``).join(' | ')} |`, `|---|---|${checks.map(() => '---').join('|')}|`];
  for (const g of captureStates().gaps) {
    const cells = checks.map((c) => {
      const d = g.why[c]!;
      return `${d.hides ? (d.onlyIf === undefined ? '**silenced**' : `**silenced** when ${cell(d.onlyIf)}`) : '—'}: ${cell(d.why)}`;
    });
    lines.push(`| \`${g.kind}\` | ${cell(g.missing)} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  lines.push(`Any incomplete reason (${INCOMPLETE_REASONS.map((r) => `\`${r}\``).join(', ')}): ${INCOMPLETE_SILENCE}.`);
  return lines.join('\n');
}
