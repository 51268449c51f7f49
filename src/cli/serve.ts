import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatHostPort } from '../config/host-port.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver } from '../ingest/grpc-receiver.ts';
import { createHttpReceiver } from '../ingest/http-receiver.ts';
import { Metrics } from '../metrics/metrics.ts';
import { KafkaFindingSink } from '../sinks/kafka/kafka-finding-sink.ts';
import { buildPipeline } from './build-pipeline.ts';
import { resolveConfig } from './resolve-config.ts';

export const SERVE_HELP = `Usage: trajwatch serve [options]

Receives OTLP/HTTP traces, assembles trajectories, runs the inline checks and writes
trajectories and findings as JSON lines into the data directory.

Options:
  --otlp-http HOST:PORT  OTLP/HTTP listen address (default 127.0.0.1:4318; env TRAJWATCH_OTLP_HTTP)
  --otlp-grpc HOST:PORT  OTLP/gRPC listen address (default 127.0.0.1:4317; env TRAJWATCH_OTLP_GRPC)
  --data-dir DIR         where trajectories.jsonl and findings.jsonl go (default ./data;
                         env TRAJWATCH_DATA_DIR)
  --config FILE          JSON configuration file (env TRAJWATCH_CONFIG); flags win over env,
                         env over the file, the file over the embedded defaults
  --help                 this text
`;

const TICK_MS = 100;
const SHUTDOWN_TIMEOUT_MS = 10_000;

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      'otlp-http': { type: 'string' },
      'otlp-grpc': { type: 'string' },
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  const config = await resolveConfig(values.config, [
    { path: ['receiver', 'otlpHttp'], value: values['otlp-http'] },
    { path: ['receiver', 'otlpGrpc'], value: values['otlp-grpc'] },
    { path: ['dataDir'], value: values['data-dir'] },
  ]);
  const dataDir = resolve(config.dataDir);
  let metrics: Metrics | undefined;
  const running = await buildPipeline(
    { ...config, dataDir },
    {
      clock: 'arrival',
      trajectoriesPath: join(dataDir, 'trajectories.jsonl'),
      findings: { findingsPath: join(dataDir, 'findings.jsonl'), alarmsPath: join(dataDir, 'alarms.jsonl'), truncate: false },
      kafka: true,
    },
    () => metrics,
  );
  const { pipeline, sinks, trajectoryLog, decisions } = running;
  const kafka = sinks.find((s) => s instanceof KafkaFindingSink);
  metrics = new Metrics({
    assembler: () => pipeline.assembler.stats(),
    sinkBacklog: () => ({
      'trajectory-log': { records: trajectoryLog?.pendingLines ?? 0, bytes: trajectoryLog?.pendingBytes ?? 0 },
      ...Object.fromEntries(sinks.map((s) => [s.name, s.backlog()])),
    }),
    ...(decisions.enabled ? { judge: () => decisions.stats() } : {}),
    ...(kafka === undefined ? {} : { kafka: () => kafka.kafka.stats() }),
  });
  pipeline.onJudged = (findings, alarms) => metrics?.observeJudged(findings, alarms);
  const registry = metrics.registry;
  const server = createHttpReceiver(config.receiver, pipeline, (o) => metrics.observeRequest('http', o), {
    '/healthz': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
    },
    '/metrics': (_req, res) => {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    },
  });
  const grpcServer = createGrpcReceiver(config.receiver, pipeline, (o) => metrics.observeRequest('grpc', o));
  const ticker = setInterval(() => pipeline.tick(), TICK_MS);

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(config.receiver.otlpHttp.port, config.receiver.otlpHttp.host, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const shown = formatHostPort({ host: address.address, port: address.port });
  const grpcPort = await bindGrpcReceiver(grpcServer, config.receiver.otlpGrpc);
  const grpcShown = formatHostPort({ host: config.receiver.otlpGrpc.host, port: grpcPort });
  process.stdout.write(`trajwatch: listening on http://${shown}/v1/traces (OTLP/HTTP); data in ${dataDir}\n`);
  process.stdout.write(`trajwatch: otlp-grpc listening on ${grpcShown} (OTLP/gRPC)\n`);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stdout.write(`trajwatch: ${signal}: stopping; open trajectories close as incomplete (shutdown)\n`);
      const deadline = setTimeout(() => {
        process.stderr.write(`trajwatch: shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS} ms\n`);
        resolveExit(1);
      }, SHUTDOWN_TIMEOUT_MS);
      deadline.unref();
      clearInterval(ticker);
      server.close();
      server.closeIdleConnections();
      closeGrpcReceiver(grpcServer)
        .then(() => pipeline.drain('shutdown'))
        .then(() => running.close())
        .then(
          () => {
            clearTimeout(deadline);
            process.stdout.write('trajwatch: stopped\n');
            resolveExit(0);
          },
          (err: unknown) => {
            clearTimeout(deadline);
            process.stderr.write(`trajwatch: shutdown failed: ${(err as Error).message}\n`);
            resolveExit(1);
          },
        );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
