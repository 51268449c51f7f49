import type { LevelLog } from '../../telemetry/logger.ts';
import { CompressionTypes, Partitioners } from 'kafkajs';
import type { Kafka, Message, Producer, TopicMessages } from 'kafkajs';
import { UpstreamError } from '../../errors.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import type { SinkRecord } from '../record.ts';
import { kafkaClient } from '../../kafka/client.ts';
import { ensureTopics, type WantedTopic } from '../../kafka/topics.ts';
import type { KafkaSinkConfig } from './config.ts';
import { kafkaProduceMetrics, registerKafkaSinkMetrics } from './metrics.ts';
import { Outbox } from './outbox.ts';
import type { AppendResult, OutboxEntry } from './outbox.ts';

export type SinkLogLevel = 'info' | 'warn' | 'error';
/** Where the sink reports the first delivery failure and the recovery (not every retry). */
export type SinkLog = LevelLog;

export interface KafkaSinkOptions {
  /** The outbox directory, e.g. `<dataDir>/outbox/kafka`. */
  outboxDir: string;
  log?: SinkLog;
  /** Where `sasl.passwordEnv` is looked up (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Told of every acknowledged produce request: its duration and record count (metrics). Must not throw. */
  onProduce?: (seconds: number, records: number) => void;
  /** Where the sink declares its series (`./metrics.ts`); none when undefined. */
  metrics?: MetricRegistry;
}

/** Counters for metrics (wired later) and tests. Times in milliseconds. */
export interface KafkaSinkStats {
  /** Records written and not yet acknowledged by the broker. */
  outboxRecords: number;
  outboxBytes: number;
  /** Records acknowledged by the broker since open (a re-send after a lost ack counts again). */
  delivered: number;
  batchesDelivered: number;
  /** Failed produce attempts (each is retried). */
  sendErrors: number;
  /** Failed attempts to record broker acknowledgements in the outbox (retried; the records are not re-sent). */
  ackErrors: number;
  /** True from a failed attempt until the next success. */
  failing: boolean;
  lastError: string | undefined;
  refusedFull: number;
  refusedTooLarge: number;
  tornLinesIgnored: number;
  /** Duration of successful produce requests. */
  produceLatencyMs: { count: number; sum: number; max: number; last: number };
}

export interface CloseResult {
  /** True when everything written had been acknowledged when the sink closed. */
  flushed: boolean;
  /** Records left in the outbox; the next sink over the same directory delivers them. */
  pendingRecords: number;
}

const DISCONNECT_TIMEOUT_MS = 2_000;

