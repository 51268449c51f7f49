import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { agentRunRequest } from '../../../../test/reliability/agent-run.ts';
import { protoBody } from '../load.ts';
import type { Probe } from '../probe.ts';
import { sleep, startCampaignServe } from '../serve-process.ts';

const TOKEN = 'campaign-secret-token-0123456789';
const ENV = 'TRAJWATCH_CAMPAIGN_TOKEN';
const CLI = new URL('../../../../src/cli/main.ts', import.meta.url).pathname;

function grpcExport(port: number, token: string | undefined): Promise<number> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      protoBody(0x5ec, 1),
      md,
      (error) => {
        client.close();
        resolve(error === null ? 0 : error.code);
      },
    );
  });
}

/** Files and folders under `dir` that anyone but the owner may read. */
async function exposed(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    const s = await stat(join(dir, entry)).catch(() => undefined);
    if (s !== undefined && (s.mode & 0o077) !== 0) out.push(`${entry} ${(s.mode & 0o777).toString(8)}`);
  }
  const top = await stat(dir);
  if ((top.mode & 0o077) !== 0) out.unshift(`. ${(top.mode & 0o777).toString(8)}`);
  return out;
}

/** A GET with a `Host` of our choosing (fetch will not send one: it is a forbidden header). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The label server on a free port over `dataDir`; resolves with its URL and a stop. */
async function startLabel(dataDir: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [CLI, 'label', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`label did not start:\n${out}`)), 20_000);
    const onData = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** Auth on every receiver path, Host/Origin on the label server, and the data directory's modes. */
export const security: Probe = async () => {
  const serve = await startCampaignServe({ config: { receiver: { auth: { tokenEnv: ENV } } }, env: { [ENV]: TOKEN } });
  const rows: [string, string][] = [];
  const checks: { what: string; ok: boolean }[] = [];
  try {
    const body = JSON.stringify(agentRunRequest({ traceId: '5ec0'.repeat(8) }));
    const post = async (path: string, headers: Record<string, string>) =>
      (await fetch(`${serve.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })).status;
    const cases: [string, () => Promise<number>, number][] = [
      ['POST /v1/traces without a token', () => post('/v1/traces', {}), 401],
      ['POST /v1/traces with a wrong token', () => post('/v1/traces', { authorization: 'Bearer nope' }), 401],
      ['POST /v1/logs without a token', () => post('/v1/logs', {}), 401],
      ['GET /metrics without a token', async () => (await fetch(`${serve.url}/metrics`)).status, 401],
      ['gRPC Export without a token', () => grpcExport(serve.grpcPort, undefined), grpc.status.UNAUTHENTICATED],
      ['gRPC Export with the token', () => grpcExport(serve.grpcPort, TOKEN), 0],
      ['POST /v1/traces with the token', () => post('/v1/traces', { authorization: `Bearer ${TOKEN}` }), 200],
      ['GET /healthz without a token', async () => (await fetch(`${serve.url}/healthz`)).status, 200],
    ];
    for (const [what, run, want] of cases) {
      const got = await run();
      rows.push([what, String(got)]);
      checks.push({ what: `${what} → ${want}`, ok: got === want });
    }
    await sleep(1_000);
  } finally {
    const exit = await serve.stop();
    checks.push({ what: 'SIGTERM exits 0', ok: exit.code === 0 });
  }
  const open = await exposed(serve.dataDir);
  rows.push(['data directory entries readable by group or others', open.length === 0 ? 'none' : open.slice(0, 5).join(', ')]);
  checks.push({ what: 'the data directory is private to its owner (0700 folders, 0600 files)', ok: open.length === 0 });
  const label = await startLabel(serve.dataDir);
  try {
    const evil = await getWithHost(`${label.url}/`, 'evil.example:4320');
    rows.push(['label page with `Host: evil.example`', String(evil)]);
    checks.push({ what: 'the label server refuses a foreign Host (DNS rebinding)', ok: evil === 403 });
    const own = await fetch(`${label.url}/`);
    rows.push(['label page with its own Host', String(own.status)]);
    checks.push({ what: 'the label page answers its own Host', ok: own.status === 200 });
    const write = await fetch(`${label.url}/api/labels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: '{}',
    });
    rows.push(['label write with `Origin: http://evil.example`', String(write.status)]);
    checks.push({ what: 'the label server refuses a cross-origin write', ok: write.status === 403 });
  } finally {
    label.stop();
  }
  return {
    name: 'security',
    setup:
      'serve with a bearer token (from the environment), every receiver path tried with and without it; then the label server over the same data directory',
    rows,
    checks,
  };
};
