import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { CheckResults, L0Hit } from './check-result.ts';
import type { ChecksConfig } from './config.ts';
import { L0_CHECKS, L0_PATTERNS } from './registry.ts';
import { checkSilences } from './silences.ts';
import { toolRepetition } from './tool-repetition.ts';
import { compareCodeUnits } from '../core/sort-small.ts';

/**
 * Run every registered L0 check (`registry.ts`) and exact tool repetition over one trajectory.
 * Pure and deterministic: the same trajectory and config give byte-identical results. Hits are
 * ordered by pattern (registry order), then by the anchor's position in the trajectory, then
 * anchor and detail.
 *
 * @example const { l0, repetition } = runChecks(trajectory, defaultChecksConfig);
 */
export function runChecks(trajectory: Trajectory, cfg: ChecksConfig): CheckResults {
  const t = withDistinctSteps(trajectory);
  const l0: L0Hit[] = [];
  for (const check of L0_CHECKS) for (const hit of check.run(t, cfg)) l0.push(hit);
  if (l0.length > 1) sortHits(l0, t);
  return { l0, repetition: toolRepetition(t), silenced: t.complete ? checkSilences(t, cfg) : [] };
}

const PATTERN_RANK = new Map<string, number>(L0_PATTERNS.map((p, i) => [p, i]));

function sortHits(hits: L0Hit[], t: Trajectory): void {
  const position = new Map<string, number>();
  t.steps.forEach((step, i) => {
    if (!position.has(step.id)) position.set(step.id, i);
  });
  const at = (anchor: string) => position.get(anchor) ?? Number.MAX_SAFE_INTEGER;
  hits.sort(
    (a, b) =>
      PATTERN_RANK.get(a.pattern)! - PATTERN_RANK.get(b.pattern)! ||
      at(a.anchor) - at(b.anchor) ||
      compareCodeUnits(a.anchor, b.anchor) ||
      compareCodeUnits(a.detail, b.detail),
  );
}

/**
 * The assembler deduplicates repeated exports of a span; should a trajectory still hold one
 * span twice, the first copy is the step (as the assembler keeps the first), so no check
 * reports one physical attempt twice.
 */
function withDistinctSteps(t: Trajectory): Trajectory {
  // Span ids are unique within a trace: with one trace the id alone is the key.
  const oneTrace = t.traceIds.length <= 1;
  const keyOf = (step: Step) => (oneTrace ? step.id : `${step.traceId}/${step.id}`);
  const seen = new Set<string>();
  for (const step of t.steps) {
    const key = keyOf(step);
    if (seen.has(key)) return { ...t, steps: firstOfEach(t.steps, keyOf) };
    seen.add(key);
  }
  return t;
}

function firstOfEach(steps: readonly Step[], keyOf: (step: Step) => string): Step[] {
  const seen = new Set<string>();
  return steps.filter((step) => {
    const key = keyOf(step);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
