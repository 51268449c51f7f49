import { describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { LogRecord } from '../../src/ingest/log-record.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { makeSpan } from '../normalize/make-span.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';

function replayPipeline() {
  const closed: Trajectory[] = [];
  const pipeline = new Pipeline({
    limits: AssemblerLimitsSchema.parse({}),
    clock: 'event',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
    onTrajectory: (t) => closed.push(t),
  });
  return { pipeline, closed };
}

const record = (overrides: Partial<LogRecord>): LogRecord => ({
  traceId: TRACE,
  spanId: 'b7ad6b7169203331',
  eventName: 'gen_ai.tool.message',
  timeUnixNano: 1_700_000_000_200_000_000n,
  attributes: {},
  body: { content: '{"q":1}' },
  resource: {},
  encodedBytes: 40,
  ...overrides,
});

describe('Pipeline.acceptLogs', () => {
  it('(event clock) a record without a time is as recent as the input so far: it does not close its trajectory before the span', async () => {
    const { pipeline, closed } = replayPipeline();
    // Some earlier input moved the watermark far past the epoch.
    pipeline.accept({ spans: [makeSpan({ traceId: 'f'.repeat(32), parentSpanId: undefined, spanId: '1'.repeat(16) })], rejected: [] });
    pipeline.acceptLogs({ logs: [record({ timeUnixNano: 0n })], rejected: [] });
    const tool = makeSpan({ attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' } });
    pipeline.accept({ spans: [tool], rejected: [] });
    await pipeline.drain('end-of-input');
    const withTool = closed.find((t) => t.traceIds.includes(TRACE))!;
    expect(withTool.revision).toBe(1);
    expect(withTool.steps.find((s) => s.id === tool.spanId)!.args?.parsed).toEqual({ q: 1 });
  });

  it('counts application logs and content events without a span context apart, reporting the latter', () => {
    const { pipeline } = replayPipeline();
    const accepted = pipeline.acceptLogs({
      logs: [
        record({ eventName: '', attributes: {} }),
        record({ traceId: undefined }),
        record({ eventName: '', attributes: { 'event.name': 'gen_ai.choice' } }),
      ],
      rejected: [{ reason: 'bad id' }],
    });
    expect(accepted).toEqual({ unattachable: 1 });
    expect(pipeline.logOutcomes()).toMatchObject({ 'not-content-event': 1, 'no-span-context': 1, held: 1, refused: 1 });
  });
});
