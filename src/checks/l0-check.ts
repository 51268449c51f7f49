import type { CaptureGap } from '../assemble/capture-gaps.ts';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { HiddenBy } from './capture-table.ts';
import type { PatternHit } from './hit.ts';
import type { ChecksConfig } from './config.ts';

/** How serious a fired candidate would be if confirmed (a subset of the finding severities). */
export type L0Severity = 'low' | 'medium' | 'high';

/**
 * Which of a check's claims are claims of absence ("no gate before", "never succeeded
 * afterwards"), which an incomplete capture can never support:
 * - `none`: it only reports what it saw; on an incomplete capture it searches the captured steps;
 * - `some-forms`: some of its forms claim absence and do not run on an incomplete capture;
 * - `always`: it claims absence and does not run at all on an incomplete capture.
 */
export type AbsenceClaim = 'none' | 'some-forms' | 'always';

/** Why a check claims nothing: a reason (`tool-call-not-captured`, ...) and a sentence. */
export interface SilenceReason {
  reason: string;
  detail: string;
}

/** Read once per trajectory and handed to every check's `silence`. */
export interface SilenceContext {
  /** `captureGaps(t.steps)`. */
  gaps: readonly CaptureGap[];
}

/**
 * Everything about one L0 check, kept in its own file and registered once in `registry.ts`:
 * the runner, finding creation and the analysis manifest read these fields instead of keeping
 * their own per-pattern lists. `P` is the pattern id, spelled once in the annotation.
 */
export interface L0CheckDefinition<P extends string = string> {
  /** The pattern id: the finding's `area`, `l0.<pattern>` its method, part of its identity. */
  readonly pattern: P;
  /** The pure check: no I/O, no clock, input not mutated; one hit per anchor. */
  readonly run: (t: Trajectory, cfg: ChecksConfig) => PatternHit<P>[];
  readonly severity: L0Severity;
  /**
   * What a hit claims about its anchor (described by `describeStep`): the finding's claim and
   * so its identity. Change it only with a new method version.
   */
  readonly claim: (anchor: string) => string;
  readonly absence: AbsenceClaim;
  /** The manifest's `detail` when the check did not fire on an incomplete capture. */
  readonly silentOnIncomplete: string;
  /**
   * The check's row of the capture table: for every capture gap kind, whether it can hide what
   * the check looks for, and why. On a complete capture where the check did not fire, the first
   * present gap the row lists makes the manifest say `unavailable` (reported in
   * `CheckResults.silenced` by `checkSilences`). A check may stop *firing* on finer conditions of
   * its own (a hidden call named like a gate), but its absence claim follows this row.
   */
  readonly hiddenBy: HiddenBy;
  /**
   * On a complete capture with no gap of its row present: why the check could still not claim
   * absence (input it reads that is not a capture gap, e.g. a run's answer that cannot be read),
   * or undefined. Reported in `CheckResults.silenced`; must apply the same conditions `run` applies.
   */
  readonly silence?: (t: Trajectory, cfg: ChecksConfig, ctx: SilenceContext) => SilenceReason | undefined;
}
