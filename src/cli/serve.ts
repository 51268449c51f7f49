import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatHostPort } from '../config/host-port.ts';
import { bindGrpcReceiver, closeGrpcReceiver, createGrpcReceiver } from '../ingest/grpc-receiver.ts';
import { DurableIngest } from '../ingest/durable-ingest.ts';
import { createHttpReceiver, type IngestTarget } from '../ingest/http-receiver.ts';
import { SpanWal } from '../ingest/span-wal.ts';
import { KafkaSource } from '../ingest/kafka-source.ts';
import { registerKafkaSourceMetrics } from '../ingest/kafka-source-metrics.ts';
import { Metrics } from '../metrics/metrics.ts';
import { KafkaFindingSink } from '../sinks/kafka/kafka-finding-sink.ts';
import { buildPipeline } from './build-pipeline.ts';
import { resolveConfig } from './resolve-config.ts';

export const SERVE_HELP = `Usage: trajwatch serve [options]

Receives OTLP traces (HTTP, gRPC, and/or a Kafka topic as a consumer group) and OTLP logs
carrying GenAI content events (HTTP, gRPC; joined to the steps of their spans), assembles
trajectories, runs the inline checks and writes trajectories and findings as JSON lines into
the data directory.

Options:
  --otlp-http HOST:PORT  OTLP/HTTP listen address (default 127.0.0.1:4318; env TRAJWATCH_OTLP_HTTP)
  --otlp-grpc HOST:PORT  OTLP/gRPC listen address (default 127.0.0.1:4317; env TRAJWATCH_OTLP_GRPC)
  --data-dir DIR         where trajectories.jsonl and findings.jsonl go (default ./data;
                         env TRAJWATCH_DATA_DIR)
  --source LIST          http, kafka or http,kafka (default: source.http, plus kafka when
                         source.kafka is configured); kafka keys trajectories by trace id
                         (docs/scaling-out.md)
  --kafka-brokers LIST   HOST:PORT,... of the Kafka source (source.kafka.brokers)
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
      source: { type: 'string' },
      'kafka-brokers': { type: 'string' },
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
    { path: ['source', 'kafka', 'brokers'], value: values['kafka-brokers']?.split(',').map((b) => b.trim()) },
  ]);
  const sources = chooseSources(values.source, config.source.http, config.source.kafka !== undefined);
  if (typeof sources === 'string') {
    process.stderr.write(`trajwatch: ${sources}\n`);
    return 2;
  }
  const dataDir = resolve(config.dataDir);
  let metrics: Metrics | undefined;
  const running = await buildPipeline(
    { ...config, dataDir },
    {
      clock: 'arrival',
      trajectoriesPath: join(dataDir, 'trajectories.jsonl'),
      findings: { findingsPath: join(dataDir, 'findings.jsonl'), alarmsPath: join(dataDir, 'alarms.jsonl'), truncate: false },
      kafka: true,
      keyBy: sources.kafka ? 'trace' : 'session',
      retention: config.sinks.retention,
    },
    () => metrics,
  );
  const { pipeline, sinks, trajectoryLog, decisions } = running;
  let kafkaSource: KafkaSource | undefined;
  const kafka = sinks.find((s) => s instanceof KafkaFindingSink);
  metrics = new Metrics({
    assembler: () => pipeline.assembler.stats(),
    sinkBacklog: () => ({
      'trajectory-log': { records: trajectoryLog?.pendingLines ?? 0, bytes: trajectoryLog?.pendingBytes ?? 0 },
      ...Object.fromEntries(sinks.map((s) => [s.name, s.backlog()])),
      // Accepted requests kept for a crash until what they fed is durable downstream.
      ...(ingest === undefined ? {} : { 'span-wal': { bytes: ingest.wal.pendingBytes } }),
    }),
    ...(decisions.enabled ? { judge: () => decisions.stats() } : {}),
    ...(kafka === undefined ? {} : { kafka: () => kafka.kafka.stats() }),
    logs: () => pipeline.logOutcomes(),
  });
  pipeline.onJudged = (findings, alarms) => metrics?.observeJudged(findings, alarms);
  const registry = metrics.registry;
  // The write-ahead log comes back before the receivers listen: what it held is replayed first.
  let ingest: DurableIngest | undefined;
  if (sources.http && config.receiver.wal.enabled) {
    const opened = await SpanWal.open(join(dataDir, 'wal'), config.receiver.wal).catch(async (err: unknown) => {
      await running.close();
      throw err;
    });
    ingest = new DurableIngest(pipeline, opened.wal);
    const { replayed, undecodable } = await ingest.replay(opened.records);
    const torn = opened.wal.stats().tornRecords;
    if (replayed > 0 || undecodable > 0 || torn > 0) {
      process.stdout.write(
        `trajwatch: replayed ${replayed} request(s) from the write-ahead log` +
          (undecodable > 0 ? `, ${undecodable} undecodable skipped` : '') +
          (torn > 0 ? `, ${torn} torn final record cut off` : '') +
          '\n',
      );
    }
  }
  const target: IngestTarget = ingest ?? pipeline;
  const server = createHttpReceiver(config.receiver, target, (o) => metrics.observeRequest('http', o), {
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
  if (!sources.http) refuseTraces(server);
  const grpcServer = sources.http ? createGrpcReceiver(config.receiver, target, (o) => metrics.observeRequest('grpc', o)) : undefined;
  const ticker = setInterval(() => pipeline.tick(), TICK_MS);

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(config.receiver.otlpHttp.port, config.receiver.otlpHttp.host, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const shown = formatHostPort({ host: address.address, port: address.port });
  const scheme = config.receiver.tls === undefined ? 'http' : 'https';
  if (grpcServer !== undefined) {
    const grpcPort = await bindGrpcReceiver(grpcServer, config.receiver.otlpGrpc);
    const grpcShown = formatHostPort({ host: config.receiver.otlpGrpc.host, port: grpcPort });
    process.stdout.write(`trajwatch: listening on ${scheme}://${shown}/v1/traces and /v1/logs (OTLP/HTTP); data in ${dataDir}\n`);
    process.stdout.write(`trajwatch: otlp-grpc listening on ${grpcShown} (OTLP/gRPC traces and logs)\n`);
  } else {
    process.stdout.write(`trajwatch: listening on ${scheme}://${shown}/ (/metrics, /healthz; OTLP receivers off); data in ${dataDir}\n`);
  }
  if (sources.kafka) {
    const source = await KafkaSource.start(config.source.kafka!, pipeline).catch(async (err: unknown) => {
      // Without its source the process must not linger half-started.
      clearInterval(ticker);
      server.close();
      if (grpcServer !== undefined) await closeGrpcReceiver(grpcServer);
      await running.close();
      await ingest?.close();
      throw err;
    });
    registerKafkaSourceMetrics(registry, () => source.stats());
    kafkaSource = source;
    const { topic, groupId, brokers } = source.config;
    process.stdout.write(`trajwatch: consuming OTLP from Kafka topic ${topic} as group ${groupId} (${brokers.join(',')})\n`);
  }

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stdout.write(
        kafkaSource === undefined
          ? `trajwatch: ${signal}: stopping; open trajectories close as incomplete (shutdown)\n`
          : `trajwatch: ${signal}: stopping; Kafka offsets committed below open trajectories (replayed by the next owner), others close as incomplete (shutdown)\n`,
      );
      const deadline = setTimeout(() => {
        process.stderr.write(`trajwatch: shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS} ms\n`);
        // Bounded means bounded: an open request or a hanging call must not keep the process.
        process.exit(1);
      }, SHUTDOWN_TIMEOUT_MS);
      deadline.unref();
      clearInterval(ticker);
      server.close();
      server.closeIdleConnections();
      Promise.all([kafkaSource?.stop(), grpcServer === undefined ? undefined : closeGrpcReceiver(grpcServer)])
        .then(() => pipeline.drain('shutdown'))
        // Every trajectory is closed and its output durable: the log is released to its end.
        .then(() => pipeline.settled())
        .then(() => ingest?.close())
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

/** Which sources run: `--source` wins; without it, the configuration decides. A string is a usage error. */
function chooseSources(flag: string | undefined, http: boolean, kafkaConfigured: boolean): { http: boolean; kafka: boolean } | string {
  if (flag === undefined) return { http, kafka: kafkaConfigured };
  const names = flag.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => n !== 'http' && n !== 'kafka');
  if (unknown.length > 0 || names.length === 0) return `--source: expected http, kafka or http,kafka, got ${JSON.stringify(flag)}`;
  if (names.includes('kafka') && !kafkaConfigured) {
    return '--source kafka needs source.kafka in the configuration (at least brokers; or --kafka-brokers)';
  }
  return { http: names.includes('http'), kafka: names.includes('kafka') };
}

/** With the OTLP receivers off, `/v1/traces` and `/v1/logs` answer 404; `/metrics` and `/healthz` stay as they are. */
function refuseTraces(server: Server): void {
  const [inner] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/v1/traces' && path !== '/v1/logs') return inner!(req, res);
    req.resume();
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('OTLP receivers are off (--source kafka); spans come from Kafka\n');
  });
}
