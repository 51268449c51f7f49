/**
 * `POST /v1/logs` and gRPC `LogsService/Export`: the same limits, status codes, auth and
 * write-ahead log as traces, with a partial success that names the records trajwatch cannot
 * use. The pipeline behind them is the real one.
 */
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../../src/assemble/limits.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { DurableIngest, WAL_PARTITION } from '../../../src/ingest/wal/durable-ingest.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, LOGS_EXPORT_PATH } from '../../../src/ingest/otlp/grpc-receiver.ts';
import { createHttpReceiver } from '../../../src/ingest/otlp/http-receiver.ts';
import type { PipelineInput } from '../../../src/ingest/pipeline-input.ts';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';
import { SpanWal } from '../../../src/ingest/wal/span-wal.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import { collect } from '../../helpers/collect.ts';

const TRACE = '5b8efff798038103d269b633813fc60c';
const TOOL_SPAN = 'bbbbbbbbbbbbbbbb';

const str = (stringValue: string) => ({ stringValue });
const kvlist = (entries: Record<string, unknown>) => ({ kvlistValue: { values: Object.entries(entries).map(([key, value]) => ({ key, value })) } });

/** Strands' tool-input event as a log record: the call's args and id in the body. */
const toolInputRecord = (extra: Record<string, unknown> = {}) => ({
  timeUnixNano: '1700000000500000000',
  traceId: TRACE,
  spanId: TOOL_SPAN,
  eventName: 'gen_ai.tool.message',
  body: kvlist({ content: str('{"city":"Paris"}'), id: str('call-1') }),
  ...extra,
});

const logsRequest = (records: unknown[]) =>
  JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 't' }, logRecords: records }] }] });

const spansRequest = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [] },
      scopeSpans: [
        {
          scope: { name: 't' },
          spans: [
            {
              traceId: TRACE,
              spanId: 'aaaaaaaaaaaaaaaa',
              name: 'invoke_agent',
              startTimeUnixNano: '1700000000000000000',
              endTimeUnixNano: '1700000002000000000',
              attributes: [{ key: 'gen_ai.operation.name', value: str('invoke_agent') }],
            },
            {
              traceId: TRACE,
              spanId: TOOL_SPAN,
              parentSpanId: 'aaaaaaaaaaaaaaaa',
              name: 'execute_tool get_weather',
              startTimeUnixNano: '1700000000100000000',
              endTimeUnixNano: '1700000000900000000',
              attributes: [
                { key: 'gen_ai.operation.name', value: str('execute_tool') },
                { key: 'gen_ai.tool.name', value: str('get_weather') },
              ],
            },
          ],
        },
      ],
    },
  ],
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function pipeline(assembler: Record<string, unknown> = {}) {
  const closed: Trajectory[] = [];
  const p = new Pipeline({
    limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 0, ...assembler }),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
    onTrajectory: (t) => closed.push(t),
  });
  return { pipeline: p, closed };
}

async function http(target: PipelineInput, receiver: Record<string, unknown> = {}) {
  const server: Server = createHttpReceiver(ReceiverConfigSchema.parse(receiver), target);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function grpcAt(target: PipelineInput, receiver: Record<string, unknown> = {}) {
  const server = createGrpcReceiver(ReceiverConfigSchema.parse(receiver), target);
  const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
  cleanups.push(() => closeGrpcReceiver(server, 100));
  return `127.0.0.1:${port}`;
}

function exportLogs(address: string, body: Buffer, metadata = new grpc.Metadata()): Promise<{ error: grpc.ServiceError | null; response?: Buffer }> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  cleanups.push(() => client.close());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      LOGS_EXPORT_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (error, response) => resolve({ error, ...(response === undefined ? {} : { response }) }),
    );
  });
}

const JSON_H = { 'content-type': 'application/json' };
const post = (url: string, body: string | Uint8Array, headers: Record<string, string> = JSON_H) => fetch(url, { method: 'POST', body, headers });

