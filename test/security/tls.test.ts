import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

const BODY = JSON.stringify({
  resourceSpans: [
    {
      scopeSpans: [
        { spans: [{ traceId: '1af7651916cd43dd8448eb211c80319c', spanId: 'c7ad6b7169203331', name: 'root', startTimeUnixNano: '1', endTimeUnixNano: '2' }] },
      ],
    },
  ],
});

/** POST over HTTPS trusting only `ca` (the self-signed test certificate). */
function postTls(port: number, ca: Buffer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

let dir: string;
let ca: Buffer;
let serve: ServeProcess;
const TOKEN = 'tls-test-token-0c1d2e3f4a5b';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'trajwatch-tls-'));
  // A throwaway self-signed certificate for 127.0.0.1, made by the openssl on this machine.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  ca = await readFile(join(dir, 'cert.pem'));
  process.env.TRAJWATCH_TEST_TLS_TOKEN = TOKEN;
  serve = await startServe({
    receiver: { tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') }, auth: { tokenEnv: 'TRAJWATCH_TEST_TLS_TOKEN' } },
  });
});
afterAll(async () => {
  expect(await serve.stop()).toBe(0);
  delete process.env.TRAJWATCH_TEST_TLS_TOKEN;
});

/** One finished span from the real OTel SDK, named `name`, to hand to an exporter. */
async function recordSpan(name: string): Promise<ReadableSpan> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  provider.getTracer('tls-test').startSpan(name).end();
  await provider.forceFlush();
  const [span] = memory.getFinishedSpans();
  await provider.shutdown();
  return span!;
}

/**
 * Exports `span` with the real OTel gRPC trace exporter, configured the way a user would: the
 * endpoint's scheme, the CA file and the token header from the exporter's own environment
 * variables (read when the exporter is made).
 */
async function grpcExport(url: string, span: ReadableSpan, env: Record<string, string>): Promise<ExportResult> {
  // The exporter reads its variables lazily (the CA file when it first connects): they stay set until it is shut down.
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const exporter = new OTLPTraceExporter({ url, timeoutMillis: 5_000 });
    const result = await new Promise<ExportResult>((resolve) => exporter.export([span], resolve));
    await exporter.shutdown();
    return result;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('TLS on the OTLP/gRPC receiver (the same receiver.tls certificate and key)', () => {
  let grpcPort: number;
  beforeAll(async () => {
    // The gRPC line follows the HTTP one that startServe waits for.
    for (let i = 0; i < 200 && !/otlp-grpc listening on \S+/.test(serve.output()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(serve.output()).toMatch(/otlp-grpc listening on 127\.0\.0\.1:\d+ \(OTLP\/gRPC traces and logs, TLS\)/);
    grpcPort = Number(/otlp-grpc listening on 127\.0\.0\.1:(\d+)/.exec(serve.output())![1]);
  });
  const headers = { OTEL_EXPORTER_OTLP_TRACES_HEADERS: `authorization=Bearer ${TOKEN}` };

  it('takes spans from the real OTel gRPC exporter over TLS when it trusts the certificate, and writes their trajectory', async () => {
    const span = await recordSpan('over-grpc-tls');
    const result = await grpcExport(`https://127.0.0.1:${grpcPort}`, span, { ...headers, OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: join(dir, 'cert.pem') });
    expect(result.error).toBeUndefined();
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    const traceId = span.spanContext().traceId;
    const rows = await waitForLines<{ traceIds: string[] }>(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.some((t) => t.traceIds.includes(traceId)));
    expect(rows.filter((t) => t.traceIds.includes(traceId))).toHaveLength(1);
  });

  it('refuses a plaintext gRPC client on the TLS port, and takes nothing from it', async () => {
    const span = await recordSpan('over-grpc-plaintext');
    const result = await grpcExport(`http://127.0.0.1:${grpcPort}`, span, headers);
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toMatch(/UNAVAILABLE|No connection established|Connection dropped|ECONNRESET/i);
    // Its trajectory would be written after the 200 ms quiet period; it never comes.
    await new Promise((r) => setTimeout(r, 1_500));
    const text = await readFile(join(serve.dataDir, 'trajectories.jsonl'), 'utf8').catch(() => '');
    expect(text).not.toContain(span.spanContext().traceId);
  });

  it('is not trusted by a gRPC client without the CA (the certificate is really checked)', async () => {
    const result = await grpcExport(`https://127.0.0.1:${grpcPort}`, await recordSpan('untrusted'), headers);
    expect(result.code).toBe(ExportResultCode.FAILED);
  });
});

describe('TLS on the OTLP/HTTP receiver', () => {
  it('accepts OTLP over HTTPS from a client that trusts the certificate, with the token', async () => {
    const res = await postTls(serve.port, ca, '/v1/traces', { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({});
  });

  it('still answers 401 over HTTPS without the token', async () => {
    const res = await postTls(serve.port, ca, '/v1/traces');
    expect(res.status).toBe(401);
  });

  it('does not speak plain HTTP on the TLS port', async () => {
    const plain = await fetch(`http://127.0.0.1:${serve.port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: BODY,
    }).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).toBe('refused');
  });

  it('is not trusted by a client without the CA (the certificate is really checked)', async () => {
    await expect(postTls(serve.port, Buffer.from(''), '/v1/traces')).rejects.toThrow(/self-signed|certificate/i);
  });

  it('refuses to start when a certificate file is missing, naming the key', async () => {
    await expect(startServe({ receiver: { tls: { certFile: join(dir, 'missing.pem'), keyFile: join(dir, 'key.pem') } } })).rejects.toThrow(
      /receiver\.tls\.certFile: cannot read .*missing\.pem: ENOENT/,
    );
  });
});
