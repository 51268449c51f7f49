import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../../src/assemble/limits.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { DurableIngest, WAL_PARTITION } from '../../../src/ingest/wal/durable-ingest.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, TRACE_EXPORT_PATH } from '../../../src/ingest/otlp/grpc-receiver.ts';
import { createHttpReceiver } from '../../../src/ingest/otlp/http-receiver.ts';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';
import { SpanWal } from '../../../src/ingest/wal/span-wal.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import { collect } from '../../helpers/collect.ts';

const ROOT = {
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: 'aaaaaaaaaaaaaaaa',
  name: 'root',
  kind: 1,
  startTimeUnixNano: '1700000000000000000',
  endTimeUnixNano: '1700000001000000000',
};
const BODY = JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans: [ROOT] }] }] });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setUp(wal: { maxBytes?: number } = {}, quietPeriodMs = 600_000) {
  const dir = join(await mkdtemp(join(tmpdir(), 'trajwatch-durable-')), 'wal');
  const options = { maxBytes: wal.maxBytes ?? 1 << 20, segmentBytes: 1 << 16 };
  const closed: Trajectory[] = [];
  const pipeline = new Pipeline({
    limits: AssemblerLimitsSchema.parse({ quietPeriodMs }),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
    onTrajectory: (t) => closed.push(t),
  });
  const opened = await SpanWal.open(dir, options);
  const ingest = new DurableIngest(pipeline, opened.wal);
  cleanups.push(() => ingest.close());
  const server: Server = createHttpReceiver(ReceiverConfigSchema.parse({}), ingest);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  const grpcServer = createGrpcReceiver(ReceiverConfigSchema.parse({}), ingest);
  const grpcPort = await bindGrpcReceiver(grpcServer, { host: '127.0.0.1', port: 0 });
  cleanups.push(() => closeGrpcReceiver(grpcServer, 100));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return { dir, options, pipeline, ingest, closed, url, grpcAddress: `127.0.0.1:${grpcPort}` };
}

function exportGrpc(address: string, body: Buffer): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  cleanups.push(() => client.close());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      TRACE_EXPORT_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (error) => resolve(error),
    );
  });
}

describe('DurableIngest behind the OTLP receivers', () => {
  it('answers HTTP 200 and gRPC OK only for requests that are in the log, under their log position', async () => {
    const { dir, options, pipeline, url, grpcAddress } = await setUp();
    const res = await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    // An empty ExportTraceServiceRequest is a valid protobuf request with no spans.
    expect(await exportGrpc(grpcAddress, Buffer.alloc(0))).toBeNull();
    // Acknowledged means on disk: a second reader of the directory sees both requests.
    const { wal, records } = await SpanWal.open(dir, options);
    await wal.close();
    expect((await collect(records)).map((r) => [r.seq, r.format, r.bytes.toString()])).toEqual([
      [0, 'json', BODY],
      [1, 'protobuf', ''],
    ]);
    // The open trajectory holds request 0; request 1 fed none.
    expect(pipeline.committable().get(WAL_PARTITION)).toBe(0);
    expect(pipeline.assembler.stats().openTrajectories).toBe(1);
  });

  it('answers 503 / UNAVAILABLE with Retry-After when the log is full, and the pipeline never sees the request', async () => {
    const { pipeline, url, grpcAddress } = await setUp({ maxBytes: 1024 });
    const big = JSON.stringify({
      resourceSpans: [
        { resource: { attributes: [{ key: 'pad', value: { stringValue: 'x'.repeat(2_000) } }] }, scopeSpans: [{ scope: { name: 't' }, spans: [ROOT] }] },
      ],
    });
    const res = await fetch(url, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(await res.json()).toEqual({ code: 14, message: 'trajwatch is at its limit (wal-full); retry later' });
    expect(pipeline.counts.spansAccepted).toBe(0);
    expect(pipeline.assembler.stats().openTrajectories).toBe(0);

    // ExportTraceServiceRequest { resource_spans { schema_url: 2,000 × 'x' } }: valid, and too big for the log.
    const inner = Buffer.concat([Buffer.from([0x1a, 0xd0, 0x0f]), Buffer.alloc(2_000, 'x')]);
    const error = await exportGrpc(grpcAddress, Buffer.concat([Buffer.from([0x0a, 0xd3, 0x0f]), inner]));
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toBe('trajwatch is at its limit (wal-full); retry later');
  });

  it('releases a request once its trajectory is closed, so a restart does not replay it', async () => {
    const { dir, options, ingest, pipeline, closed, url } = await setUp({}, 0);
    expect((await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    pipeline.tick(Date.now() + 1);
    expect(closed).toHaveLength(1);
    await pipeline.settled();
    expect(pipeline.committable().get(WAL_PARTITION)).toBe(1);
    await ingest.release();
    expect(ingest.wal.stats().releasedBelow).toBe(1);
    const { wal, records } = await SpanWal.open(dir, options);
    await wal.close();
    expect(await collect(records)).toEqual([]);
  });

  it('replays what the log held under the same positions, holding them until the trajectory closes', async () => {
    const { dir, options, url } = await setUp();
    expect((await fetch(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    const closed: Trajectory[] = [];
    const restarted = new Pipeline({
      limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 0 }),
      clock: 'arrival',
      analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
      sinks: [],
      onTrajectory: (t) => closed.push(t),
    });
    // Pretend the first process died: a second one opens the same directory.
    const { wal, records } = await SpanWal.open(dir, options);
    const again = new DurableIngest(restarted, wal);
    cleanups.push(() => again.close());
    expect(await again.replay(records)).toEqual({ replayed: 1, undecodable: 0 });
    expect(restarted.committable().get(WAL_PARTITION)).toBe(0);
    restarted.tick(Date.now() + 1);
    expect(closed.map((t) => t.steps.length)).toEqual([1]);
  });
});
