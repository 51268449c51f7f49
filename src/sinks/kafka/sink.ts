import { type LevelLog, stderrLog } from '../../telemetry/logger.ts';
import type { Kafka } from 'kafkajs';
import { ConfigError } from '../../errors.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../record.ts';
import { kafkaClient } from '../../kafka/client.ts';
import { Outbox } from '../../storage/outbox.ts';
import type { AppendResult } from '../../storage/outbox.ts';
import { describeError } from '../delivery/describe-error.ts';
import { DeliveryEngine, type CloseResult, type DeliveryStats } from '../delivery/engine.ts';
import type { KafkaSinkConfig } from './config.ts';
import { kafkaProduceMetrics, registerKafkaSinkMetrics } from './metrics.ts';
import { KafkaTransport } from './transport.ts';

export type { CloseResult } from '../delivery/engine.ts';

export interface KafkaSinkOptions {
  /** The outbox directory, e.g. `<dataDir>/outbox/kafka`. */
  outboxDir: string;
  /** Where the sink reports the first delivery failure and the recovery (not every retry); default {@link stderrLog}. */
  log?: LevelLog;
  /** Where `sasl.passwordEnv` is looked up (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Told of every acknowledged produce request: its duration and record count (metrics). Must not throw. */
  onProduce?: (seconds: number, records: number) => void;
  /** Where the sink declares its series (`./metrics.ts`); none when undefined. */
  metrics?: MetricRegistry;
}

/** Counters for metrics and tests (the engine's, and the produce latency). Times in milliseconds. */
export interface KafkaSinkStats extends DeliveryStats {
  /** Records written and not yet acknowledged by the broker. */
  outboxRecords: number;
  outboxBytes: number;
  /** Duration of successful produce requests. */
  produceLatencyMs: { count: number; sum: number; max: number; last: number };
}

/**
 * The Kafka sink: the {@link DeliveryEngine} (a durable local outbox, one delivery loop,
 * at-least-once, bounded) over the {@link KafkaTransport} (an idempotent kafkajs producer,
 * `acks: -1`, one request in flight, many records per request). Consumers dedupe by
 * `SinkRecord.id`. When the outbox is full, `write` refuses and `backpressure()` says so;
 * nothing is dropped.
 *
 * @example
 * const sink = await KafkaSink.open(parseKafkaSinkConfig({ brokers: ['127.0.0.1:9092'] }),
 *   { outboxDir: join(dataDir, 'outbox', 'kafka') });
 * const result = sink.write([record]);   // { ok: false, reason: 'full' } → try again later
 * await sink.close();
 */
export class KafkaSink {
  readonly name = 'kafka';
  readonly config: KafkaSinkConfig;
  /** The delivery engine: what the finding sink's overflow writes into. */
  readonly engine: DeliveryEngine<SinkRecord>;
  readonly #log: LevelLog;
  readonly #onProduce: ((seconds: number, records: number) => void) | undefined;
  #produceLatencyMs = { count: 0, sum: 0, max: 0, last: 0 };

  private constructor(config: KafkaSinkConfig, outbox: Outbox<SinkRecord>, kafka: Kafka, log: LevelLog, onProduce: KafkaSinkOptions['onProduce']) {
    this.config = config;
    this.#log = log;
    this.#onProduce = onProduce;
    const transport = new KafkaTransport(kafka, config, (elapsedMs, records) => this.#observeProduce(elapsedMs, records));
    // Asked now, not at the first finding: a topic that is missing (and may not be created) is named at start.
    transport.prepare().catch((err: unknown) => {
      if (err instanceof ConfigError) log('warn', `kafka sink: ${err.issues.join('; ')}; findings wait in the outbox until it exists`);
    });
    this.engine = new DeliveryEngine({
      outbox,
      transport,
      config,
      log,
      names: { delivery: 'kafka delivery', outbox: 'kafka outbox' },
    });
  }

  /**
   * Opens the outbox (re-reading what an earlier run left undelivered) and starts delivering.
   * Does not wait for the broker: an unreachable broker is retried in the background.
   * @throws StorageError for an unusable or damaged outbox; ConfigError for unreadable secrets.
   */
  static async open(config: KafkaSinkConfig, options: KafkaSinkOptions): Promise<KafkaSink> {
    const log = options.log ?? stderrLog('sinks.kafka');
    const kafka = kafkaClient(config, { keyPrefix: '', env: options.env, log, retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 } });
    const outbox = await Outbox.open(options.outboxDir, SINK_RECORD_SHAPE, {
      maxOutboxBytes: config.maxOutboxBytes,
      maxOutboxRecords: config.maxOutboxRecords,
      maxRecordBytes: config.maxRecordBytes,
      segmentBytes: config.outboxSegmentBytes,
    });
    const produced = kafkaProduceMetrics(options.metrics);
    const onProduce = options.onProduce;
    const observe = onProduce === undefined ? produced : (seconds: number, records: number) => (produced(seconds, records), onProduce(seconds, records));
    const sink = new KafkaSink(config, outbox, kafka, log, observe);
    registerKafkaSinkMetrics(options.metrics, () => sink.stats());
    return sink;
  }

  /**
   * Queues records for delivery, all or none; never throws. Accepted records are fsync'd with
   * the rest of this event-loop turn's writes and sent meanwhile; `flushed()` says when the
   * broker has them. A refusal (`full`, `too-large`, `unwritable`, `closed`) leaves them with
   * the caller.
   */
  write(records: readonly SinkRecord[]): AppendResult {
    return this.engine.write(records);
  }

  /** A reason to refuse new input now, or undefined when a record of maxRecordBytes fits. */
  backpressure(): string | undefined {
    const refusal = this.engine.refusal();
    return refusal === undefined ? undefined : `kafka-outbox-${refusal}`;
  }

  /** Resolves once a record of maxRecordBytes would fit in the outbox (or the sink closes). */
  whenWritable(): Promise<void> {
    return this.engine.whenWritable();
  }

  /** Resolves once everything written before the call has been acknowledged by the broker (or the sink closes). */
  flushed(): Promise<void> {
    return this.engine.flushed();
  }

  stats(): KafkaSinkStats {
    const waiting = this.engine.waiting();
    return { outboxRecords: waiting.records, outboxBytes: waiting.bytes, ...this.engine.stats(), produceLatencyMs: { ...this.#produceLatencyMs } };
  }

  /**
   * Refuses new writes, keeps delivering for at most `timeoutMs`, then stops and closes the
   * producer and the outbox. Whatever is left stays in the outbox for the next run.
   */
  close(timeoutMs: number = this.config.closeTimeoutMs): Promise<CloseResult> {
    return this.engine.close(timeoutMs);
  }

  /** An observer's failure must not turn an acknowledged batch into a failed one (and a re-send). */
  #observeProduce(elapsedMs: number, records: number): void {
    const latency = this.#produceLatencyMs;
    latency.count += 1;
    latency.sum += elapsedMs;
    latency.max = Math.max(latency.max, elapsedMs);
    latency.last = elapsedMs;
    try {
      this.#onProduce?.(elapsedMs / 1000, records);
    } catch (err) {
      this.#log('error', 'kafka produce observer threw', { error: describeError(err) });
    }
  }
}
