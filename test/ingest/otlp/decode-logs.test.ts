/**
 * The OTLP logs decoders, checked against two independent encoders: protobufjs over the logs
 * schema (test/fixtures/otlp/logs.proto) and the OpenTelemetry JS SDK's own logs serializers
 * (`@opentelemetry/otlp-transformer`), fed by real `@opentelemetry/sdk-logs` records.
 */
import { fileURLToPath } from 'node:url';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/errors.ts';
import type { DecodedLogsRequest } from '../../../src/ingest/log-record.ts';
import { decodeOtlpLogsJson } from '../../../src/ingest/otlp/json-logs-decode.ts';
import { decodeOtlpLogsProto } from '../../../src/ingest/otlp/proto-logs-decode.ts';

const root = protobuf.loadSync(fileURLToPath(new URL('../../fixtures/otlp/logs.proto', import.meta.url)));
const requestType = root.lookupType('opentelemetry.proto.logs.v1.ExportLogsServiceRequest');

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';

function ok(result: DecodedLogsRequest | DecodeError): DecodedLogsRequest {
  if (result instanceof DecodeError) throw result;
  return result;
}

function encode(request: Record<string, unknown>): Uint8Array {
  return requestType.encode(requestType.fromObject(request)).finish();
}

const kv = (key: string, value: Record<string, unknown>) => ({ key, value });

describe('decodeOtlpLogsProto against protobufjs', () => {
  it('reads ids, event name, times, attributes, a kvlist body and the resource', () => {
    const bytes = encode({
      resourceLogs: [
        {
          scopeLogs: [
            {
              scope: { name: 'openai-v2' },
              logRecords: [
                {
                  timeUnixNano: 1_700_000_000_000_000_123n.toString(),
                  observedTimeUnixNano: '1700000000000000999',
                  severityNumber: 9,
                  traceId: Buffer.from(TRACE, 'hex'),
                  spanId: Buffer.from(SPAN, 'hex'),
                  eventName: 'gen_ai.choice',
                  attributes: [kv('gen_ai.system', { stringValue: 'openai' })],
                  body: {
                    kvlistValue: {
                      values: [kv('index', { intValue: 0 }), kv('message', { kvlistValue: { values: [kv('content', { stringValue: 'done' })] } })],
                    },
                  },
                  flags: 1,
                },
                { observedTimeUnixNano: '42', body: { stringValue: 'plain app log' } },
              ],
            },
          ],
          // after the records: the decoder fills the shared resource in place
          resource: { attributes: [kv('service.name', { stringValue: 'svc' })] },
        },
      ],
    });
    const decoded = ok(decodeOtlpLogsProto(bytes));
    expect(decoded.rejected).toEqual([]);
    const [choice, plain] = decoded.logs;
    expect(choice).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      eventName: 'gen_ai.choice',
      timeUnixNano: 1_700_000_000_000_000_123n,
      attributes: { 'gen_ai.system': 'openai' },
      body: { index: 0, message: { content: 'done' } },
      resource: { 'service.name': 'svc' },
    });
    expect(choice!.encodedBytes).toBeGreaterThan(40);
    // no ids: kept, naming no span; no time: the observed time
    expect(plain).toMatchObject({ eventName: '', timeUnixNano: 42n, body: 'plain app log' });
    expect(plain!.traceId).toBeUndefined();
    expect(plain!.spanId).toBeUndefined();
  });

  it('rejects a record whose id has the wrong length and keeps the others (partial success)', () => {
    const bytes = encode({
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: Buffer.from('abcd', 'hex') }, { eventName: 'x' }] }] }],
    });
    const decoded = ok(decodeOtlpLogsProto(bytes));
    expect(decoded.rejected).toEqual([{ traceId: 'abcd', reason: 'trace id must be empty or 16 bytes, got 2' }]);
    expect(decoded.logs.map((l) => l.eventName)).toEqual(['x']);
  });

  it('treats all-zero ids as no context', () => {
    const bytes = encode({
      resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: Buffer.alloc(16), spanId: Buffer.alloc(8) }] }] }],
    });
    const [record] = ok(decodeOtlpLogsProto(bytes)).logs;
    expect(record!.traceId).toBeUndefined();
    expect(record!.spanId).toBeUndefined();
  });

  it('answers a truncated body with a DecodeError, never a throw', () => {
    const bytes = encode({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ eventName: 'gen_ai.choice' }] }] }] });
    expect(decodeOtlpLogsProto(bytes.subarray(0, bytes.length - 3))).toBeInstanceOf(DecodeError);
    expect(ok(decodeOtlpLogsProto(new Uint8Array()))).toEqual({ logs: [], rejected: [] });
  });
});

