/**
 * End to end over loopback HTTP: the same OTLP/protobuf bodies posted to a real
 * `trajwatch serve` process, to an OpenTelemetry Collector (OTLP/HTTP receiver →
 * groupbytrace → nop exporter) and to Arize Phoenix's OTLP ingestion (`/v1/traces`).
 * Throughput is accepted spans per CPU-second of the server's process tree, counted from
 * before the first request until the server has finished the work (trajectories closed and
 * logs durable for trajwatch; CPU gone quiet for the peers).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpDataset } from './datasets.ts';
import { httpSpanCount } from './datasets.ts';
import {
  freePort,
  processTreeCpuSeconds,
  processTreeRssBytes,
  runLoad,
  spawnServer,
  stopChild,
  waitForHttp,
  waitForOutput,
  waitForQuiet,
  exited,
  type LoadResult,
} from './http-load.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

export interface RunningServer {
  url: string;
  pid: number;
  /** Where the server keeps what it writes (removed by `stop`). */
  dataDir: string;
  /** Resolves when the server has finished the work it accepted (`acceptedSpans` in all so far), within `timeoutMs`. */
  settle(timeoutMs: number, acceptedSpans: number): Promise<void>;
  stop(): Promise<void>;
}

export interface Peer {
  name: string;
  /** Why the peer cannot run here, or undefined. */
  unavailable(): string | undefined;
  start(): Promise<RunningServer>;
}

/**
 * Config for the measured `trajwatch serve`: quiet period 500 ms like the Collector's
 * groupbytrace `wait_duration`, idle timeout 1 s for traces whose root never arrives (some
 * TRAIL traces), room for every open trajectory.
 */
export function trajwatchBenchConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    assembler: { quietPeriodMs: 500, idleTimeoutMs: 1_000, maxOpenTrajectories: 200_000, maxBufferedBytes: 1024 * 1024 * 1024 },
    ...extra,
  };
}

