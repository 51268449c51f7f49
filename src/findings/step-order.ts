import type { Step } from '../normalize/step.ts';

/** Trajectory order (start, end, trace id, span id), so readings never depend on arrival order. */
export function stepOrder(a: Step, b: Step): number {
  if (a.startTimeUnixNano !== b.startTimeUnixNano) return a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1;
  if (a.endTimeUnixNano !== b.endTimeUnixNano) return a.endTimeUnixNano < b.endTimeUnixNano ? -1 : 1;
  const ka = `${a.traceId}/${a.id}`;
  const kb = `${b.traceId}/${b.id}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The first root (a step with no parent) in trajectory order; an orphan is not a root. */
export function rootStep(steps: readonly Step[]): Step | undefined {
  let root: Step | undefined;
  for (const s of steps) if (s.parentId === undefined && (root === undefined || stepOrder(s, root) < 0)) root = s;
  return root;
}
