/**
 * `serve`'s pipeline with a stopwatch on every sink: the OTLP/HTTP receiver, the pipeline
 * (arrival clock, ticked every 100 ms as `serve` does), the local log and, when the config
 * names brokers, the Kafka sink. Each sink is wrapped so the time from a trajectory's close
 * (when its findings are written to the sink, in the same turn) to those findings being
 * durable (local log) or acknowledged (Kafka) is recorded. On SIGTERM it drains, writes the
 * samples as JSON to the path in argv[3] and exits; SIGUSR2 forgets the samples so far.
 *
 * Why not `trajwatch serve` itself: neither log line carries a wall-clock time, so close →
 * durable cannot be seen from outside without the tick's 0-100 ms of slack; docs/performance.md
 * proposes the metric that would make it observable in `serve`.
 *
 * Run (by bench/latency.ts): node bench/latency-server.ts <config.json> <result.json> <data dir>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAnalyzer } from '../src/analyze.ts';
import { ConfigSchema } from '../src/config-schema.ts';
import type { Finding } from '../src/findings/schema.ts';
import { createHttpReceiver } from '../src/ingest/otlp/http-receiver.ts';
import { Pipeline } from '../src/pipeline/pipeline.ts';
import type { FindingSink, FindingStream } from '../src/sinks/finding-sink.ts';
import { JsonlLog } from '../src/sinks/jsonl-log.ts';
import { KafkaFindingSink } from '../src/sinks/kafka/kafka-finding-sink.ts';
import { LocalLogSink } from '../src/sinks/local-log-sink.ts';

/** A sink that records, per write, the ms until the inner sink says the write is durable. */
class TimedSink implements FindingSink {
  readonly name: string;
  readonly samplesMs: number[] = [];
  readonly #inner: FindingSink;
  failures = 0;

  constructor(inner: FindingSink) {
    this.#inner = inner;
    this.name = inner.name;
  }

  write(findings: readonly Finding[], stream: FindingStream): void {
    const closedAt = performance.now();
    this.#inner.write(findings, stream);
    this.#inner.flushed().then(
      () => this.samplesMs.push(performance.now() - closedAt),
      () => this.failures++,
    );
  }

  backpressure(): string | undefined {
    return this.#inner.backpressure();
  }

  backlog(): { records: number; bytes: number } {
    return this.#inner.backlog();
  }

  flushed(): Promise<void> {
    return this.#inner.flushed();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

const [configPath, resultPath, dataDir] = process.argv.slice(2);
const config = ConfigSchema.parse(JSON.parse(readFileSync(configPath!, 'utf8')));
const trajectoryLog = await JsonlLog.open(join(dataDir!, 'trajectories.jsonl'));
const sinks: TimedSink[] = [new TimedSink(await LocalLogSink.openFiles(join(dataDir!, 'findings.jsonl'), undefined, config.sinks.maxPendingBytes))];
if (config.sinks.kafka !== undefined) {
  sinks.push(new TimedSink(await KafkaFindingSink.open(config.sinks.kafka, { outboxDir: join(dataDir!, 'outbox', 'kafka') })));
}
let trajectories = 0;
const pipeline = new Pipeline({
  limits: config.assembler,
  clock: 'arrival',
  analyze: createAnalyzer(config),
  trajectoryLog,
  maxPendingTrajectoryBytes: config.sinks.maxPendingBytes,
  sinks,
  onTrajectory: () => trajectories++,
});
const server = createHttpReceiver(config.receiver, pipeline);
const ticker = setInterval(() => pipeline.tick(), 100);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
process.stdout.write(`latency-server: listening on http://127.0.0.1:${port}/v1/traces\n`);

// SIGUSR2: forget the samples so far (the driver's warm-up).
process.on('SIGUSR2', () => {
  for (const s of sinks) s.samplesMs.length = 0;
  trajectories = 0;
});

process.once('SIGTERM', () => {
  clearInterval(ticker);
  server.close();
  server.closeIdleConnections();
  void (async () => {
    // Only what closed under load is measured; the rest closes at shutdown, unmeasured.
    const result = {
      trajectories,
      sinks: sinks.map((s) => ({ name: s.name, samplesMs: [...s.samplesMs], failures: s.failures })),
    };
    writeFileSync(resultPath!, JSON.stringify(result));
    await pipeline.drain('shutdown');
    await Promise.all([trajectoryLog.close(), ...sinks.map((s) => s.close())]);
    process.exit(0);
  })();
});
