import { CompressionTypes, Partitioners } from 'kafkajs';
import type { Kafka, Message, Producer, TopicMessages } from 'kafkajs';
import { ensureTopics, type WantedTopic } from '../../kafka/topics.ts';
import type { OutboxEntry } from '../../storage/outbox.ts';
import type { DeliveryTransport } from '../delivery/transport.ts';
import { withTimeout } from '../delivery/with-timeout.ts';
import type { SinkRecord } from '../record.ts';
import type { KafkaSinkConfig } from './config.ts';

const DISCONNECT_TIMEOUT_MS = 2_000;

/**
 * The Kafka sink's transport: one `sendBatch` per batch with an idempotent kafkajs producer
 * (`acks: -1`, one request in flight), the topics checked first (created when `createTopics`). `onSent`
 * hears each acknowledged request's duration and record count (latency stats, metrics).
 */
export class KafkaTransport implements DeliveryTransport<SinkRecord> {
  readonly #kafka: Kafka;
  readonly #config: KafkaSinkConfig;
  readonly #onSent: (elapsedMs: number, records: number) => void;
  #producer: Producer | undefined;
  #topicsReady = false;

  constructor(kafka: Kafka, config: KafkaSinkConfig, onSent: (elapsedMs: number, records: number) => void) {
    this.#kafka = kafka;
    this.#config = config;
    this.#onSent = onSent;
  }

  async send(entries: readonly OutboxEntry<SinkRecord>[]): Promise<void> {
    const producer = await this.#ensureProducer();
    const started = performance.now();
    await producer.sendBatch({
      acks: -1,
      timeout: this.#config.requestTimeoutMs,
      compression: this.#config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      topicMessages: toTopicMessages(entries, this.#config.topics),
    });
    this.#onSent(performance.now() - started, entries.length);
  }

  /**
   * kafkajs wraps what its own retries gave up on (`KafkaJSNumberOfRetriesExceeded`,
   * `KafkaJSNonRetriableError`) around the broker's error: that innermost error's `retriable`
   * decides (a refused topic or authorization is not; a lost connection or leader is).
   */
  isRetryable(err: unknown): boolean {
    let inner = err;
    while (inner instanceof Error && inner.cause instanceof Error && inner.cause !== inner) inner = inner.cause;
    return (inner as { retriable?: unknown } | undefined)?.retriable !== false;
  }

  /** A fresh producer after any failure: kafkajs does not always recover a broken one. */
  reset(): Promise<void> {
    return this.#dropProducer();
  }

  close(): Promise<void> {
    return this.#dropProducer();
  }

  /**
   * Checks the topics (creating them when `createTopics`) once: a missing topic is named with the
   * key that fixes it, not retried as kafkajs's "does not host this topic-partition". Asked at
   * the first send, and by the sink at start so an operator hears of a missing topic before the
   * first finding.
   * @throws ConfigError naming a missing topic and its fix; kafkajs errors from the broker.
   */
  async prepare(): Promise<void> {
    if (this.#topicsReady) return;
    await ensureTopics(this.#kafka, sinkTopics(this.#config));
    this.#topicsReady = true;
  }

  async #ensureProducer(): Promise<Producer> {
    await this.prepare();
    if (this.#producer !== undefined) return this.#producer;
    const producer = this.#kafka.producer({
      idempotent: true,
      // kafkajs keeps idempotent ordering only with one request in flight per broker.
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      // Few inner retries: the delivery engine retries forever with its own backoff.
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    this.#producer = producer;
    await producer.connect();
    return producer;
  }

  async #dropProducer(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    if (producer !== undefined)
      await withTimeout(
        producer.disconnect().catch(() => undefined),
        DISCONNECT_TIMEOUT_MS,
      );
  }
}

function toTopicMessages(entries: readonly OutboxEntry<SinkRecord>[], topics: KafkaSinkConfig['topics']): TopicMessages[] {
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

function sinkTopics(config: KafkaSinkConfig): WantedTopic[] {
  const create = config.createTopics ? { numPartitions: config.topicPartitions, replicationFactor: config.topicReplicationFactor } : undefined;
  return [config.topics.findings, config.topics.alarms].map((topic) => ({
    topic,
    create,
    fix: `create it (sinks.kafka.topics names it)${create === undefined ? ', or set sinks.kafka.createTopics' : ''}`,
    where: 'the Kafka cluster (sinks.kafka)',
  }));
}
