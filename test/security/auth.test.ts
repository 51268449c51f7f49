import { once } from 'node:events';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config-schema.ts';
import { ConfigError } from '../../src/errors.ts';
import { createAuthCheck } from '../../src/ingest/otlp/auth.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver, TRACE_EXPORT_PATH } from '../../src/ingest/otlp/grpc-receiver.ts';
import { createHttpReceiver } from '../../src/ingest/otlp/http-receiver.ts';
import type { PipelineInput } from '../../src/ingest/pipeline-input.ts';
import { ReceiverConfigSchema } from '../../src/ingest/otlp/receiver-config.ts';
import { startServe } from '../helpers/serve.ts';

const TOKEN = 'tw-test-token-7f3a9c0e51d24b88';
const ENV = 'TRAJWATCH_TEST_RECEIVER_TOKEN';

const BODY = JSON.stringify({
  resourceSpans: [
    {
      scopeSpans: [
        { spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'root', startTimeUnixNano: '1', endTimeUnixNano: '2' }] },
      ],
    },
  ],
});
const JSON_H = { 'content-type': 'application/json' };

/** Counts what reached the pipeline: an unauthenticated request must never get this far. */
function countingTarget(): PipelineInput & { accepted: number } {
  const target = { accepted: 0, admission: () => undefined, accept: () => void target.accepted++ };
  return target;
}

let servers: Server[] = [];
afterEach(() => {
  for (const s of servers) s.close();
  servers = [];
  delete process.env[ENV];
});

