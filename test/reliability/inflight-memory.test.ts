/**
 * Memory under concurrent large requests, against a real `serve` (loopback, real HTTP and
 * @grpc/grpc-js clients): bodies in flight are held to `receiver.maxInflightBytes`, the
 * assembler's bounds are held per span at accept time, and the process's peak RSS (VmHWM) stays
 * under the formula of docs/operations.md ("Memory"). Every loop is bounded.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACE_EXPORT_PATH } from '../../src/ingest/otlp/grpc-receiver.ts';
import { concat, request, spanFields, string } from '../fixtures/otlp/proto-bytes.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { metricValue } from './agent-run.ts';

const MiB = 1024 * 1024;
const RECEIVER = { maxBodyBytes: 16 * MiB, maxDecompressedBytes: 64 * MiB, maxInflightBytes: 256 * MiB, wal: { enabled: false } };
const ASSEMBLER = { quietPeriodMs: 200, idleTimeoutMs: 120_000, maxOpenTrajectories: 10_000, maxBufferedBytes: 256 * MiB, maxRetainedBytes: 64 * MiB };

/**
 * docs/operations.md, "Memory": peak RSS ≤ R0 + 2.5 × maxInflightBytes + the assembler's term,
 * R0 the RSS of an idle serve (measured at start here). The first two tests hold the assembler
 * to a few tiny spans, so its term is left out and the in-flight term alone is checked.
 */
const inflightFormulaBytes = (r0: number) => r0 + 2.5 * RECEIVER.maxInflightBytes;
const formulaBytes = (r0: number) => inflightFormulaBytes(r0) + 4 * (ASSEMBLER.maxBufferedBytes + ASSEMBLER.maxRetainedBytes);