describe('decoding records emitted by the OpenTelemetry JS logs SDK', () => {
  async function sdkRecords() {
    const exporter = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'logs-decoder-test' }),
      processors: [new SimpleLogRecordProcessor({ exporter })],
    });
    const logger = provider.getLogger('genai');
    const spanContext = { traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED };
    const active = trace.setSpanContext(context.active(), spanContext);
    logger.emit({
      eventName: 'gen_ai.tool.message',
      context: active,
      attributes: { 'gen_ai.system': 'openai' },
      body: { content: '{"city":"Paris"}', id: 'call_1', nested: { n: 12345678901234, ok: true } },
    });
    logger.emit({ body: 'no context', attributes: { 'event.name': 'gen_ai.user.message' } });
    await provider.forceFlush();
    await new Promise((resolve) => setImmediate(resolve)); // the simple processor exports in a later turn
    return exporter.getFinishedLogRecords();
  }

  it('protobuf and JSON encodings decode to the same records, carrying what the SDK emitted', async () => {
    const records = await sdkRecords();
    const fromProto = ok(decodeOtlpLogsProto(ProtobufLogsSerializer.serializeRequest(records)!));
    const fromJson = ok(decodeOtlpLogsJson(Buffer.from(JsonLogsSerializer.serializeRequest(records)!).toString('utf8')));
    const strip = (d: DecodedLogsRequest) => d.logs.map(({ encodedBytes: _, ...rest }) => rest);
    expect(strip(fromJson)).toEqual(strip(fromProto));
    const [tool, plain] = fromProto.logs;
    expect(tool).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      eventName: 'gen_ai.tool.message',
      body: { content: '{"city":"Paris"}', id: 'call_1', nested: { n: 12345678901234, ok: true } },
      resource: { 'service.name': 'logs-decoder-test' },
    });
    expect(tool!.timeUnixNano).toBeGreaterThan(0n);
    expect(plain).toMatchObject({ eventName: '', attributes: { 'event.name': 'gen_ai.user.message' }, body: 'no context' });
    expect(plain!.traceId).toBeUndefined();
  });

  it('the JSON decoder refuses a body that is not a request, naming the path', () => {
    const result = decodeOtlpLogsJson('{"resourceLogs":[{"scopeLogs":{}}]}');
    expect(result).toBeInstanceOf(DecodeError);
    expect((result as DecodeError).message).toContain('resourceLogs[0]');
    expect(ok(decodeOtlpLogsJson('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"zz"}]}]}]}')).rejected).toEqual([
      { reason: 'trace id is not hex' },
    ]);
  });
});

describe('bounds', () => {
  it('a body nested deeper than maxAnyValueDepth is a DecodeError in both encodings', () => {
    let value: Record<string, unknown> = { stringValue: 'x' };
    for (let i = 0; i < 40; i++) value = { arrayValue: { values: [value] } };
    const request = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ eventName: 'gen_ai.choice', body: value }] }] }] };
    expect(decodeOtlpLogsJson(JSON.stringify(request))).toBeInstanceOf(DecodeError);
    expect(decodeOtlpLogsProto(encode(request))).toBeInstanceOf(DecodeError);
  });
});
