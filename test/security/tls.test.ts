import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from '../helpers/serve.ts';

const BODY = JSON.stringify({
  resourceSpans: [
    { scopeSpans: [{ spans: [{ traceId: '1af7651916cd43dd8448eb211c80319c', spanId: 'c7ad6b7169203331', name: 'root', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] },
  ],
});

/** POST over HTTPS trusting only `ca` (the self-signed test certificate). */
function postTls(port: number, ca: Buffer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
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
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
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