/**
 * The Kafka sink: records go into a durable local {@link Outbox} and a delivery loop sends
 * them with an idempotent kafkajs producer (`acks: -1`, one request in flight, many records
 * per request), in sequence order. A record leaves the outbox only after the broker
 * acknowledged it, so delivery is at-least-once across broker outages and process restarts;
 * consumers dedupe by `SinkRecord.id`. The outbox is bounded: when full, `write` refuses and
 * `backpressure()` says so, and nothing is dropped.
 *
 * Latency: a record is sent while its outbox write is still being fsync'd (the two overlap),
 * and the acknowledgement is recorded in the outbox in the background while the next request
 * is already out; `flushed()` resolves on the broker's acknowledgement.
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
  readonly #outbox: Outbox;
  readonly #kafka: Kafka;
  readonly #log: SinkLog;
  readonly #onProduce: ((seconds: number, records: number) => void) | undefined;
  #producer: Producer | undefined;
  #topicsReady = false;
  #closing = false;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  /**
   * Every record appended up to this sequence number has been acknowledged by the broker
   * (this run) or was acknowledged before (no longer in the outbox). Sends go in sequence
   * order, one request at a time, so this is a single watermark.
   */
  #deliveredThrough = -1;
  /** Acknowledged by the broker, not yet recorded in the outbox (recorded together, in the background). */
  #unrecorded: number[] = [];
  #recording: Promise<void> | undefined;
  /** Resolves the delivery loop's wait (new records, or stop). */
  #wake: (() => void) | undefined;
  /** Woken after every acknowledged batch: flushed(), whenWritable(). */
  #ackListeners = new Set<() => void>();
  #stats = {
    delivered: 0,
    batchesDelivered: 0,
    sendErrors: 0,
    ackErrors: 0,
    failing: false,
    lastError: undefined as string | undefined,
    produceLatencyMs: { count: 0, sum: 0, max: 0, last: 0 },
  };

  private constructor(config: KafkaSinkConfig, outbox: Outbox, kafka: Kafka, log: SinkLog, onProduce: KafkaSinkOptions['onProduce']) {
    this.config = config;
    this.#outbox = outbox;
    this.#kafka = kafka;
    this.#log = log;
    this.#onProduce = onProduce;
  }

  /**
   * Opens the outbox (re-reading what an earlier run left undelivered) and starts delivering.
   * Does not wait for the broker: an unreachable broker is retried in the background.
   * @throws StorageError for an unusable or damaged outbox; ConfigError for unreadable secrets.
   */
  static async open(config: KafkaSinkConfig, options: KafkaSinkOptions): Promise<KafkaSink> {
    const log = options.log ?? logToStderr;
    const kafka = kafkaClient(config, { keyPrefix: '', env: options.env, log, retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 } });
    const outbox = await Outbox.open(options.outboxDir, {
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
    sink.#loop = sink.#deliver();
    return sink;
  }

  /**
   * Queues records for delivery, all or none; never throws. Accepted records are fsync'd with
   * the rest of this event-loop turn's writes and sent meanwhile; `flushed()` says when the
   * broker has them. A refusal (`full`, `too-large`, `unwritable`, `closed`) leaves them with
   * the caller.
   */
  write(records: readonly SinkRecord[]): AppendResult {
    if (this.#closing) return { ok: false, reason: 'closed' };
    const result = this.#outbox.append(records);
    if (result.ok) this.#wake?.();
    return result;
  }

  /** A reason to refuse new input now, or undefined when a record of maxRecordBytes fits. */
  backpressure(): string | undefined {
    if (this.#outbox.failure !== undefined) return 'kafka-outbox-unwritable';
    if (!this.#outbox.hasRoomFor()) return 'kafka-outbox-full';
    return undefined;
  }

  /** Resolves once a record of maxRecordBytes would fit in the outbox (or the sink closes). */
  async whenWritable(): Promise<void> {
    while (!this.#closing && !this.#outbox.hasRoomFor()) await this.#nextAck();
  }

  /** Resolves once everything written before the call has been acknowledged by the broker (or the sink closes). */
  async flushed(): Promise<void> {
    const last = this.#outbox.nextSeq - 1;
    while (!this.#stopped && this.#deliveredThrough < last) {
      const undelivered = this.#outbox.oldestPendingSeqAfter(this.#deliveredThrough);
      if (undelivered === undefined || undelivered > last) return;
      await this.#nextAck();
    }
  }

  stats(): KafkaSinkStats {
    const outbox = this.#outbox.stats();
    // Acknowledged by the broker, still in the outbox until recorded: not counted as waiting.
    const delivered = this.#outbox.pendingAmong(this.#unrecorded);
    return {
      outboxRecords: outbox.pendingRecords - delivered.records,
      outboxBytes: outbox.pendingBytes - delivered.bytes,
      ...this.#stats,
      produceLatencyMs: { ...this.#stats.produceLatencyMs },
      refusedFull: outbox.refusedFull,
      refusedTooLarge: outbox.refusedTooLarge,
      tornLinesIgnored: outbox.tornLinesIgnored,
    };
  }

  /**
   * Refuses new writes, keeps delivering for at most `timeoutMs`, then stops and closes the
   * producer and the outbox. Whatever is left stays in the outbox for the next run.
   */
  async close(timeoutMs: number = this.config.closeTimeoutMs): Promise<CloseResult> {
    if (!this.#closing) {
      this.#closing = true;
      this.#notifyAck(); // whenWritable() waiters
      await withTimeout(this.flushed(), timeoutMs);
      this.#stopped = true;
      this.#wake?.();
      this.#notifyAck();
      // A send in flight ends when the producer disconnects.
      await withTimeout(this.#loop, DISCONNECT_TIMEOUT_MS);
      await this.#dropProducer();
      await withTimeout(this.#loop, DISCONNECT_TIMEOUT_MS);
      // Acknowledgements not recorded by then are lost: those records are sent again next run.
      await withTimeout(this.#recording ?? Promise.resolve(), DISCONNECT_TIMEOUT_MS);
      await this.#outbox.close();
    }
    const pendingRecords = this.#outbox.pendingRecords;
    return { flushed: pendingRecords === 0, pendingRecords };
  }

  async #deliver(): Promise<void> {
    let delayMs = this.config.retryInitialMs;
    while (!this.#stopped) {
      let entries: OutboxEntry[] = [];
      try {
        entries = await this.#outbox.peek(this.config.batchSize, this.config.maxBatchBytes, this.#deliveredThrough);
        if (entries.length === 0) {
          await this.#waitForWork();
          continue;
        }
        await this.#send(entries);
        this.#stats.delivered += entries.length;
        this.#stats.batchesDelivered += 1;
        this.#deliveredThrough = entries.at(-1)!.seq;
        // Recorded in the background: the next request need not wait for the ack log's fsync.
        for (const e of entries) this.#unrecorded.push(e.seq);
        this.#recording ??= this.#recordAcks();
        if (this.#stats.failing) {
          this.#stats.failing = false;
          this.#log('info', 'kafka delivery recovered', {
            sendErrors: this.#stats.sendErrors,
            outboxRecords: this.#outbox.pendingRecords,
          });
        }
        delayMs = this.config.retryInitialMs;
        this.#notifyAck();
      } catch (err) {
        if (this.#stopped) break;
        this.#stats.sendErrors += 1;
        this.#stats.lastError = describeError(err);
        if (!this.#stats.failing) {
          this.#stats.failing = true;
          this.#log('warn', 'kafka delivery failing; records wait in the outbox and are retried', {
            error: this.#stats.lastError,
            outboxRecords: this.#outbox.pendingRecords,
          });
        }
        // A fresh producer after any failure: kafkajs does not always recover a broken one.
        await this.#dropProducer();
        await this.#sleep(delayMs);
        delayMs = Math.min(delayMs * 2, this.config.retryMaxMs);
      }
    }
  }

  /**
   * Records broker acknowledgements in the outbox, coalescing those that arrive meanwhile.
   * A failure is retried (with backoff) rather than re-sent: the broker already has them.
   */
  async #recordAcks(): Promise<void> {
    let delayMs = this.config.retryInitialMs;
    let failing = false;
    while (this.#unrecorded.length > 0) {
      const seqs = this.#unrecorded.slice();
      try {
        await this.#outbox.ack(seqs);
        this.#unrecorded.splice(0, seqs.length);
        if (failing) this.#log('info', 'kafka outbox records acknowledgements again', { ackErrors: this.#stats.ackErrors });
        failing = false;
        delayMs = this.config.retryInitialMs;
        this.#notifyAck(); // room in the outbox: whenWritable()
      } catch (err) {
        this.#stats.ackErrors += 1;
        if (!failing) {
          failing = true;
          this.#log('warn', 'kafka outbox cannot record acknowledgements; retrying (the records stay pending)', {
            error: describeError(err),
          });
        }
        if (this.#stopped) break;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = Math.min(delayMs * 2, this.config.retryMaxMs);
      }
    }
    this.#recording = undefined;
  }

  async #send(entries: readonly OutboxEntry[]): Promise<void> {
    const producer = await this.#ensureProducer();
    const started = performance.now();
    await producer.sendBatch({
      acks: -1,
      timeout: this.config.requestTimeoutMs,
      compression: this.config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      topicMessages: toTopicMessages(entries, this.config.topics),
    });
    const latency = this.#stats.produceLatencyMs;
    const elapsedMs = performance.now() - started;
    latency.count += 1;
    latency.sum += elapsedMs;
    latency.max = Math.max(latency.max, elapsedMs);
    latency.last = elapsedMs;
    this.#observeProduce(elapsedMs / 1000, entries.length);
  }

  /** An observer's failure must not turn an acknowledged batch into a failed one (and a re-send). */
  #observeProduce(seconds: number, records: number): void {
    try {
      this.#onProduce?.(seconds, records);
    } catch (err) {
      this.#log('error', 'kafka produce observer threw', { error: describeError(err) });
    }
  }

  async #ensureProducer(): Promise<Producer> {
    if (this.config.createTopics && !this.#topicsReady) {
      await ensureTopics(this.#kafka, sinkTopics(this.config));
      this.#topicsReady = true;
    }
    if (this.#producer !== undefined) return this.#producer;
    const producer = this.#kafka.producer({
      idempotent: true,
      // kafkajs keeps idempotent ordering only with one request in flight per broker.
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      // Few inner retries: the delivery loop retries forever with its own backoff.
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    this.#producer = producer;
    await producer.connect();
    return producer;
  }

  async #dropProducer(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    if (producer !== undefined) await withTimeout(producer.disconnect().catch(() => undefined), DISCONNECT_TIMEOUT_MS);
  }

  #waitForWork(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
      // Stop, or a record, may have come while the loop was not yet waiting.
      if (this.#stopped) this.#wake();
      else if (this.#outbox.oldestPendingSeqAfter(this.#deliveredThrough) !== undefined) this.#wake();
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      timer = setTimeout(done, ms);
      // Only stop interrupts a backoff; new records must not cut it short.
      this.#wake = () => {
        if (this.#stopped) done();
      };
      if (this.#stopped) done();
    });
  }

  #nextAck(): Promise<void> {
    return new Promise((resolve) => {
      const listener = (): void => {
        this.#ackListeners.delete(listener);
        resolve();
      };
      this.#ackListeners.add(listener);
    });
  }

  #notifyAck(): void {
    for (const listener of [...this.#ackListeners]) listener();
  }
}

