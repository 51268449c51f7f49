/**
 * A real `trajwatch serve` for the fault campaign: its own data directory (or one given, such
 * as a tmpfs), both OTLP ports parsed from its log, RSS sampled from /proc, SIGTERM or SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = new URL('../../../src/cli/main.ts', import.meta.url).pathname;

export interface CampaignServe {
  url: string;
  grpcPort: number;
  dataDir: string;
  child: ChildProcess;
  output(): string;
  /** Largest VmRSS seen by the sampler, and the kernel's high-water mark, in bytes. */
  peakRssBytes(): number;
  /** SIGTERM; resolves with the exit code and how long the exit took. */
  stop(): Promise<{ code: number | null; ms: number }>;
  kill9(): Promise<void>;
  metrics(): Promise<string>;
  /** `/healthz` answered 200. */
  healthy(timeoutMs?: number): Promise<boolean>;
  /** `/healthz` answered at all (200, or 503 naming what is unhealthy). */
  answers(timeoutMs?: number): Promise<boolean>;
}

export interface ServeOptions {
  config?: Record<string, unknown>;
  dataDir?: string;
  nodeArgs?: string[];
  env?: Record<string, string>;
}

export function rssBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]) * 1024;
  } catch {
    return 0; // the process is gone
  }
}

export async function startCampaignServe(options: ServeOptions = {}): Promise<CampaignServe> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'trajwatch-campaign-')));
  const configPath = join(tmpdir(), `trajwatch-campaign-${process.pid}-${Date.now()}.json`);
  await writeFile(configPath, JSON.stringify({ assembler: { quietPeriodMs: 300 }, ...options.config }));
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), CLI, 'serve', '--otlp-http', '127.0.0.1:0', '--otlp-grpc', '127.0.0.1:0', '--data-dir', dataDir, '--config', configPath],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ports = await new Promise<{ http: number; grpc: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 60 s:\n${out.slice(-4000)}`)), 60_000);
    const onData = () => {
      const http = /listening on https?:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      const grpc = /otlp-grpc listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (http !== null && grpc !== null) {
        clearTimeout(timer);
        resolve({ http: Number(http[1]), grpc: Number(grpc[1]) });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening:\n${out.slice(-4000)}`));
    });
  });
  let peak = 0;
  const sampler = setInterval(() => {
    const rss = rssBytes(child.pid!);
    if (rss > peak) peak = rss;
  }, 50);
  sampler.unref();
  const url = `http://127.0.0.1:${ports.http}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    grpcPort: ports.grpc,
    dataDir,
    child,
    output: () => out,
    peakRssBytes: () => Math.max(peak, rssBytes(child.pid!, 'VmHWM')),
    async stop() {
      const t0 = performance.now();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      clearInterval(sampler);
      return { code, ms: Math.round(performance.now() - t0) };
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      clearInterval(sampler);
    },
    async metrics() {
      const res = await fetch(`${url}/metrics`);
      return res.text();
    },
    async healthy(timeoutMs = 2_000) {
      return (await healthStatus(url, timeoutMs)) === 200;
    },
    async answers(timeoutMs = 2_000) {
      const status = await healthStatus(url, timeoutMs);
      return status === 200 || status === 503;
    },
  };
}

async function healthStatus(url: string, timeoutMs: number): Promise<number> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Reads a JSON-lines file ("" when missing), every complete line parsed. */
export function readJsonLines<T = Record<string, unknown>>(path: string): T[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const lines = text.split('\n');
  lines.pop(); // the last one is partial or empty
  return lines.filter((l) => l !== '').map((l) => JSON.parse(l) as T);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
