import { TrajwatchError } from '../errors.ts';
import type { HiddenBy } from './capture-table.ts';
import { errorOutputCheck } from './error-output.ts';
import { faultPassthroughCheck } from './fault-passthrough.ts';
import type { L0CheckDefinition } from './l0-check.ts';
import { malformedStructureCheck } from './malformed-structure.ts';
import { outOfOrderGateCheck } from './out-of-order-gate.ts';
import { toolRepetitionHiddenBy } from './tool-repetition-hidden-by.ts';
import { unguardedSendCheck } from './unguarded-send.ts';

/**
 * Every L0 check, one line each. This order sorts hits and orders the manifest's `checks`
 * list, so a new check goes at the end. A check file whose definition is not listed here, or
 * is listed twice, fails `test/checks/registry.test.ts`.
 */
export const L0_CHECKS = [
  errorOutputCheck,
  faultPassthroughCheck,
  malformedStructureCheck,
  unguardedSendCheck,
  outOfOrderGateCheck,
] as const satisfies readonly L0CheckDefinition[];

/** A registered pattern id. */
export type L0Pattern = (typeof L0_CHECKS)[number]['pattern'];

/**
 * The checks by pattern, refusing a pattern registered twice (two definitions would race for
 * one finding area). Exported so the refusal itself can be tested.
 *
 * @throws TrajwatchError when a pattern appears twice or a list is empty.
 */
export function indexChecks<P extends string>(checks: readonly L0CheckDefinition<P>[]): ReadonlyMap<P, L0CheckDefinition<P>> {
  if (checks.length === 0) throw new TrajwatchError('no L0 check registered');
  const byPattern = new Map<P, L0CheckDefinition<P>>();
  for (const check of checks) {
    if (byPattern.has(check.pattern)) {
      throw new TrajwatchError(`L0 check "${check.pattern}" registered twice`, { context: { pattern: check.pattern } });
    }
    byPattern.set(check.pattern, check);
  }
  return byPattern;
}

const BY_PATTERN = indexChecks<L0Pattern>(L0_CHECKS);

/** The pattern ids in registry order (a non-empty tuple, as `z.enum` wants). */
export const L0_PATTERNS = [...BY_PATTERN.keys()] as unknown as readonly [L0Pattern, ...L0Pattern[]];

/** The definition of a registered pattern. */
export function l0Check(pattern: L0Pattern): L0CheckDefinition<L0Pattern> {
  return BY_PATTERN.get(pattern)!;
}

/** Exact tool repetition's name in the manifest: not an L0 pattern, accounted for like one. */
export const TOOL_REPETITION_CHECK = 'tool-repetition';

/** One row of the capture table: a check the manifest accounts for, and which gaps hide its subject. */
export interface CaptureTableRow {
  check: L0Pattern | typeof TOOL_REPETITION_CHECK;
  hiddenBy: HiddenBy;
}

/**
 * The capture table: every check the manifest accounts for (registry order, then exact tool
 * repetition) with its row. The one place that says which capture gaps silence which check:
 * the manifest's `unavailable`, docs/checks.md and `trajwatch schema manifest` read it.
 */
export const CAPTURE_TABLE: readonly CaptureTableRow[] = [
  ...L0_CHECKS.map((c) => ({ check: c.pattern, hiddenBy: c.hiddenBy })),
  { check: TOOL_REPETITION_CHECK, hiddenBy: toolRepetitionHiddenBy },
];