function toTopicMessages(entries: readonly OutboxEntry[], topics: KafkaSinkConfig['topics']): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const { record } of entries) {
    const topic = topics[record.topic];
    let messages = byTopic.get(topic);
    if (messages === undefined) byTopic.set(topic, (messages = []));
    messages.push({
      key: record.key,
      value: record.value,
      headers: { 'content-type': 'application/json', ...record.headers },
    });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/** The findings and alarms topics, created with the sink's partitions and replication (`createTopics`). */
function sinkTopics(config: KafkaSinkConfig): WantedTopic[] {
  const create = { numPartitions: config.topicPartitions, replicationFactor: config.topicReplicationFactor };
  return [config.topics.findings, config.topics.alarms].map((topic) => ({ topic, create, fix: 'create it, or set sinks.kafka.createTopics', where: 'the Kafka cluster (sinks.kafka)' }));
}

function describeError(err: unknown): string {
  const wrapped = err instanceof Error ? err : new UpstreamError(String(err));
  const cause = wrapped.cause instanceof Error ? `: ${wrapped.cause.message}` : '';
  return `${wrapped.name}: ${wrapped.message}${cause}`;
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}

/** The default {@link SinkLog} (library use, tests): one JSON line on stderr. */
export function logToStderr(level: SinkLogLevel, message: string, context: Record<string, unknown> = {}): void {
  process.stderr.write(JSON.stringify({ level, logger: 'sinks.kafka', message, ...context }) + '\n');
}