/** Sums of the named metrics' samples, from one scrape. */
async function metricValues(base: string, names: readonly string[]): Promise<number[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const sums = names.map(() => 0);
  for (const line of text.split('\n')) {
    const i = names.findIndex((name) => line.startsWith(name));
    if (i >= 0) sums[i]! += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sums;
}

/**
 * Spawns `node [nodeArgs] src/cli/main.ts serve` on an ephemeral port with `config`; parses its
 * listening line. `checkout`: another working tree's `serve` (a before/after comparison).
 */
export async function startTrajwatch(config: Record<string, unknown>, nodeArgs: readonly string[] = [], checkout = root): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'trajwatch-serve-bench-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const dataDir = join(dir, 'data');
  const child = spawnServer(process.execPath, [
    ...nodeArgs,
    join(checkout, 'src/cli/main.ts'),
    'serve',
    '--otlp-http',
    '127.0.0.1:0',
    '--otlp-grpc',
    '127.0.0.1:0',
    '--data-dir',
    dataDir,
    '--config',
    configPath,
  ]);
  const match = await waitForOutput(child, /listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000);
  const base = `http://127.0.0.1:${match[1]}`;
  return {
    url: `${base}/v1/traces`,
    pid: child.pid!,
    dataDir,
    async settle(timeoutMs) {
      const stopAt = performance.now() + timeoutMs;
      while (performance.now() < stopAt) {
        // One scrape every 250 ms: the scrapes are CPU the server spends for the benchmark.
        const [open, backlog] = await metricValues(base, ['trajwatch_trajectories_open', 'trajwatch_sink_backlog_records']);
        if (open === 0 && backlog === 0) return;
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async stop() {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const trajwatchPeer: Peer = {
  name: 'trajwatch serve (full pipeline, local logs)',
  unavailable: () => undefined,
  start: () => startTrajwatch(trajwatchBenchConfig()),
};

/**
 * The same `serve` under `node --single-threaded-gc` (an operator's option, not the default; see
 * docs/performance.md): V8 then collects on the main thread only, which costs less CPU in all
 * on two cores and keeps close → durable within its bound here, but makes each pause longer.
 */
export const trajwatchSingleThreadedGcPeer: Peer = {
  name: 'trajwatch serve, node --single-threaded-gc',
  unavailable: () => undefined,
  start: () => startTrajwatch(trajwatchBenchConfig(), ['--single-threaded-gc']),
};

export function collectorBinary(): string | undefined {
  const bin = join(root, '.cache/otelcol-bench/otelcol-bench');
  if (existsSync(bin)) return bin;
  try {
    // Builds from the Go module proxy when Go is there (about a minute with a warm cache).
    return execFileSync(join(root, 'bench/otelcol/build.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .at(-1);
  } catch {
    return undefined;
  }
}

/**
 * The Collector's config: OTLP/HTTP in, groupbytrace with the quiet period trajwatch is given,
 * internal metrics off; then `nop` (the ceiling), or with `durable` the file exporter and a
 * persistent queue on file_storage in `dir` (the fair peer).
 */
export function collectorConfig(port: number, dir: string, durable: boolean): string {
  const exporters = durable
    ? [
        // Every span written, as OTLP JSON lines: the trajectory log's counterpart.
        '  file:',
        `    path: ${join(dir, 'spans.jsonl')}`,
        // The file exporter takes no sending_queue (its README: "does not support sending_queue"),
        // so the persistent queue, the span WAL's counterpart, sits on a second exporter that
        // does little else: debug at basic verbosity logs one line per batch.
        '  debug:',
        '    verbosity: basic',
        '    sending_queue:',
        '      enabled: true',
        '      storage: file_storage',
      ]
    : ['  nop:'];
  return [
    ...(durable ? ['extensions:', '  file_storage:', `    directory: ${join(dir, 'queue')}`, '    create_directory: true', '    fsync: true'] : []),
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: 127.0.0.1:${port}`,
    'processors:',
    '  groupbytrace:',
    '    wait_duration: 500ms', // the same quiet period trajwatch is given
    '    num_traces: 200000',
    'exporters:',
    ...exporters,
    'service:',
    ...(durable ? ['  extensions: [file_storage]'] : []),
    '  telemetry:',
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    traces:',
    '      receivers: [otlp]',
    '      processors: [groupbytrace]',
    `      exporters: [${durable ? 'file, debug' : 'nop'}]`,
    '',
  ].join('\n');
}

function collector(name: string, durable: boolean): Peer {
  return {
    name,
    unavailable: () =>
      collectorBinary() === undefined ? 'the Collector could not be built (bench/otelcol/build.sh needs Go and the module proxy)' : undefined,
    async start() {
      const bin = collectorBinary()!;
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'otelcol-bench-'));
      const configPath = join(dir, 'config.yaml');
      writeFileSync(configPath, collectorConfig(port, dir, durable));
      const child = spawnServer(bin, ['--config', configPath]);
      await waitForOutput(child, /Everything is ready/, 30_000);
      return {
        url: `http://127.0.0.1:${port}/v1/traces`,
        pid: child.pid!,
        dataDir: dir,
        settle: (timeoutMs) => waitForQuiet(child.pid!, timeoutMs),
        async stop() {
          await stopChild(child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

/** The ceiling: the Collector keeping nothing. */
export const collectorPeer = collector('OTel Collector v0.165.0 (otlp → groupbytrace → nop)', false);
/** The fair peer: the Collector doing durable work comparable to trajwatch's. */
export const durableCollectorPeer = collector('OTel Collector v0.165.0 (otlp → groupbytrace → file; queue on file_storage, fsync)', true);

const phoenixBin = join(root, '.cache/phoenix/bin/phoenix');

async function phoenixSpanCount(base: string): Promise<number> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: '{ projects { edges { node { recordCount } } } }' }),
  });
  const body = (await res.json()) as { data?: { projects: { edges: { node: { recordCount: number } }[] } } };
  return body.data?.projects.edges.reduce((sum, e) => sum + e.node.recordCount, 0) ?? 0;
}

export const phoenixPeer: Peer = {
  name: 'Arize Phoenix 20.26.1 (OTLP/HTTP, SQLite)',
  unavailable: () => (existsSync(phoenixBin) ? undefined : 'Phoenix is not installed: run scripts/setup/phoenix-env.sh'),
  async start() {
    const port = await freePort();
    const grpcPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'phoenix-bench-'));
    const child = spawnServer(phoenixBin, ['serve'], {
      ...process.env,
      PHOENIX_HOST: '127.0.0.1',
      PHOENIX_PORT: String(port),
      PHOENIX_GRPC_PORT: String(grpcPort),
      PHOENIX_WORKING_DIR: dir,
      PHOENIX_TELEMETRY_ENABLED: 'false',
    });
    const base = `http://127.0.0.1:${port}`;
    await Promise.race([waitForHttp(`${base}/healthz`, 180_000), exited(child)]);
    return {
      url: `${base}/v1/traces`,
      pid: child.pid!,
      dataDir: dir,
      // Phoenix answers 200 on receipt and writes to its database afterwards: done when the
      // default project holds every accepted span.
      async settle(timeoutMs, acceptedSpans) {
        const stopAt = performance.now() + timeoutMs;
        while (performance.now() < stopAt) {
          if ((await phoenixSpanCount(base)) >= acceptedSpans) return;
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      stop: () => stopChild(child),
    };
  },
};

export interface PeerRun {
  peer: string;
  dataset: string;
  load: LoadResult;
  serverCpuSeconds: number;
  spansPerCpuSecond: number;
  spansPerWallSecond: number;
  rssBytes: number;
  note: string;
}

export interface PeerPlan {
  warmup: HttpDataset;
  measured: HttpDataset;
  concurrency: number;
  maxSeconds: number;
  settleMs: number;
}

/** Starts the peer, warms it up, measures one bounded load, stops it. */
export async function measurePeer(peer: Peer, plan: PeerPlan): Promise<PeerRun | string> {
  const why = peer.unavailable();
  if (why !== undefined) return why;
  let server: RunningServer;
  try {
    server = await peer.start();
  } catch (err) {
    return `did not start: ${(err as Error).message.split('\n')[0]}`;
  }
  try {
    const common = { url: server.url, concurrency: plan.concurrency, maxSeconds: plan.maxSeconds };
    const warm = await runLoad({ ...common, bodies: plan.warmup.bodies, spanCounts: plan.warmup.spanCounts, maxRequests: plan.warmup.bodies.length });
    await server.settle(plan.settleMs, warm.acceptedSpans);
    const cpuStart = processTreeCpuSeconds(server.pid);
    const load = await runLoad({
      ...common,
      bodies: plan.measured.bodies,
      spanCounts: plan.measured.spanCounts,
      maxRequests: plan.measured.bodies.length,
    });
    const rssBytes = processTreeRssBytes(server.pid);
    const settleFrom = performance.now();
    await server.settle(plan.settleMs, warm.acceptedSpans + load.acceptedSpans);
    const settledInMs = performance.now() - settleFrom;
    const serverCpuSeconds = processTreeCpuSeconds(server.pid) - cpuStart;
    const sent = httpSpanCount(plan.measured);
    const notes: string[] = [];
    if (load.acceptedSpans < sent) notes.push(`${sent - load.acceptedSpans} of ${sent} spans refused (${JSON.stringify(load.byStatus)})`);
    if (settledInMs >= plan.settleMs - 50) notes.push(`still busy ${Math.round(plan.settleMs / 1000)} s after the last answer`);
    else notes.push(`done ${(settledInMs / 1000).toFixed(1)} s after the last answer`);
    return {
      peer: peer.name,
      dataset: plan.measured.name,
      load,
      serverCpuSeconds,
      spansPerCpuSecond: load.acceptedSpans / serverCpuSeconds,
      spansPerWallSecond: load.acceptedSpans / load.wallSeconds,
      rssBytes,
      note: notes.join('; '),
    };
  } finally {
    await server.stop();
  }
}
