import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeOtlpJsonAsProto } from '../fixtures/otlp/protobufjs-codec.ts';
import { attribute, concat, nestedArrayValue, raw, request as protoRequest, spanFields } from '../fixtures/otlp/proto-bytes.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { metricValue, postJson } from './agent-run.ts';

const MAX_DECOMPRESSED = 8 * 1024 * 1024;

let serve: ServeProcess;
beforeAll(async () => {
  serve = await startServe({
    receiver: { maxDecompressedBytes: MAX_DECOMPRESSED },
    assembler: { quietPeriodMs: 200, idleTimeoutMs: 1_000, maxSpansPerTrajectory: 10_000 },
  });
});
afterAll(async () => {
  expect(await serve.stop()).toBe(0);
});

const attr = (key: string, value: unknown) => ({ key, value });
const span = (traceId: string, spanId: string, extra: Record<string, unknown> = {}) => ({
  traceId,
  spanId,
  name: `s-${spanId}`,
  startTimeUnixNano: '1760000000000000000',
  endTimeUnixNano: '1760000001000000000',
  ...extra,
});
const req = (spans: unknown[]) => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

async function postProto(body: Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', ...headers }, body });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function trajectory(key: string) {
  const rows = await waitForLines<{ key: string; complete: boolean; incompleteReasons: string[]; steps: unknown[] }>(
    join(serve.dataDir, 'trajectories.jsonl'),
    (r) => r.some((t) => t.key === key),
    20_000,
  );
  return rows.filter((t) => t.key === key);
}

