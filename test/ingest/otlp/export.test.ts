import { describe, expect, it } from 'vitest';
import { LOGS_EXPORT, TRACES_EXPORT } from '../../../src/ingest/otlp/export.ts';
import type { PipelineInput } from '../../../src/ingest/pipeline-input.ts';
import type { DecodedRequest } from '../../../src/ingest/span.ts';

const span = (spanId: string) => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId,
  name: 'step',
  startTimeUnixNano: '1',
  endTimeUnixNano: '2',
});
const traces = (...spans: unknown[]) => Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
const logs = (...logRecords: unknown[]) => Buffer.from(JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords }] }] }));

function target(overrides: Partial<PipelineInput> = {}): PipelineInput & { taken: DecodedRequest[] } {
  const taken: DecodedRequest[] = [];
  return { taken, admission: () => undefined, accept: (r) => void taken.push(r), acceptLogs: () => ({ unattachable: 0 }), ...overrides };
}

describe('the export routine (one per signal, both transports)', () => {
  it('refuses before the body is read while the target names a reason', () => {
    expect(TRACES_EXPORT.admit(target({ admission: () => 'max-open-trajectories' }))).toEqual({ kind: 'refused', reason: 'max-open-trajectories' });
    expect(LOGS_EXPORT.admit(target())).toBeUndefined();
  });

  it('answers an undecodable body with the decoder message, and takes nothing', async () => {
    const t = target();
    expect(await TRACES_EXPORT.take(t, Buffer.from('{'), 'json')).toMatchObject({ kind: 'undecodable', message: expect.stringMatching(/not valid JSON/) });
    expect(t.taken).toEqual([]);
  });

  it('accepts the good spans and reports the rejected ones as a partial success', async () => {
    const t = target();
    const result = await TRACES_EXPORT.take(t, traces(span('b7ad6b7169203331'), span('zz')), 'json');
    expect(result).toEqual({ kind: 'accepted', items: 1, partial: { rejected: 1, errorMessage: expect.stringMatching(/^1 span\(s\): /) } });
    expect(t.taken).toHaveLength(1);
  });

  it("refuses, as a value, a request over the pipeline's bounds and a durable accept that did not happen", async () => {
    const bounded = target({ admitRequest: () => 'max-buffered-bytes' });
    expect(await TRACES_EXPORT.take(bounded, traces(span('b7ad6b7169203331')), 'json')).toEqual({ kind: 'refused', reason: 'max-buffered-bytes' });
    expect(bounded.taken).toEqual([]);
    const full = target({ acceptDurably: async () => ({ refused: 'wal-full' }) });
    expect(await TRACES_EXPORT.take(full, traces(span('b7ad6b7169203331')), 'json')).toEqual({ kind: 'refused', reason: 'wal-full' });
    const logsFull = target({ acceptLogsDurably: async () => ({ refused: 'wal-unwritable' }) });
    expect(await LOGS_EXPORT.take(logsFull, logs({ eventName: 'x' }), 'json')).toEqual({ kind: 'refused', reason: 'wal-unwritable' });
  });

  it('counts content events that name no span in the logs partial success', async () => {
    const t = target({ acceptLogs: () => ({ unattachable: 2 }) });
    expect(await LOGS_EXPORT.take(t, logs({ eventName: 'a' }, { eventName: 'b' }), 'json')).toEqual({
      kind: 'accepted',
      items: 2,
      partial: { rejected: 2, errorMessage: '2 log record(s): GenAI content event without a trace and span id' },
    });
  });
});