function vm(pid: number, key: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}:`))!;
  return Number(/(\d+) kB/.exec(line)![1]) * 1024;
}

/** A valid export request inflating to ~63 MiB: one small span, then an unknown field (skipped by decoders) of repeated bytes. */
function inflatingRequest(i: number): Buffer {
  const span = spanFields({ traceId: (0xa000 + i).toString(16).padStart(32, '0'), spanId: 'ab'.repeat(8), parentSpanId: 'cd'.repeat(8) });
  return Buffer.from(concat(request(span), string(15, 'a'.repeat(63 * MiB))));
}

let serve: ServeProcess;
let grpcPort: number;
let r0: number;
beforeAll(async () => {
  serve = await startServe({ receiver: RECEIVER, assembler: ASSEMBLER });
  for (let i = 0; i < 100 && !/otlp-grpc listening on 127\.0\.0\.1:(\d+)/.test(serve.output()); i++) await new Promise((r) => setTimeout(r, 50));
  grpcPort = Number(/otlp-grpc listening on 127\.0\.0\.1:(\d+)/.exec(serve.output())![1]);
  r0 = vm(serve.child.pid!, 'VmRSS');
});
afterAll(() => {
  // SIGKILL: the trajectories opened here need not be written at exit.
  serve.child.kill('SIGKILL');
});

const metrics = async () => (await fetch(`${serve.url}/metrics`)).text();

describe('memory under concurrent large requests: bounded by the configuration', () => {
  it('24 parallel 64 KiB gzip bodies inflating to 63 MiB: in-flight bytes held to maxInflightBytes, each answered 200 or 503 + Retry-After, RSS under the formula', async () => {
    // One body sent 24 times: compressing 63 MiB 24 times would only slow the test.
    const gzipped = gzipSync(inflatingRequest(0), { level: 9 });
    expect(gzipped.length).toBeLessThan(80 * 1024);
    const bodies = Array.from({ length: 24 }, () => gzipped);
    const answers = await Promise.all(
      bodies.map((body) =>
        fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, body }).then(
          async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), text: Buffer.from(await r.arrayBuffer()).toString('latin1') }),
          (err: Error) => ({ status: 0, retryAfter: null, text: String(err.cause ?? err) }),
        ),
      ),
    );
    const refused = answers.filter((a) => a.status === 503);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.retryAfter).toBe('2');
      expect(a.text).toContain('max-inflight-bytes');
    }
    const text = await metrics();
    expect(metricValue(text, 'trajwatch_otlp_requests_refused_total', { transport: 'http', reason: 'max-inflight-bytes' })).toBe(refused.length);
    expect(metricValue(text, 'trajwatch_receiver_inflight_bytes')).toBe(0);
    const peak = vm(serve.child.pid!, 'VmHWM');
    console.log(
      `http: R0 ${(r0 / MiB).toFixed(0)} MiB, VmHWM ${(peak / MiB).toFixed(0)} MiB, formula ${(inflightFormulaBytes(r0) / MiB).toFixed(0)} MiB, refused ${refused.length}/24`,
    );
    expect(peak).toBeLessThan(inflightFormulaBytes(r0));
  }, 120_000);

  it('16 parallel gzip gRPC calls inflating to 63 MiB: RESOURCE_EXHAUSTED with RetryInfo past the budget, RSS under the formula', async () => {
    const client = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    });
    const message = inflatingRequest(100);
    const outcomes = await Promise.all(
      Array.from(
        { length: 16 },
        () =>
          new Promise<{ code: number; retry: boolean }>((resolve) => {
            client.makeUnaryRequest(
              TRACE_EXPORT_PATH,
              (b: Buffer) => b,
              (b: Buffer) => b,
              message,
              (err) => resolve({ code: err?.code ?? 0, retry: err?.metadata?.get('google.rpc.retryinfo-bin').length === 1 }),
            );
          }),
      ),
    );
    client.close();
    const exhausted = outcomes.filter((o) => o.code === grpc.status.RESOURCE_EXHAUSTED);
    expect(outcomes.filter((o) => o.code !== grpc.status.OK && o.code !== grpc.status.RESOURCE_EXHAUSTED)).toEqual([]);
    expect(exhausted.length).toBeGreaterThan(0);
    expect(exhausted.every((o) => o.retry)).toBe(true);
    const text = await metrics();
    expect(metricValue(text, 'trajwatch_otlp_requests_refused_total', { transport: 'grpc', reason: 'max-inflight-bytes' })).toBe(exhausted.length);
    expect(metricValue(text, 'trajwatch_receiver_inflight_bytes')).toBe(0);
    const peak = vm(serve.child.pid!, 'VmHWM');
    console.log(`grpc: VmHWM ${(peak / MiB).toFixed(0)} MiB, formula ${(inflightFormulaBytes(r0) / MiB).toFixed(0)} MiB, refused ${exhausted.length}/16`);
    expect(peak).toBeLessThan(inflightFormulaBytes(r0));
  }, 120_000);

  it('32 concurrent requests of 8,192 traces each never open more than maxOpenTrajectories: the rest are refused 503 (max-open-trajectories), counted', async () => {
    const body = (r: number) =>
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: Array.from({ length: 8_192 }, (_, i) => ({
                  traceId: ((r + 1) * 0x100000 + i).toString(16).padStart(32, '0'),
                  spanId: 'ef'.repeat(8),
                  parentSpanId: '12'.repeat(8),
                  name: 'step',
                  startTimeUnixNano: '1760000000000000000',
                  endTimeUnixNano: '1760000001000000000',
                })),
              },
            ],
          },
        ],
      });
    const statuses = await Promise.all(
      Array.from({ length: 32 }, (_, r) =>
        fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(r) }).then(
          async (res) => ({ status: res.status, text: await res.text() }),
          (err: Error) => ({ status: 0, text: String(err) }),
        ),
      ),
    );
    const accepted = statuses.filter((s) => s.status === 200).length;
    const refused = statuses.filter((s) => s.status === 503);
    expect(accepted + refused.length).toBe(32);
    const text = await metrics();
    const open = metricValue(text, 'trajwatch_trajectories_open');
    console.log(`trajectories: open ${open} (bound 10,000), accepted ${accepted}/32, refused ${refused.length}`);
    expect(open).toBeLessThanOrEqual(ASSEMBLER.maxOpenTrajectories);
    expect(open).toBeGreaterThan(0);
    expect(refused.every((s) => s.text.includes('max-open-trajectories') || s.text.includes('max-inflight-bytes'))).toBe(true);
    expect(metricValue(text, 'trajwatch_otlp_requests_refused_total', { transport: 'http', reason: 'max-open-trajectories' })).toBeGreaterThan(0);
    expect(vm(serve.child.pid!, 'VmHWM')).toBeLessThan(formulaBytes(r0));
  }, 180_000);
});
