/**
 * What every client test shares: a running `trajwatch serve`, its OTLP endpoints, and reading
 * back the trajectory a client produced.
 */
import type * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import { createAnalyzer } from '../../src/analyze.ts';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import { ConfigSchema } from '../../src/config-schema.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver } from '../../src/ingest/otlp/grpc-receiver.ts';
import { ReceiverConfigSchema } from '../../src/ingest/otlp/receiver-config.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

/** One step as written in trajectories.jsonl (src/assemble/trajectory-json.ts). */
export interface StepRow {
  id: string;
  parentId?: string;
  kind: string;
  name: string;
  convention: string;
  toolName?: string;
  toolCallId?: string;
  args?: { raw: string; parsed?: unknown; digest: string };
  input?: string;
  result?: string;
  error?: { source: string; type?: string; message?: string };
  model?: string;
  agentName?: string;
  sessionId?: string;
  service?: string;
}

export interface TrajectoryRow {
  key: string;
  traceIds: string[];
  complete: boolean;
  incompleteReasons: string[];
  steps: StepRow[];
}

export interface ClientTarget {
  serve: ServeProcess;
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:PORT` (exporters append `/v1/traces`). */
  httpUrl: string;
  /** OTLP/gRPC endpoint, e.g. `http://127.0.0.1:PORT`. */
  grpcUrl: string;
  /** `serve` itself answers gRPC, or (until serve has the gRPC listener) an in-process receiver does. */
  grpcServedBy: 'serve' | 'in-process';
  /** Waits for the trajectory with this key and returns its latest revision. */
  trajectory(key: string): Promise<TrajectoryRow>;
  stop(): Promise<void>;
}

/** serve's gRPC start line, e.g. `otlp-grpc listening on 127.0.0.1:PORT`: any line naming gRPC and the address. */
const GRPC_LISTENING = /^.*grpc.*127\.0\.0\.1:(\d+).*$/im;

/**
 * Starts `trajwatch serve` with gRPC on a free port when serve has the `receiver.otlpGrpc`
 * key. Without it, the same gRPC receiver and pipeline run in the test process and write
 * their own trajectories file: the receiver code under test is the same, only the process
 * differs.
 */
export async function startClientTarget(): Promise<ClientTarget> {
  const serveHasGrpc = ConfigSchema.safeParse({ receiver: { otlpGrpc: '127.0.0.1:0' } }).success;
  const serve = await startServe(serveHasGrpc ? { receiver: { otlpGrpc: '127.0.0.1:0' } } : {});
  const files = [join(serve.dataDir, 'trajectories.jsonl')];
  let grpcPort: number;
  let stopInProcess = async () => {};
  if (serveHasGrpc) {
    grpcPort = await waitForOutput(serve, GRPC_LISTENING);
  } else {
    const inProcess = await startInProcessGrpc(join(serve.dataDir, 'grpc-trajectories.jsonl'));
    files.push(inProcess.file);
    grpcPort = inProcess.port;
    stopInProcess = inProcess.stop;
  }
  return {
    serve,
    httpUrl: serve.url,
    grpcUrl: `http://127.0.0.1:${grpcPort}`,
    grpcServedBy: serveHasGrpc ? 'serve' : 'in-process',
    trajectory: async (key) => {
      const found: TrajectoryRow[] = [];
      const seen = new Set<string>();
      await Promise.any(
        files.map((file) =>
          waitForLines<TrajectoryRow>(file, (rows) => {
            for (const r of rows) seen.add(r.key);
            const mine = rows.filter((r) => r.key === key);
            if (mine.length === 0) return false;
            found.push(mine[mine.length - 1]!);
            return true;
          }),
        ),
      ).catch(() => {
        throw new Error(`no trajectory keyed "${key}"; keys written: ${[...seen].join(', ') || 'none'}`);
      });
      return found[0]!;
    },
    stop: async () => {
      await stopInProcess();
      const code = await serve.stop();
      if (code !== 0) throw new Error(`serve exited with ${code}:\n${serve.output()}`);
    },
  };
}

async function waitForOutput(serve: ServeProcess, pattern: RegExp): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = pattern.exec(serve.output());
    if (m !== null) return Number(m[1]);
    if (Date.now() > deadline) throw new Error(`serve never printed ${pattern}:\n${serve.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startInProcessGrpc(file: string) {
  const log = await JsonlLog.open(file);
  const pipeline = new Pipeline({
    limits: AssemblerLimitsSchema.parse({ quietPeriodMs: 200 }),
    clock: 'arrival',
    analyze: createAnalyzer(ConfigSchema.parse({})),
    trajectoryLog: log,
    sinks: [],
  });
  const server: grpc.Server = createGrpcReceiver(ReceiverConfigSchema.parse({}), pipeline);
  const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 0 });
  const ticker = setInterval(() => pipeline.tick(), 50);
  return {
    file,
    port,
    stop: async () => {
      clearInterval(ticker);
      await closeGrpcReceiver(server);
      await pipeline.drain('shutdown');
      await log.close();
    },
  };
}

/** The steps of one trajectory that are tool calls, in trajectory order. */
export function toolSteps(t: TrajectoryRow): StepRow[] {
  return t.steps.filter((s) => s.kind === 'tool');
}
