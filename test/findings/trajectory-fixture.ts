import { makeStep, makeTrajectory } from '../helpers/steps.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import type { Step } from '../../src/normalize/step.ts';

export const TRACE_A = 'aa'.repeat(16);
export const TRACE_B = 'bb'.repeat(16);

/** A step with plausible defaults; times in nanoseconds from a fixed epoch, never the clock. */
export function step(over: Partial<Step> & { id: string }): Step {
  const start = over.startTimeUnixNano ?? 1_700_000_000_000_000_000n + BigInt(parseInt(over.id.slice(-4), 16)) * 1_000_000n;
  return makeStep({
    traceId: TRACE_A,
    kind: 'tool',
    name: 'execute_tool',
    convention: 'genai',
    startTimeUnixNano: start,
    endTimeUnixNano: start + 500_123n,
    ...over,
  });
}

/** The shared test trajectory (`test/helpers/steps.ts`). */
export const trajectory = makeTrajectory;

export const RESOURCE: Attributes = { 'service.name': 'agent-svc', 'service.version': '2.3.1', 'trajwatch.seat': 'seat-7' };

/** root agent → llm → two identical tool calls, one failing. */
export function sampleTrajectory(): Trajectory {
  const resource = { ...RESOURCE };
  return trajectory([
    step({ id: '0000000000000001', kind: 'agent', name: 'invoke_agent', agentName: 'planner', service: 'agent-svc', resource }),
    step({
      id: '0000000000000002',
      parentId: '0000000000000001',
      kind: 'llm',
      name: 'chat',
      attributes: { 'gen_ai.response.model': 'gpt-4o-2024-08-06', 'gen_ai.provider.name': 'openai' },
      resource,
      eventNames: ['operator.steer'],
    }),
    step({
      id: '0000000000000003',
      parentId: '0000000000000001',
      toolName: 'web_search',
      service: 'agent-svc',
      agentName: 'planner',
      attributes: { 'experiment.arm': 'B' },
      resource,
    }),
    step({
      id: '0000000000000004',
      parentId: '0000000000000001',
      toolName: 'web_search',
      service: 'agent-svc',
      statusCode: 2,
      error: { source: 'status', message: 'Timeout' },
      resource,
    }),
  ]);
}
