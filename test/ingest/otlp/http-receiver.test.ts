import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../../src/assemble/limits.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { createHttpReceiver } from '../../../src/ingest/otlp/http-receiver.ts';
import { ReceiverConfigSchema } from '../../../src/ingest/otlp/receiver-config.ts';
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

function request(spans: unknown[]) {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans }] }] });
}

let server: Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

async function start(receiver: Record<string, unknown> = {}, assembler: Record<string, unknown> = {}) {
  const closed: Trajectory[] = [];
  const pipeline = new Pipeline({
    limits: AssemblerLimitsSchema.parse(assembler),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
    onTrajectory: (t) => closed.push(t),
  });
  server = createHttpReceiver(ReceiverConfigSchema.parse(receiver), pipeline);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  return { url, pipeline, closed };
}

async function post(url: string, body: string | Uint8Array, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', body, headers });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: new TextDecoder().decode(bytes) };
}

const JSON_H = { 'content-type': 'application/json' };
const PROTO_H = { 'content-type': 'application/x-protobuf' };

describe('OTLP/HTTP receiver answers', () => {
  it('200 with an empty response for a good JSON request, and keeps the spans', async () => {
    const { url, pipeline } = await start();
    const res = await post(url, request([span('aaaaaaaaaaaaaaaa')]), JSON_H);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(res.text)).toEqual({});
    expect(pipeline.assembler.stats().openTrajectories).toBe(1);
  });

  it('200 for an empty request', async () => {
    const { url } = await start();
    expect((await post(url, '{}', JSON_H)).status).toBe(200);
    expect((await post(url, new Uint8Array(0), PROTO_H)).status).toBe(200);
  });

  it('200 with partialSuccess naming the invalid spans, keeping the valid ones', async () => {
    const { url, pipeline } = await start();
    const body = request([span('aaaaaaaaaaaaaaaa'), span('bbbbbbbbbbbbbbbb', { endTimeUnixNano: '1' }), span('0000000000000000')]);
    const res = await post(url, body, JSON_H);
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.text) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    expect(answer.partialSuccess.rejectedSpans).toBe('2');
    expect(answer.partialSuccess.errorMessage).toMatch(/end|before|start/i);
    expect(answer.partialSuccess.errorMessage).toMatch(/zero|span id/i);
    expect(pipeline.counts).toMatchObject({ spansAccepted: 1, spansRejected: 2 });
  });

  it('400 with a google.rpc.Status for an undecodable JSON body', async () => {
    const { url } = await start();
    const res = await post(url, '{"resourceSpans": [', JSON_H);
    expect(res.status).toBe(400);
    const status = JSON.parse(res.text) as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toMatch(/undecodable OTLP json body/);
  });

  it('400 with a protobuf google.rpc.Status for an undecodable protobuf body', async () => {
    const { url } = await start();
    const res = await post(url, new Uint8Array([0x0a, 0xff, 0xff, 0xff]), PROTO_H);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/x-protobuf');
    // google.rpc.Status: field 1 (code) = 3, then field 2 (message) as UTF-8 text.
    expect([...res.bytes.slice(0, 2)]).toEqual([0x08, 3]);
    expect(res.text).toMatch(/undecodable OTLP protobuf body/);
  });

  it('400 for a body that claims gzip but is not', async () => {
    const { url } = await start();
    const res = await post(url, 'not gzip', { ...JSON_H, 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/gzip/);
  });

  it('413 above maxBodyBytes', async () => {
    const { url } = await start({ maxBodyBytes: 1024 });
    const res = await post(url, request([span('aaaaaaaaaaaaaaaa', { name: 'x'.repeat(4096) })]), JSON_H);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).message).toMatch(/maxBodyBytes \(1024 bytes\)/);
  });

  it('413 for a gzip bomb: small on the wire, over maxDecompressedBytes once inflated', async () => {
    const { url, pipeline } = await start({ maxDecompressedBytes: 1024 * 1024 });
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await post(url, bomb, { ...JSON_H, 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).message).toMatch(/maxDecompressedBytes/);
    expect(pipeline.counts.spansAccepted).toBe(0);
  });

  it('415 for another content type, and for an unknown content encoding', async () => {
    const { url } = await start();
    const a = await post(url, 'hello', { 'content-type': 'text/plain' });
    expect(a.status).toBe(415);
    expect(JSON.parse(a.text).message).toMatch(/unsupported Content-Type "text\/plain"/);
    const b = await post(url, '{}', { ...JSON_H, 'content-encoding': 'br' });
    expect(b.status).toBe(415);
    expect(JSON.parse(b.text).message).toMatch(/Content-Encoding "br"/);
  });

  it('405 for a wrong method and 404 for a wrong path', async () => {
    const { url } = await start();
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const wrong = await fetch(url.replace('/v1/traces', '/v1/metrics'), { method: 'POST', body: '{}', headers: JSON_H });
    expect(wrong.status).toBe(404);
    expect(((await wrong.json()) as { message: string }).message).toMatch(/no route for \/v1\/metrics/);
  });

  it('503 with Retry-After when the assembler is at its limit, and nothing half-accepted', async () => {
    const { url, pipeline } = await start({ retryAfterSeconds: 3 }, { maxOpenTrajectories: 1 });
    expect((await post(url, request([span('aaaaaaaaaaaaaaaa')]), JSON_H)).status).toBe(200);
    const res = await post(url, request([span('cccccccccccccccc')]), JSON_H);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(JSON.parse(res.text).message).toMatch(/max-open-trajectories/);
    expect(pipeline.counts.spansAccepted).toBe(1);
  });

  it('accepts gzip-compressed protobuf and JSON', async () => {
    const { url, pipeline } = await start();
    const res = await post(url, gzipSync(request([span('aaaaaaaaaaaaaaaa')])), { ...JSON_H, 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(pipeline.counts.spansAccepted).toBe(1);
  });
});
