/**
 * The load generator: posts OTLP/protobuf bodies over loopback with a bounded number of
 * requests in flight, a bounded request count and a time limit, and reads the server
 * process's CPU time from /proc so throughput is per core of the server, not of the client.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';

export interface LoadOptions {
  url: string;
  bodies: readonly Uint8Array[];
  /** Spans in each body, parallel to `bodies`. */
  spanCounts: readonly number[];
  concurrency: number;
  /** Stop after this many requests (bodies are sent in order, wrapping around). */
  maxRequests: number;
  /** Stop starting requests after this long. */
  maxSeconds: number;
  /** Requests per second to aim at (open loop); unlimited when absent. */
  ratePerSecond?: number;
  /** Told of each answered request with its end time (ms, performance.now()). */
  onAnswer?: (index: number, status: number, atMs: number) => void;
}

export interface LoadResult {
  requests: number;
  acceptedSpans: number;
  refusedSpans: number;
  byStatus: Record<number, number>;
  wallSeconds: number;
  /** Request round-trip times in ms, sorted. */
  roundTripsMs: number[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(url: URL, body: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/x-protobuf', 'Content-Length': body.byteLength },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends the bodies as `options` says and counts what the server accepted (2xx) and refused. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const result: LoadResult = { requests: 0, acceptedSpans: 0, refusedSpans: 0, byStatus: {}, wallSeconds: 0, roundTripsMs: [] };
  const start = performance.now();
  const stopAt = start + options.maxSeconds * 1000;
  let next = 0;
  const worker = async () => {
    while (next < options.maxRequests && performance.now() < stopAt) {
      const index = next++;
      if (options.ratePerSecond !== undefined) {
        const due = start + (index / options.ratePerSecond) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const i = index % options.bodies.length;
      const sentAt = performance.now();
      let status: number;
      try {
        status = await post(url, options.bodies[i]!);
      } catch {
        status = 0; // connection failure: counted as refused, never retried
      }
      const at = performance.now();
      result.roundTripsMs.push(at - sentAt);
      result.requests++;
      result.byStatus[status] = (result.byStatus[status] ?? 0) + 1;
      if (status >= 200 && status < 300) result.acceptedSpans += options.spanCounts[i]!;
      else result.refusedSpans += options.spanCounts[i]!;
      options.onAnswer?.(index, status, at);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  result.wallSeconds = (performance.now() - start) / 1000;
  result.roundTripsMs.sort((a, b) => a - b);
  return result;
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

function childrenOf(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // the process ended while we listed it
    }
  }
  return children;
}

/** utime + stime in seconds of `pid` and all its live descendants (all threads). */
export function processTreeCpuSeconds(pid: number): number {
  const children = childrenOf();
  let ticks = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      continue;
    }
    stack.push(...(children.get(p) ?? []));
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/**
 * CPU seconds of one process by thread name (`MainThread`, `V8Worker` for the GC and compiler
 * helpers, `libuv-worker` for the fs thread pool): where a server's CPU goes beyond its main thread.
 */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

/** Resident set size of `pid` and its descendants, in bytes. */
export function processTreeRssBytes(pid: number): number {
  const children = childrenOf();
  let bytes = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (match !== null) bytes += Number(match[1]) * 1024;
    } catch {
      continue;
    }
    stack.push(...(children.get(p) ?? []));
  }
  return bytes;
}

/** A TCP port that was free a moment ago (for servers that cannot listen on port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves with the first match of `pattern` in the child's stdout or stderr, or rejects after `timeoutMs`. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} within ${timeoutMs} ms; output ended with: ${seen.slice(-800)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.length > 100_000) seen = seen.slice(-50_000);
      const match = pattern.exec(seen);
      if (match !== null) {
        cleanup();
        resolve(match);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`exited (${code}) before ${pattern}; output ended with: ${seen.slice(-800)}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Polls `url` until it answers 2xx, or rejects after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const stopAt = performance.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > stopAt) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits until the process tree's CPU time stops growing (at most `timeoutMs`): background work is done. */
export async function waitForQuiet(pid: number, timeoutMs: number, idleShare = 0.03): Promise<void> {
  const stopAt = performance.now() + timeoutMs;
  let last = processTreeCpuSeconds(pid);
  while (performance.now() < stopAt) {
    await new Promise((r) => setTimeout(r, 500));
    const now = processTreeCpuSeconds(pid);
    if (now - last <= 0.5 * idleShare) return;
    last = now;
  }
}

/** Stops a child we started: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Spawns a server process with piped output (kept for error messages). */
export function spawnServer(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Keep reading, so a chatty server never blocks on a full pipe.
  child.stdout?.on('data', () => {});
  child.stderr?.on('data', () => {});
  return child;
}

/** Rejects when the child exits (to race against a readiness wait). */
export function exited(child: ChildProcess): Promise<never> {
  return new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`exited with ${code} before it was ready`))));
}

/** The p-th percentile (0..100) of sorted values, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
