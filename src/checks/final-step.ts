import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';

/**
 * The step whose result is the run's final output: the agent step that ended last, or, when no
 * step is an agent, the root step that ended last. Its index in `t.steps`, or -1.
 */
export function finalStepIndex(t: Trajectory): number {
  let agent = -1;
  let root = -1;
  t.steps.forEach((step, i) => {
    if (step.kind === 'agent' && endsLater(step, t.steps[agent])) agent = i;
    if (step.parentId === undefined && endsLater(step, t.steps[root])) root = i;
  });
  return agent >= 0 ? agent : root;
}

// Steps are in trajectory order, so on a tie the later one wins.
function endsLater(step: Step, best: Step | undefined): boolean {
  return best === undefined || step.endTimeUnixNano >= best.endTimeUnixNano;
}
