import type { Step } from '../normalize/step.ts';

/**
 * Steps in trajectory order: start time, then end time, then trace id, then span id. A total
 * order on distinct spans, so a trajectory's order (and every reading over it) never depends
 * on arrival order.
 */
export function compareSteps(a: Step, b: Step): number {
  if (a.startTimeUnixNano !== b.startTimeUnixNano) return a.startTimeUnixNano < b.startTimeUnixNano ? -1 : 1;
  if (a.endTimeUnixNano !== b.endTimeUnixNano) return a.endTimeUnixNano < b.endTimeUnixNano ? -1 : 1;
  if (a.traceId !== b.traceId) return a.traceId < b.traceId ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