async function startReceiver(receiver: Record<string, unknown>) {
  const target = countingTarget();
  const server = createHttpReceiver(ReceiverConfigSchema.parse(receiver), target, () => {}, {
    '/healthz': (_req, res) => void res.writeHead(200).end('ok\n'),
    '/metrics': (_req, res) => void res.writeHead(200).end('trajwatch_up 1\n'),
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, target };
}

describe('default bind', () => {
  it('is loopback for the OTLP/HTTP and gRPC receivers; binding wider needs an explicit address', () => {
    expect(ConfigSchema.parse({}).receiver.otlpHttp).toEqual({ host: '127.0.0.1', port: 4318 });
    expect(ConfigSchema.parse({}).receiver.otlpGrpc).toEqual({ host: '127.0.0.1', port: 4317 });
    expect(ConfigSchema.parse({ receiver: { otlpHttp: '0.0.0.0:4318' } }).receiver.otlpHttp.host).toBe('0.0.0.0');
  });
});

describe('receiver authentication (in-process receiver)', () => {
  it('answers 401 without the token or with a wrong one, 200 with the bearer token; /healthz stays open', async () => {
    process.env[ENV] = TOKEN;
    const { url, target } = await startReceiver({ auth: { tokenEnv: ENV } });
    const none = await fetch(`${url}/v1/traces`, { method: 'POST', headers: JSON_H, body: BODY });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.json()).toMatchObject({ code: 16, message: expect.stringMatching(/requires a token/) });
    const wrong = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, authorization: `Bearer ${TOKEN}x` }, body: BODY });
    expect(wrong.status).toBe(401);
    const basic = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, authorization: `Basic ${TOKEN}` }, body: BODY });
    expect(basic.status).toBe(401);
    expect(target.accepted).toBe(0);
    const ok = await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, authorization: `Bearer ${TOKEN}` }, body: BODY });
    expect(ok.status).toBe(200);
    expect(target.accepted).toBe(1);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('protects /metrics the same way', async () => {
    process.env[ENV] = TOKEN;
    const { url } = await startReceiver({ auth: { tokenEnv: ENV } });
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('trajwatch_up');
  });

  it('accepts the token in a configured API-key header, and reads it from a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-auth-'));
    await writeFile(join(dir, 'token'), `${TOKEN}\n`);
    const { url } = await startReceiver({ auth: { tokenFile: join(dir, 'token'), apiKeyHeader: 'X-API-Key' } });
    expect((await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, 'x-api-key': 'nope' }, body: BODY })).status).toBe(401);
    expect((await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, 'x-api-key': TOKEN }, body: BODY })).status).toBe(200);
    expect((await fetch(`${url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, authorization: `bearer ${TOKEN}` }, body: BODY })).status).toBe(200);
  });

  it('refuses to start without a readable token, naming the variable or file and never a value', () => {
    expect(() => createAuthCheck({ tokenEnv: ENV }, {})).toThrow(ConfigError);
    expect(() => createAuthCheck({ tokenEnv: ENV }, { [ENV]: '  ' })).toThrow(/TRAJWATCH_TEST_RECEIVER_TOKEN is not set or empty/);
    expect(() => createAuthCheck({ tokenFile: '/nonexistent/token' })).toThrow(/cannot read \/nonexistent\/token: ENOENT/);
  });

  it('accepts no token written into the configuration itself', () => {
    expect(ReceiverConfigSchema.safeParse({ auth: { token: TOKEN } }).success).toBe(false);
    expect(ReceiverConfigSchema.safeParse({ auth: {} }).success).toBe(false);
    expect(ReceiverConfigSchema.safeParse({ auth: { tokenEnv: ENV, tokenFile: '/x' } }).success).toBe(false);
  });
});

describe('gRPC receiver authentication', () => {
  it('answers UNAUTHENTICATED without the authorization metadata and OK with it', async () => {
    process.env[ENV] = TOKEN;
    const target = countingTarget();
    const server = createGrpcReceiver(ReceiverConfigSchema.parse({ auth: { tokenEnv: ENV } }), target);
    const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = (metadata: grpc.Metadata) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        client.makeUnaryRequest(
          TRACE_EXPORT_PATH,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          metadata,
          (err) => resolve(err),
        );
      });
    try {
      const denied = await call(new grpc.Metadata());
      expect(denied?.code).toBe(grpc.status.UNAUTHENTICATED);
      const wrong = new grpc.Metadata();
      wrong.set('authorization', 'Bearer nope');
      expect((await call(wrong))?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(target.accepted).toBe(0);
      const good = new grpc.Metadata();
      good.set('authorization', `Bearer ${TOKEN}`);
      expect(await call(good)).toBeNull();
      expect(target.accepted).toBe(1);
    } finally {
      client.close();
      await closeGrpcReceiver(server);
    }
  });
});

describe('receiver authentication on a running serve', () => {
  it('token from the environment: 401 without, 200 with, and the token appears in no log, metric or data file', async () => {
    process.env[ENV] = TOKEN;
    const serve = await startServe({ receiver: { auth: { tokenEnv: ENV } } });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      expect((await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: JSON_H, body: BODY })).status).toBe(401);
      expect((await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, ...auth }, body: BODY })).status).toBe(200);
      expect((await fetch(`${serve.url}/metrics`)).status).toBe(401);
      const metrics = await fetch(`${serve.url}/metrics`, { headers: auth });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/trajwatch_otlp_requests_total\{[^}]*status="401"[^}]*\} 1/);
      expect(text).toMatch(/trajwatch_spans_received_total(\{[^}]*\})? 1/);
      expect(text).not.toContain(TOKEN);
      expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.output()).not.toContain(TOKEN);
    for (const file of await readdir(serve.dataDir, { recursive: true })) {
      const content = await readFile(join(serve.dataDir, file)).catch(() => Buffer.alloc(0));
      expect(content.toString('latin1'), file).not.toContain(TOKEN);
    }
  });

  it('token from a file: serve answers 401 without it and 200 with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-auth-'));
    await writeFile(join(dir, 'token'), TOKEN);
    const serve = await startServe({ receiver: { auth: { tokenFile: join(dir, 'token') } } });
    try {
      expect((await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: JSON_H, body: BODY })).status).toBe(401);
      const ok = await fetch(`${serve.url}/v1/traces`, { method: 'POST', headers: { ...JSON_H, authorization: `Bearer ${TOKEN}` }, body: BODY });
      expect(ok.status).toBe(200);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(serve.output()).not.toContain(TOKEN);
  });

  it('does not start when the token variable is unset, and says which variable', async () => {
    await expect(startServe({ receiver: { auth: { tokenEnv: 'TRAJWATCH_TEST_UNSET_TOKEN' } } })).rejects.toThrow(
      /TRAJWATCH_TEST_UNSET_TOKEN is not set or empty/,
    );
  });
});
