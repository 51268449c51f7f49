import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../../src/analyze.ts';
import { AssemblerLimitsSchema } from '../../../src/assemble/limits.ts';
import { ConfigSchema } from '../../../src/config-schema.ts';
import {
  bindGrpcReceiver,
  closeGrpcReceiver,
  createGrpcReceiver,
  type GrpcRequestObserver,
  TRACE_EXPORT_PATH,
} from '../../../src/ingest/otlp/grpc-receiver.ts';
import type { PipelineInput } from '../../../src/ingest/pipeline-input.ts';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';
import type { DecodedRequest } from '../../../src/ingest/span.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';

const TRACE = '5b8efff798038103d269b633813fc60c';

function span(spanId: string, extra: Record<string, unknown> = {}) {
  return {
    traceId: TRACE,
    spanId,
    name: `s-${spanId}`,
    kind: 1,
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000001000000000',
    ...extra,
  };
}

function request(spans: ReturnType<typeof span>[]): Buffer {
  const type = schemas.lookupType('ExportTraceServiceRequest');
  const bytes = (hex: string) => Buffer.from(hex, 'hex');
  const message = type.fromObject({
    resourceSpans: [
      {
        scopeSpans: [{ spans: spans.map((s) => ({ ...s, traceId: bytes(s.traceId), spanId: bytes(s.spanId) })) }],
      },
    ],
  });
  return Buffer.from(type.encode(message).finish());
}

// An independent codec for requests and answers: protobufjs reflection over the parts of the
// OTLP trace, collector and google.rpc schemas these tests use, written from the .proto files.
const schemas = protobuf.Root.fromJSON({
  nested: {
    Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    Any: { fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
    RetryInfo: { fields: { retryDelay: { type: 'Duration', id: 1 } } },
    Status: {
      fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'Any', id: 3 } },
    },
    PartialSuccess: { fields: { rejectedSpans: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } } },
    ExportTraceServiceResponse: { fields: { partialSuccess: { type: 'PartialSuccess', id: 1 } } },
    OtlpSpan: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        startTimeUnixNano: { type: 'fixed64', id: 7 },
        endTimeUnixNano: { type: 'fixed64', id: 8 },
      },
    },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'OtlpSpan', id: 2 } } },
    ResourceSpans: { fields: { scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
  },
});

interface CallResult {
  error?: grpc.ServiceError;
  response?: Buffer;
}

let servers: grpc.Server[] = [];
let clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  await Promise.all(servers.map(closeGrpcReceiver));
  servers = [];
  clients = [];
});

// The real analyzer: whatever shape the pipeline wants from it, this stays in step.
const analyze = createAnalyzer(ConfigSchema.parse({}));

type Outcome = Parameters<GrpcRequestObserver>[0];
let outcomes: Outcome[] = [];

async function startWith(target: PipelineInput, receiver: Record<string, unknown> = {}) {
  outcomes = [];
  const server = createGrpcReceiver(ReceiverConfigSchema.parse(receiver), target, (o) => outcomes.push(o));
  servers.push(server);
  const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
  return `127.0.0.1:${port}`;
}

async function start(receiver: Record<string, unknown> = {}, assembler: Record<string, unknown> = {}) {
  const pipeline = new Pipeline({ limits: AssemblerLimitsSchema.parse(assembler), clock: 'arrival', analyze, sinks: [] });
  return { address: await startWith(pipeline, receiver), pipeline };
}

function call(address: string, body: Buffer, options: grpc.ChannelOptions = {}): Promise<CallResult> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), options);
  clients.push(client);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      TRACE_EXPORT_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (error, response) => resolve(error === null ? { response } : { error }),
    );
  });
}

function statusDetails(error: grpc.ServiceError) {
  const bin = error.metadata.get('grpc-status-details-bin')[0] as Buffer;
  const status = schemas.lookupType('Status').toObject(schemas.lookupType('Status').decode(bin), { longs: Number }) as {
    code: number;
    message: string;
    details: { typeUrl: string; value: Uint8Array }[];
  };
  const retry = schemas.lookupType('RetryInfo').toObject(schemas.lookupType('RetryInfo').decode(status.details[0]!.value), {
    longs: Number,
  }) as { retryDelay: { seconds: number } };
  const bare = error.metadata.get('google.rpc.retryinfo-bin')[0] as Buffer;
  const pythonRetry = schemas.lookupType('RetryInfo').toObject(schemas.lookupType('RetryInfo').decode(bare), {
    longs: Number,
  }) as { retryDelay: { seconds: number } };
  return { status, retry, pythonRetry };
}

