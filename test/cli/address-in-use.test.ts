import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

let holder: Server | undefined;
afterEach(() => holder?.close());

/** A port held by a plain TCP listener, as another program would hold it. */
async function heldPort(): Promise<number> {
  holder = createServer();
  await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
  return (holder.address() as { port: number }).port;
}

const NO_STACK = /\n\s+at /;

describe('a port in use', () => {
  it('serve, OTLP/HTTP: one line naming the address and the flag that moves it, exit 1', async () => {
    const port = await heldPort();
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-port-'));
    const { code, stderr } = await runCli(['serve', '--otlp-http', `127.0.0.1:${port}`, '--otlp-grpc', '127.0.0.1:0', '--data-dir', dir], 30_000);
    expect(stderr).toContain(`127.0.0.1:${port} (OTLP/HTTP) is already in use`);
    expect(stderr).toContain('--otlp-http HOST:PORT');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(1);
  });

  it('serve, OTLP/gRPC: names --otlp-grpc', async () => {
    const port = await heldPort();
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-port-'));
    const { code, stderr } = await runCli(['serve', '--otlp-http', '127.0.0.1:0', '--otlp-grpc', `127.0.0.1:${port}`, '--data-dir', dir], 30_000);
    expect(stderr).toContain(`127.0.0.1:${port} (OTLP/gRPC) is already in use`);
    expect(stderr).toContain('--otlp-grpc HOST:PORT');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(1);
  });

  it('label: names --port', async () => {
    const port = await heldPort();
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-port-'));
    const { code, stderr } = await runCli(['label', '--port', String(port), '--data-dir', dir], 30_000);
    expect(stderr).toContain(`127.0.0.1:${port} (labeling page) is already in use`);
    expect(stderr).toContain('--port N');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(1);
  });
});

describe('docker-compose', () => {
  it('leaves the label page its default host port (4320) free', async () => {
    const { readFile } = await import('node:fs/promises');
    const { parse } = await import('yaml');
    const compose = parse(await readFile(new URL('../../docker-compose.yml', import.meta.url), 'utf8')) as { services: Record<string, { ports?: string[] }> };
    const hostPorts = Object.values(compose.services).flatMap((s) => (s.ports ?? []).map((p) => p.split(':').at(-2)));
    expect(hostPorts).not.toContain('4320');
    expect(hostPorts.length).toBeGreaterThan(0);
  });
});