/** ExportLogsServiceRequest { resource_logs { scope_logs { log_records { event_name, trace_id, span_id } } } }, by hand. */
function protoRecord(eventName: string, traceId = TRACE, spanId = TOOL_SPAN): Buffer {
  const field = (n: number, bytes: Buffer) => Buffer.concat([Buffer.from([(n << 3) | 2, bytes.length]), bytes]);
  const record = Buffer.concat([field(9, Buffer.from(traceId, 'hex')), field(10, Buffer.from(spanId, 'hex')), field(12, Buffer.from(eventName))]);
  return field(1, field(2, field(2, record)));
}

describe('POST /v1/logs', () => {
  it('200 and holds a content event; the trajectory carries it once its span arrives', async () => {
    const { pipeline: p, closed } = pipeline();
    const url = await http(p);
    const res = await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect((await post(`${url}/v1/traces`, spansRequest)).status).toBe(200);
    p.tick(Date.now() + 1);
    const tool = closed[0]!.steps.find((s) => s.id === TOOL_SPAN)!;
    expect(tool.args?.parsed).toEqual({ city: 'Paris' });
    expect(tool.toolCallId).toBe('call-1');
  });

  it('partialSuccess names malformed records and content events naming no span; application logs are only counted', async () => {
    const { pipeline: p } = pipeline();
    const url = await http(p);
    const records = [
      toolInputRecord(),
      toolInputRecord({ traceId: undefined, spanId: undefined }),
      toolInputRecord({ spanId: 'abcd' }),
      { body: str('GET /health 200'), severityNumber: 9 },
    ];
    const res = await post(`${url}/v1/logs`, logsRequest(records));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      partialSuccess: {
        rejectedLogRecords: '2',
        errorMessage: '1 log record(s): span id must be empty or 8 bytes, got 2; 1 log record(s): GenAI content event without a trace and span id',
      },
    });
    expect(p.logOutcomes()).toMatchObject({ held: 1, refused: 1, 'no-span-context': 1, 'not-content-event': 1 });
  });

  it('accepts protobuf and gzip, and answers in the request content type', async () => {
    const { pipeline: p } = pipeline();
    const url = await http(p);
    const res = await post(`${url}/v1/logs`, gzipSync(protoRecord('gen_ai.choice')), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-protobuf');
    expect(p.logOutcomes().held).toBe(1);
  });

  it('400 for an undecodable body, 413 above the limits, 415 for another content type, 405 for GET', async () => {
    const { pipeline: p } = pipeline();
    const url = await http(p, { maxBodyBytes: 2048, maxDecompressedBytes: 4096 });
    expect((await post(`${url}/v1/logs`, 'not json')).status).toBe(400);
    expect((await post(`${url}/v1/logs`, Buffer.from([0x0a, 0x05, 0x01]), { 'content-type': 'application/x-protobuf' })).status).toBe(400);
    expect((await post(`${url}/v1/logs`, 'x'.repeat(3000))).status).toBe(413);
    expect((await post(`${url}/v1/logs`, gzipSync(' '.repeat(10_000)), { ...JSON_H, 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await post(`${url}/v1/logs`, '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await fetch(`${url}/v1/logs`)).status).toBe(405);
    expect(p.logOutcomes().held).toBe(0);
  });

  it('503 with Retry-After when the pipeline is at its limit', async () => {
    const { pipeline: p } = pipeline({ maxOpenTrajectories: 1 });
    const url = await http(p);
    expect((await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]))).status).toBe(200);
    const res = await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
  });

  it('401 without the token, like /v1/traces', async () => {
    process.env['TRAJWATCH_TEST_LOGS_TOKEN'] = 'sekret';
    const { pipeline: p } = pipeline();
    const url = await http(p, { auth: { tokenEnv: 'TRAJWATCH_TEST_LOGS_TOKEN' } });
    expect((await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]))).status).toBe(401);
    expect((await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]), { ...JSON_H, authorization: 'Bearer sekret' })).status).toBe(200);
    expect(p.logOutcomes().held).toBe(1);
  });

  it('404 when the target takes no logs', async () => {
    const url = await http({ admission: () => undefined, accept: () => {} });
    expect((await post(`${url}/v1/logs`, logsRequest([]))).status).toBe(404);
  });
});

