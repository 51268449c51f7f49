import type { AdmissionRefusal, RequestDemand } from '../ingest/pipeline-input.ts';
import { REFUSAL } from '../ingest/refusal.ts';
import type { AssemblerLimits } from './limits.ts';

/** Nothing reserved. */
export const NO_DEMAND: RequestDemand = { trajectories: 0, bytes: 0 };

/**
 * The admission bound `demand` would pass, counted span by span against what is open now and
 * what requests already admitted but not yet accepted hold (`reserved`), or undefined. So many
 * large requests admitted at once cannot together pass `maxOpenTrajectories` or
 * `maxBufferedBytes`: each is refused (503, retried) until what it brings fits. A request
 * larger than a bound on its own is taken when nothing else is held, so it is never refused
 * forever; the bound is then passed by at most that one request.
 */
export function refuseDemand(
  held: { openTrajectories: number; bufferedBytes: number },
  limits: Pick<AssemblerLimits, 'maxOpenTrajectories' | 'maxBufferedBytes'>,
  demand: RequestDemand,
  reserved: RequestDemand = NO_DEMAND,
): AdmissionRefusal | undefined {
  const open = held.openTrajectories + reserved.trajectories;
  const bytes = held.bufferedBytes + reserved.bytes;
  if (open === 0 && bytes === 0) return undefined;
  if (open + demand.trajectories > limits.maxOpenTrajectories) return REFUSAL.maxOpenTrajectories;
  if (bytes + demand.bytes > limits.maxBufferedBytes) return REFUSAL.maxBufferedBytes;
  return undefined;
}
