import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAnalyzer } from '../analyze.ts';
import { formatHostPort } from '../config/host-port.ts';
import { createHttpReceiver } from '../ingest/http-receiver.ts';
import { Metrics } from '../metrics/metrics.ts';
import { Pipeline } from '../pipeline.ts';
import { JsonlLog } from '../sinks/jsonl-log.ts';
import { LocalLogSink } from '../sinks/local-log-sink.ts';
import { resolveConfig } from './resolve-config.ts';

export const SERVE_HELP = `Usage: trajwatch serve [options]

Receives OTLP/HTTP traces, assembles trajectories, runs the inline checks and writes
trajectories and findings as JSON lines into the data directory.

Options:
  --otlp-http HOST:PORT  OTLP/HTTP listen address (default 127.0.0.1:4318; env TRAJWATCH_OTLP_HTTP)
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
    { path: ['dataDir'], value: values['data-dir'] },
  ]);
  const dataDir = resolve(config.dataDir);
  const trajectoryLog = await JsonlLog.open(join(dataDir, 'trajectories.jsonl'));
  const findingsSink = await LocalLogSink.open(join(dataDir, 'findings.jsonl'), config.sinks.maxPendingBytes);
  let metrics: Metrics | undefined;
  const pipeline = new Pipeline({
    limits: config.assembler,
    clock: 'arrival',
    analyze: createAnalyzer(config, (issue) => metrics?.provenanceIssues.inc({ reason: issue.reason })),
    trajectoryLog,
    maxPendingTrajectoryBytes: config.sinks.maxPendingBytes,
    sinks: [findingsSink],
    onTrajectory: (t, findings) => metrics?.observeTrajectory(t, findings),
  });
  metrics = new Metrics({
    assembler: () => pipeline.assembler.stats(),
    sinkBacklog: () => ({
      'trajectory-log': { records: 0, bytes: trajectoryLog.pendingBytes },
      'local-log': { records: 0, bytes: findingsSink.pendingBytes },
    }),
  });
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
  const ticker = setInterval(() => pipeline.tick(), TICK_MS);

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(config.receiver.otlpHttp.port, config.receiver.otlpHttp.host, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const shown = formatHostPort({ host: address.address, port: address.port });
  process.stdout.write(`trajwatch: listening on http://${shown}/v1/traces (OTLP/HTTP); data in ${dataDir}\n`);

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
      pipeline
        .drain('shutdown')
        .then(() => Promise.all([trajectoryLog.close(), findingsSink.close()]))
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