describe('gRPC LogsService/Export', () => {
  it('OK and holds the record; partialSuccess (field 1) for a content event naming no span', async () => {
    const { pipeline: p } = pipeline();
    const address = await grpcAt(p);
    const ok = await exportLogs(address, protoRecord('gen_ai.choice'));
    expect(ok.error).toBeNull();
    expect(ok.response?.length).toBe(0);
    const partial = await exportLogs(address, protoRecord('gen_ai.choice', '0'.repeat(32), '0'.repeat(16)));
    expect(partial.error).toBeNull();
    // ExportLogsServiceResponse { partial_success { rejected_log_records: 1, error_message } }
    expect(partial.response![0]).toBe(0x0a);
    expect(partial.response!.subarray(2, 4)).toEqual(Buffer.from([0x08, 0x01]));
    expect(p.logOutcomes()).toMatchObject({ held: 1, 'no-span-context': 1 });
  });

  it('INVALID_ARGUMENT for an undecodable request, UNAUTHENTICATED without the token, RESOURCE_EXHAUSTED at the memory bound', async () => {
    process.env['TRAJWATCH_TEST_LOGS_TOKEN'] = 'sekret';
    const { pipeline: p } = pipeline({ maxOpenTrajectories: 1 });
    const address = await grpcAt(p, { auth: { tokenEnv: 'TRAJWATCH_TEST_LOGS_TOKEN' } });
    const auth = new grpc.Metadata();
    auth.set('authorization', 'Bearer sekret');
    expect((await exportLogs(address, protoRecord('gen_ai.choice'))).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await exportLogs(address, Buffer.from([0x0a, 0x09, 0x01]), auth)).error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await exportLogs(address, protoRecord('gen_ai.choice'), auth)).error).toBeNull();
    expect((await exportLogs(address, protoRecord('gen_ai.choice'), auth)).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });
});

describe('logs through the write-ahead log', () => {
  it('a logs request is acknowledged once logged, held under its log position, and replayed as logs after a restart', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'trajwatch-logs-wal-')), 'wal');
    const options = { maxBytes: 1 << 20, segmentBytes: 1 << 16 };
    const first = pipeline({ quietPeriodMs: 600_000 });
    const opened = await SpanWal.open(dir, options);
    const ingest = new DurableIngest(first.pipeline, opened.wal);
    const url = await http(ingest);
    expect((await post(`${url}/v1/logs`, logsRequest([toolInputRecord()]))).status).toBe(200);
    expect((await post(`${url}/v1/traces`, spansRequest)).status).toBe(200);
    // the held record keeps its request in the log until the trajectory is finished
    expect(first.pipeline.committable().get(WAL_PARTITION)).toBe(0);
    await ingest.close();

    const reopened = await SpanWal.open(dir, options);
    expect((await collect(reopened.records)).map((r) => [r.seq, r.signal, r.format])).toEqual([
      [0, 'logs', 'json'],
      [1, 'traces', 'json'],
    ]);
    const second = pipeline();
    const again = new DurableIngest(second.pipeline, reopened.wal);
    cleanups.push(() => again.close());
    expect(await again.replay(reopened.records)).toEqual({ replayed: 2, undecodable: 0 });
    second.pipeline.tick(Date.now() + 1);
    expect(second.closed[0]!.steps.find((s) => s.id === TOOL_SPAN)!.args?.parsed).toEqual({ city: 'Paris' });
  });
});
