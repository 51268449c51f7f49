import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Step } from '../../src/normalize/step.ts';

/** A minimal valid Step for assembler and pipeline tests; override what the test is about. */
export function makeStep(overrides: Partial<Step> & { id: string }): Step {
  return {
    traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    kind: 'other',
    name: `span-${overrides.id}`,
    convention: 'generic',
    startTimeUnixNano: 1_000_000_000n,
    endTimeUnixNano: 2_000_000_000n,
    statusCode: 0,
    attributes: {},
    resource: {},
    eventNames: [],
    encodedBytes: 100,
    ...overrides,
  };
}

/** A complete, closed trajectory over `steps` (in the order given); override what the test is about. */
export function makeTrajectory(steps: Step[], overrides: Partial<Trajectory> = {}): Trajectory {
  return {
    key: 'session-1',
    traceIds: [...new Set(steps.map((s) => s.traceId))],
    revision: 1,
    complete: true,
    incompleteReasons: [],
    steps,
    conflicts: [],
    refusedSpans: 0,
    closedBy: 'quiet-after-root',
    ...overrides,
  };
}