describe('OTLP/gRPC receiver answers', () => {
  it('OK with an empty ExportTraceServiceResponse for a good request, and keeps the spans', async () => {
    const { address, pipeline } = await start();
    const result = await call(address, request([span('aaaaaaaaaaaaaaaa'), span('bbbbbbbbbbbbbbbb')]));
    expect(result.error).toBeUndefined();
    expect(result.response!.length).toBe(0);
    expect(pipeline.counts.spansAccepted).toBe(2);
  });

  it('OK for an empty request', async () => {
    const { address, pipeline } = await start();
    expect((await call(address, Buffer.alloc(0))).error).toBeUndefined();
    expect(pipeline.counts.spansAccepted).toBe(0);
  });

  it('OK with partialSuccess naming the invalid spans, keeping the valid ones', async () => {
    const { address, pipeline } = await start();
    const body = request([span('aaaaaaaaaaaaaaaa'), span('bbbbbbbbbbbbbbbb', { endTimeUnixNano: '1' }), span('0000000000000000')]);
    const result = await call(address, body);
    expect(result.error).toBeUndefined();
    const type = schemas.lookupType('ExportTraceServiceResponse');
    const answer = type.toObject(type.decode(result.response!), { longs: Number }) as {
      partialSuccess: { rejectedSpans: number; errorMessage: string };
    };
    expect(answer.partialSuccess.rejectedSpans).toBe(2);
    expect(answer.partialSuccess.errorMessage).toMatch(/end|before|start/i);
    expect(answer.partialSuccess.errorMessage).toMatch(/zero|span id/i);
    expect(pipeline.counts).toMatchObject({ spansAccepted: 1, spansRejected: 2 });
  });

  it('INVALID_ARGUMENT for an undecodable request, keeping nothing', async () => {
    const { address, pipeline } = await start();
    const result = await call(address, Buffer.from([0x0a, 0xff, 0xff, 0xff]));
    expect(result.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(result.error?.details).toMatch(/undecodable OTLP protobuf request/);
    expect(pipeline.counts.spansAccepted).toBe(0);
  });

  it('RESOURCE_EXHAUSTED with RetryInfo when the assembler is at its memory bound', async () => {
    const { address, pipeline } = await start({ retryAfterSeconds: 3 }, { maxOpenTrajectories: 1 });
    expect((await call(address, request([span('aaaaaaaaaaaaaaaa')]))).error).toBeUndefined();
    const other = request([span('cccccccccccccccc', { traceId: 'ffffffffffffffffffffffffffffffff' })]);
    const { error } = await call(address, other);
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/max-open-trajectories/);
    const { status, retry, pythonRetry } = statusDetails(error!);
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details[0]!.typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    expect(retry.retryDelay.seconds).toBe(3);
    expect(pythonRetry.retryDelay.seconds).toBe(3);
    expect(pipeline.counts.spansAccepted).toBe(1);
  });

  it('UNAVAILABLE with RetryInfo when a sink or log refuses new work', async () => {
    const accepted: DecodedRequest[] = [];
    const address = await startWith(
      { admission: () => 'trajectory-log-backlog', accept: (r) => accepted.push(r) },
      {
        retryAfterSeconds: 5,
      },
    );
    const { error } = await call(address, request([span('aaaaaaaaaaaaaaaa')]));
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toMatch(/trajectory-log-backlog/);
    expect(statusDetails(error!).retry.retryDelay.seconds).toBe(5);
    expect(statusDetails(error!).pythonRetry.retryDelay.seconds).toBe(5);
    expect(accepted).toEqual([]);
  });

  it('accepts a gzip-compressed request', async () => {
    const { address, pipeline } = await start();
    const gzip = { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip };
    const result = await call(address, request([span('aaaaaaaaaaaaaaaa')]), gzip);
    expect(result.error).toBeUndefined();
    expect(pipeline.counts.spansAccepted).toBe(1);
  });

  it('RESOURCE_EXHAUSTED above maxDecompressedBytes, plain or as a gzip bomb, keeping nothing', async () => {
    const { address, pipeline } = await start({ maxDecompressedBytes: 64 * 1024 });
    const big = request([span('aaaaaaaaaaaaaaaa', { name: 'x'.repeat(128 * 1024) })]);
    const plain = await call(address, big);
    expect(plain.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const gzip = { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip };
    const bomb = await call(address, big, gzip);
    expect(bomb.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(bomb.error?.details).toMatch(/decompresses to a size larger than 65536/);
    expect(pipeline.counts.spansAccepted).toBe(0);
  });

  it('UNIMPLEMENTED for another OTLP service', async () => {
    const { address } = await start();
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    clients.push(client);
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (err) => resolve(err),
      ),
    );
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('tells its observer of every call, also those grpc-js ended before trajwatch saw the request', async () => {
    const { address } = await start({ maxDecompressedBytes: 64 * 1024 });
    await call(address, request([span('aaaaaaaaaaaaaaaa'), span('0000000000000000')]));
    await call(address, Buffer.from([0x0a, 0xff, 0xff, 0xff]));
    await call(address, request([span('bbbbbbbbbbbbbbbb', { name: 'x'.repeat(128 * 1024) })]));
    // grpc-js notes the cancel after the client already has its answer: wait for it, bounded.
    for (let i = 0; i < 100 && outcomes.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    expect(outcomes).toEqual([
      { status: 'OK', contentType: 'application/grpc', spans: 1, rejectedSpans: 1, reason: undefined },
      { status: 'INVALID_ARGUMENT', contentType: 'application/grpc', spans: 0, rejectedSpans: 0, reason: 'undecodable' },
      { status: 'NOT_DELIVERED', contentType: 'application/grpc', spans: 0, rejectedSpans: 0, reason: 'message-not-delivered' },
    ]);
  });

  it('after close, refuses new calls (UNAVAILABLE: OTLP clients retry elsewhere or later)', async () => {
    const { address, pipeline } = await start();
    expect((await call(address, request([span('aaaaaaaaaaaaaaaa')]))).error).toBeUndefined();
    await closeGrpcReceiver(servers.pop()!);
    const after = await call(address, request([span('bbbbbbbbbbbbbbbb')]));
    expect(after.error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(pipeline.counts.spansAccepted).toBe(1);
  });
});