describe('hostile shapes against a running serve: each bounded and answered clearly', () => {
  it('gzip bomb: 1 GiB of zeros in ~1 MiB of gzip is cut at maxDecompressedBytes and answered 413', async () => {
    // Built in 64 MiB pieces: concatenated gzip members are one valid gzip stream.
    const piece = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => piece));
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const raw = await fetch(`${serve.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: bomb,
    });
    expect(raw.status).toBe(413);
    expect(await raw.json()).toEqual({ code: 8, message: `decompressed body exceeds maxDecompressedBytes (${MAX_DECOMPRESSED} bytes)` });
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
  });

  it('deeply nested AnyValues (JSON and protobuf, 10,000 levels) are refused 400 naming maxAnyValueDepth', async () => {
    // Built as text: JSON.stringify itself cannot go 10,000 levels deep.
    const nested = `${'{"arrayValue":{"values":['.repeat(10_000)}{"stringValue":"bottom"}${']}}'.repeat(10_000)}`;
    const text = JSON.stringify(req([span('d0000000000000000000000000000001', 'd000000000000001', { attributes: [attr('deep', 'NESTED')] })]));
    const json = await postJson(serve.url, text.replace('"NESTED"', nested));
    expect(json.status).toBe(400);
    expect(JSON.parse(json.text).message).toMatch(/maxAnyValueDepth/);
    const proto = await postProto(
      protoRequest(concat(spanFields({ traceId: 'd0000000000000000000000000000002' }), attribute('deep', nestedArrayValue(10_000)))),
    );
    expect(proto.status).toBe(400);
    expect(proto.bytes.toString('latin1')).toMatch(/maxAnyValueDepth/);
  });

  it('a span with 100,000 attributes is accepted whole within the body caps and stored', async () => {
    const attributes = Array.from({ length: 100_000 }, (_, i) => attr(`k${i}`, { intValue: String(i) }));
    const res = await postJson(serve.url, req([span('a0000000000000000000000000000001', 'a000000000000001', { attributes })]));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({});
    const [t] = await trajectory('a0000000000000000000000000000001');
    expect(t!.steps).toHaveLength(1);
  });

  it('invalid UTF-8 in protobuf strings and in a JSON body is decoded with replacement characters, not a crash', async () => {
    const badName = Buffer.from([0x61, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xff]);
    // Field 5 (name) repeated: the last one wins, and it is not UTF-8.
    const spanBytes = concat(spanFields({ traceId: 'b0000000000000000000000000000001', name: 'x' }), raw(5, badName));
    const proto = await postProto(protoRequest(spanBytes));
    expect(proto.status).toBe(200);
    const jsonBody = Buffer.concat([
      Buffer.from(JSON.stringify(req([span('b0000000000000000000000000000002', 'b000000000000002', { name: 'PLACEHOLDER' })])).split('PLACEHOLDER')[0]!),
      badName,
      Buffer.from(JSON.stringify(req([span('b0000000000000000000000000000002', 'b000000000000002', { name: 'PLACEHOLDER' })])).split('PLACEHOLDER')[1]!),
    ]);
    const json = await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: jsonBody });
    expect(json.status).toBe(200);
    const [t] = await trajectory('b0000000000000000000000000000002');
    expect(JSON.stringify(t)).toContain('\ufffd');
  });

  it('all-zero trace and span ids are rejected per span (200 with partialSuccess), the valid span kept', async () => {
    const res = await postJson(
      serve.url,
      req([
        span('00000000000000000000000000000000', 'c000000000000001'),
        span('c0000000000000000000000000000001', '0000000000000000'),
        span('c0000000000000000000000000000001', 'c000000000000002'),
      ]),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: '1 span(s): trace id is all zero; 1 span(s): span id is all zero' },
    });
  });

  it('timestamps out of range: end before start is rejected, values past uint64 refuse the body, the far future is kept as given', async () => {
    const backwards = await postJson(
      serve.url,
      req([span('e0000000000000000000000000000001', 'e000000000000001', { startTimeUnixNano: '2000', endTimeUnixNano: '1000' })]),
    );
    expect(backwards.status).toBe(200);
    expect(JSON.parse(backwards.text).partialSuccess.errorMessage).toMatch(/end time 1000 is before start time 2000/);
    const overflow = await postJson(
      serve.url,
      req([span('e0000000000000000000000000000002', 'e000000000000002', { endTimeUnixNano: '99999999999999999999999' })]),
    );
    expect(overflow.status).toBe(400);
    expect(JSON.parse(overflow.text).message).toMatch(/endTimeUnixNano/);
    const future = await postJson(
      serve.url,
      req([
        span('e0000000000000000000000000000003', 'e000000000000003', { startTimeUnixNano: '18446744073709551614', endTimeUnixNano: '18446744073709551615' }),
      ]),
    );
    expect(future.status).toBe(200);
    expect(JSON.parse(future.text)).toEqual({});
    const [t] = await trajectory('e0000000000000000000000000000003');
    expect(t!.steps).toHaveLength(1);
  });

  it('100,000 spans in one trace: accepted, cut into trajectories of maxSpansPerTrajectory closed as incomplete (span-limit)', async () => {
    const traceId = 'f0000000000000000000000000000001';
    const spans = Array.from({ length: 100_000 }, (_, i) =>
      span(traceId, `f${(i + 1).toString(16).padStart(15, '0')}`, i === 0 ? {} : { parentSpanId: 'f000000000000001' }),
    );
    const body = encodeOtlpJsonAsProto(req(spans));
    const res = await postProto(body);
    expect(res.status).toBe(200);
    const rows = await waitForLines<{ key: string; complete: boolean; incompleteReasons: string[]; steps: unknown[] }>(
      join(serve.dataDir, 'trajectories.jsonl'),
      (r) => r.filter((t) => t.key === traceId).reduce((n, t) => n + t.steps.length, 0) >= 100_000,
      30_000,
    );
    const parts = rows.filter((t) => t.key === traceId);
    expect(Math.max(...parts.map((t) => t.steps.length))).toBeLessThanOrEqual(10_000);
    expect(parts.filter((t) => t.incompleteReasons.includes('span-limit')).length).toBeGreaterThanOrEqual(9);
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(metricValue(metrics, 'trajwatch_trajectory_incomplete_reasons_total', { reason: 'span-limit' })).toBeGreaterThanOrEqual(9);
  });

  it('a trace that never ends (no root span ever arrives) is closed by idleTimeoutMs as incomplete', async () => {
    const traceId = '90000000000000000000000000000001';
    const res = await postJson(serve.url, req([span(traceId, '9000000000000002', { parentSpanId: '9000000000000001' })]));
    expect(res.status).toBe(200);
    const [t] = await trajectory(traceId);
    expect(t!.complete).toBe(false);
    expect(t!.incompleteReasons).toContain('idle-timeout');
  });
});
