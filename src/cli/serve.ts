import { join, resolve } from 'node:path';
import { createLogger } from '../telemetry/logger.ts';
import { createMetricRegistry } from '../telemetry/metrics.ts';
import { buildTopology } from '../topology/build.ts';
import { parseFlags } from './flags.ts';
import { addressInUseLine } from './address-in-use.ts';
import { resolveConfig } from './resolve-config.ts';
import { restrictCreatedFiles } from '../core/private-files.ts';
import { dataDirPaths } from '../core/data-dir.ts';

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
  --source-kafka-brokers LIST
                         HOST:PORT,... of the Kafka source (source.kafka.brokers; env
                         TRAJWATCH_SOURCE_KAFKA_BROKERS; --kafka-brokers, deprecated, is the same)
  --config FILE          JSON configuration file (env TRAJWATCH_CONFIG); flags win over env,
                         env over the file, the file over the embedded defaults
  --help                 this text
`;

export async function serveCommand(args: string[]): Promise<number> {
  // Raw telemetry (prompts, tool payloads) is its owner's alone: files 0600, directories 0700.
  restrictCreatedFiles();
  const flags = parseFlags(args, SERVE_HELP, { strings: ['otlp-http', 'otlp-grpc', 'data-dir', 'source', 'source-kafka-brokers', 'kafka-brokers', 'config'] });
  if (flags === undefined) return 0;
  const { values } = flags;
  const resolved = await resolveConfig(values.config, [
    { path: ['receiver', 'otlpHttp'], value: values['otlp-http'], flag: '--otlp-http' },
    { path: ['receiver', 'otlpGrpc'], value: values['otlp-grpc'], flag: '--otlp-grpc' },
    { path: ['dataDir'], value: values['data-dir'], flag: '--data-dir' },
    { path: ['source', 'kafka', 'brokers'], value: brokerList(values['kafka-brokers']), flag: '--kafka-brokers', deprecatedFor: '--source-kafka-brokers' },
    { path: ['source', 'kafka', 'brokers'], value: brokerList(values['source-kafka-brokers']), flag: '--source-kafka-brokers' },
  ]);
  const sources = chooseSources(values.source, resolved.source.http, resolved.source.kafka !== undefined);
  if (typeof sources === 'string') {
    process.stderr.write(`trajwatch: ${sources}\n`);
    return 2;
  }
  const config = { ...resolved, dataDir: resolve(resolved.dataDir) };
  const logger = createLogger({ level: config.log.level });
  const paths = dataDirPaths(config.dataDir);
  const { running, kafkaSource, judgeHealth } = await buildTopology(
    config,
    {
      clock: 'arrival',
      trajectoriesPath: paths.trajectories,
      findings: { findingsPath: paths.findings, alarmsPath: paths.alarms, truncate: false },
      externalSinks: true,
      sources,
      retention: config.sinks.retention,
    },
    { registry: createMetricRegistry(), logger },
  );
  try {
    await running.start();
  } catch (err) {
    const line = addressInUseLine(err, [
      { address: config.receiver.otlpHttp, what: 'OTLP/HTTP', move: '--otlp-http HOST:PORT (env TRAJWATCH_OTLP_HTTP; port 0: any free port)' },
      { address: config.receiver.otlpGrpc, what: 'OTLP/gRPC', move: '--otlp-grpc HOST:PORT (env TRAJWATCH_OTLP_GRPC; port 0: any free port)' },
    ]);
    if (line === undefined) throw err;
    process.stderr.write(`trajwatch serve: ${line}\n`);
    return 1;
  }
  judgeHealth.logStart(config.dataDir);
  logger.info({ dataDir: config.dataDir, components: running.components.map((c) => c.name) }, `serving; data in ${config.dataDir}`);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      // Open trajectories a source replays are left to it: shutdown's work does not grow with them.
      const fates = [
        kafkaSource ? 'Kafka offsets committed below open trajectories (replayed by the next owner)' : undefined,
        sources.http && config.receiver.wal.enabled ? 'open trajectories stay in the write-ahead log (replayed at the next start)' : undefined,
        sources.http && !config.receiver.wal.enabled ? 'open trajectories close as incomplete (shutdown)' : undefined,
      ].filter((f) => f !== undefined);
      logger.info({ signal }, `${signal}: stopping; ${fates.join('; ')}`);
      // Bounded means bounded: an open request or a hanging call must not keep the process.
      const timeoutMs = config.shutdownTimeoutMs;
      void running.stop(timeoutMs).then((stopped) => {
        if (stopped.outcome === 'timeout') {
          logger.error({ timeoutMs }, `shutdown did not finish within ${timeoutMs} ms`);
          process.exit(1);
        }
        if (stopped.outcome === 'failed') {
          logger.error({ err: stopped.error }, `shutdown failed: ${stopped.error.message}`);
          return resolveExit(1);
        }
        logger.info('stopped');
        resolveExit(0);
      });
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
    return '--source kafka needs source.kafka in the configuration (at least brokers; or --source-kafka-brokers)';
  }
  return { http: names.includes('http'), kafka: names.includes('kafka') };
}

/** A `HOST:PORT,...` flag as a list (undefined when not given). */
function brokerList(value: string | undefined): string[] | undefined {
  return value?.split(',').map((b) => b.trim());
}
