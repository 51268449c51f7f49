import { CAPTURE_GAP_REASONS, type CaptureGap } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import { gapHides } from '../checks/capture-table.ts';
import type { ChecksConfig } from '../checks/config.ts';
import { CAPTURE_TABLE } from '../checks/registry.ts';
import { CONFLICT_REASON } from '../checks/tool-repetition.ts';
import { MANIFEST_CHECKS } from '../findings/manifest-schema.ts';
import type { Checker } from './checker.ts';
import type { FindingsSource, StreamRecord, TrajectoryLine } from './records.ts';
import { ViolationList } from './violation.ts';

/** An incomplete capture's reason on every check that did not fire. */
const INCOMPLETE = 'incomplete-capture';
const GAP_KINDS: ReadonlySet<string> = new Set(CAPTURE_GAP_REASONS);
/** Reasons that name input of a check's own (`checkSilences`), not a capture state verify can read back. */
const OWN_INPUT_REASONS: ReadonlySet<string> = new Set(['run-outcome-not-captured']);

/** What a manifest is checked against: the capture state of its trajectory revision, from the trajectory log. */
interface CaptureSummary {
  complete: boolean;
  reasons: string;
  steps: number;
  gaps: ReadonlySet<string>;
  /** Per check, the first present gap its row says hides its subject (conditional cells evaluated on the line's steps). */
  hidden: ReadonlyMap<string, { gap: string; why: string }>;
  conflicts: boolean;
}

/**
 * `manifest-vs-capture`: every claim of a manifest agrees with its trajectory's capture. A
 * `none-observed` (a claim of absence) comes from a complete capture with no capture gap that
 * the capture table (the checks' registry rows) says hides the check's subject; every
 * `unavailable` names a reason, and one that is present: `incomplete-capture` on an incomplete
 * capture only, a gap kind only when the trajectory has that gap, `capture-conflict` only when
 * it has conflicts. The manifest's capture (complete, reasons, steps) is the trajectory's.
 * Without the trajectory line (no trajectory log, or not yet written) the manifest is checked
 * on its own capture section. A conditional cell of the table (`onlyIf`: the gap hides the
 * subject only on a step that may be a gate or a send) is evaluated on the line's steps with
 * the checks' configuration verify was given (`--config`), as the checks evaluated it.
 */
export class ManifestVsCapture implements Checker {
  readonly id = 'manifest-vs-capture' as const;
  readonly violations = new ViolationList(this.id);
  checked = 0;
  /** Manifests whose trajectory line was not read: checked on their own capture only. */
  #withoutTrajectory = 0;
  readonly #captures = new Map<string, CaptureSummary>();
  readonly #checks: ChecksConfig;

  constructor(checks: ChecksConfig) {
    this.#checks = checks;
  }

  trajectory(line: TrajectoryLine): void {
    const k = revisionKey(line.key, line.revision);
    // A revision written twice is revision-unique's to report; its manifest is checked against the first.
    if (this.#captures.has(k)) return;
    this.#captures.set(k, {
      complete: line.complete,
      reasons: [...line.incompleteReasons].sort().join(','),
      steps: line.steps.length,
      gaps: new Set((line.captureGaps ?? []).map((g) => g.reason)),
      hidden: hiddenChecks(line, this.#checks),
      conflicts: (line.conflicts ?? []).length > 0,
    });
  }

  record(r: StreamRecord, _source: FindingsSource): void {
    if (r.kind !== 'manifest') return;
    this.checked++;
    const m = r.record;
    const key = m.subject.trajectory_key;
    const add = (what: string) => this.violations.add(r.at, what, key);
    const t = this.#captures.get(revisionKey(key, m.subject.revision));
    if (t === undefined) this.#withoutTrajectory++;
    else {
      if (t.complete !== m.capture.complete) add(`capture.complete is ${m.capture.complete}, the trajectory's is ${t.complete}`);
      if (t.reasons !== [...m.capture.incomplete_reasons].sort().join(',')) {
        add(`capture.incomplete_reasons [${m.capture.incomplete_reasons.join(', ')}] are not the trajectory's [${t.reasons}]`);
      }
      if (t.steps !== m.capture.steps) add(`capture.steps is ${m.capture.steps}, the trajectory has ${t.steps}`);
    }
    const seen = new Set<string>();
    for (const c of m.checks) {
      if (seen.has(c.check)) add(`check ${c.check} is accounted for twice`);
      seen.add(c.check);
      if (c.status === 'none-observed') this.#absence(c.check, m.capture.complete, t, add);
      if (c.status === 'unavailable') this.#unavailable(c.check, c.reason, m.capture.complete, t, add);
    }
    for (const check of MANIFEST_CHECKS) if (!seen.has(check)) add(`check ${check} is not accounted for`);
  }

  /** A claim of absence: from a complete capture, with no gap that hides the check's subject unconditionally. */
  #absence(check: string, complete: boolean, t: CaptureSummary | undefined, add: (what: string) => void): void {
    if (!complete) return add(`${check} is none-observed (a claim of absence) on an incomplete capture`);
    const hidden = t?.hidden.get(check);
    if (hidden !== undefined) add(`${check} is none-observed while the trajectory has a ${hidden.gap} gap, which hides its subject (${hidden.why})`);
  }

  /** An `unavailable` names its reason, and the reason is present in the capture. */
  #unavailable(check: string, reason: string | undefined, complete: boolean, t: CaptureSummary | undefined, add: (what: string) => void): void {
    if (reason === undefined) return add(`${check} is unavailable without a reason`);
    if (!complete) {
      if (reason !== INCOMPLETE) add(`${check} is unavailable for ${reason} on an incomplete capture (every check that did not fire says ${INCOMPLETE})`);
      return;
    }
    if (reason === INCOMPLETE) return add(`${check} is unavailable for ${INCOMPLETE} on a complete capture`);
    if (GAP_KINDS.has(reason)) {
      if (t !== undefined && !t.gaps.has(reason)) add(`${check} is unavailable for a ${reason} gap the trajectory does not have`);
      return;
    }
    if (reason === CONFLICT_REASON) {
      if (t !== undefined && !t.conflicts) add(`${check} is unavailable for ${CONFLICT_REASON}, and the trajectory has no conflict`);
      return;
    }
    if (!OWN_INPUT_REASONS.has(reason)) add(`${check} is unavailable for "${reason}", a reason no capture state names`);
  }

  note(): string | undefined {
    return this.#withoutTrajectory === 0 ? undefined : `${this.#withoutTrajectory} manifest(s) without their trajectory line: checked on their own capture`;
  }
}

/**
 * Which checks a present gap hides, by the capture table. The conditions read only the steps'
 * span id, kind, tool name and agent name, which the line carries under the same names.
 */
function hiddenChecks(line: TrajectoryLine, cfg: ChecksConfig): Map<string, { gap: string; why: string }> {
  const out = new Map<string, { gap: string; why: string }>();
  const gaps = (line.captureGaps ?? []).filter((g) => GAP_KINDS.has(g.reason)) as CaptureGap[];
  if (gaps.length === 0) return out;
  const steps = { steps: line.steps } as unknown as Trajectory;
  for (const row of CAPTURE_TABLE) {
    const gap = gaps.find((g) => gapHides(row.hiddenBy[g.reason], g, steps, cfg));
    if (gap !== undefined) out.set(row.check, { gap: gap.reason, why: row.hiddenBy[gap.reason].why });
  }
  return out;
}

export function revisionKey(key: string, revision: number): string {
  return `${key}\u0000${revision}`;
}
