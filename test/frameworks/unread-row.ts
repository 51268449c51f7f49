/**
 * The matrix's judgement of a row whose instrumentation writes tool and model spans in a
 * convention trajwatch does not read (`FrameworkSpec.unreadConvention`): nothing can be read
 * from its tool spans, so what must hold is that trajwatch says so. Every tool span of the
 * capture (by the instrumentation's own marking, `captureOf`) is a step of an
 * `unread-convention` capture gap, and the latest manifest of every trajectory claims no tool
 * absence: tool-repetition, unguarded-send and out-of-order-gate are `unavailable` for
 * `unread-convention`, never `none-observed`.
 */
import type { Cell, Column, Evidence } from './harness.ts';

/** One analysis manifest as written to findings.jsonl; only the fields the evaluation reads. */
export interface ManifestRow {
  subject: { trajectory_key: string; revision: number };
  checks: { check: string; status: string; reason?: string }[];
}

/** The checks whose claims of absence an unread tool span could falsify. */
export const TOOL_ABSENCE_CHECKS = ['tool-repetition', 'unguarded-send', 'out-of-order-gate'] as const;

/** The cells an unread-convention row replaces: tool names, args, repetition. */
export function unreadConventionCells(why: string, ev: Evidence): Partial<Record<Column, Cell>> {
  const problems: string[] = [];
  const gapSpans = new Set(ev.trajectories.flatMap((t) => (t.captureGaps ?? []).filter((g) => g.reason === 'unread-convention').flatMap((g) => g.spanIds)));
  if (ev.raw.tools.length === 0) problems.push('the capture holds no tool span marked by the instrumentation');
  const missed = ev.raw.tools.filter((t) => !gapSpans.has(t.spanId));
  if (missed.length > 0) problems.push(`tool spans not in an unread-convention gap: ${missed.map((t) => `${t.name} ${t.spanId}`).join(', ')}`);
  const manifests = ev.manifests ?? [];
  if (manifests.length === 0) problems.push('no analysis manifest');
  for (const m of manifests) {
    for (const check of TOOL_ABSENCE_CHECKS) {
      const status = m.checks.find((c) => c.check === check);
      if (status?.status === 'unavailable' && status.reason === 'unread-convention') continue;
      problems.push(
        `manifest of ${m.subject.trajectory_key}: ${check} is ${status === undefined ? 'missing' : `${status.status}${status.reason === undefined ? '' : ` (${status.reason})`}`}, want unavailable (unread-convention)`,
      );
    }
  }
  const cell: Cell =
    problems.length === 0
      ? {
          status: 'n/a',
          detail: `${why}; every tool span (${ev.raw.tools.length}) is an unread-convention capture gap, and the manifest claims no tool absence (${TOOL_ABSENCE_CHECKS.join(', ')}: unavailable)`,
        }
      : { status: 'no', detail: problems.join('; ') };
  return { toolNames: cell, args: cell, repetition: cell };
}
