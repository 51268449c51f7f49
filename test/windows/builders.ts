import { makeStep, makeTrajectory } from '../helpers/steps.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { CheckResults } from '../../src/checks/check-result.ts';
import { argsDigest } from '../../src/normalize/args-digest.ts';
import type { Step } from '../../src/normalize/step.ts';

export const TRACE = 'ab'.repeat(16);
const EPOCH = 1_700_000_000_000_000_000n;

/** A step at position `n` (start n ms after a fixed epoch); override what the test is about. */
export function at(n: number, over: Partial<Step> = {}): Step {
  const start = EPOCH + BigInt(n) * 1_000_000n;
  return makeStep({
    id: n.toString(16).padStart(16, '0'),
    traceId: TRACE,
    kind: 'tool',
    name: 'execute_tool',
    convention: 'genai',
    startTimeUnixNano: start,
    endTimeUnixNano: start + 500_000n,
    ...over,
  });
}

export function toolArgs(raw: string): Step['args'] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { raw, digest: argsDigest(raw) };
  }
  return { raw, parsed, digest: argsDigest(raw) };
}

/** The shared test trajectory (`test/helpers/steps.ts`). */
export const traj = makeTrajectory;

export const NO_CHECKS: CheckResults = { l0: [], repetition: { status: 'none-observed' }, silenced: [] };

/** An agent root (id 1) over `n` tool steps (ids 2..n+1) with the given results. */
export function agentRun(n: number, result = (i: number) => `result ${i}`): Trajectory {
  const root = at(1, { kind: 'agent', name: 'invoke_agent', agentName: 'worker', input: 'do the task', endTimeUnixNano: EPOCH + 1_000_000_000n });
  const steps = [root];
  for (let i = 0; i < n; i++) {
    steps.push(at(i + 2, { parentId: root.id, toolName: 'lookup', args: toolArgs(`{"q":${i}}`), result: result(i) }));
  }
  return traj(steps);
}
