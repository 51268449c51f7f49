import { compareSteps } from '../assemble/step-order.ts';
import type { Step } from '../normalize/step.ts';

/**
 * Steps in trajectory order: `steps` itself when it already is (a trajectory from the
 * assembler always is), else a sorted copy.
 */
export function inStepOrder(steps: readonly Step[]): readonly Step[] {
  for (let i = 1; i < steps.length; i++) {
    if (compareSteps(steps[i - 1]!, steps[i]!) > 0) return [...steps].sort(compareSteps);
  }
  return steps;
}

/** The first root (a step with no parent) in trajectory order; an orphan is not a root. */
export function rootStep(steps: readonly Step[]): Step | undefined {
  let root: Step | undefined;
  for (const s of steps) if (s.parentId === undefined && (root === undefined || compareSteps(s, root) < 0)) root = s;
  return root;
}
