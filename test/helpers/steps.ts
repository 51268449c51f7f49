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
