import type { Kafka, Producer } from 'kafkajs';
import { ConfigError, UpstreamError } from '../../errors.ts';
import { type KafkaSourceConfig, sessionsTopicOf } from '../../ingest/kafka/config.ts';
import type { RecordReader } from '../../ingest/kafka/source.ts';
import { checkSourceTopics } from '../../ingest/kafka/topics.ts';
import { kafkaClient } from '../../kafka/client.ts';
import type { Pipeline } from '../../pipeline/pipeline.ts';
import { Forwarder } from '../../repartition/forwarder.ts';
import { registerForwarderMetrics } from '../../repartition/forwarder-metrics.ts';
import { decodeRepartitionRecord } from '../../repartition/record.ts';
import { prepareTopics } from '../../repartition/topics.ts';
import { levelLog, type Logger } from '../../telemetry/logger.ts';
import type { MetricRegistry } from '../../telemetry/metrics.ts';
import { type Component, once } from '../component.ts';

/** How long a stop waits for forwards in flight to be acknowledged; what is not stays uncommitted (replayed). */
const STOP_FLUSH_MS = 5_000;

/**
 * The repartition between the two stages (docs/scaling-out.md §4): the internal topic checked
 * (or created) at start, and stage 1's forwarder with its producer. Started before stage 2's
 * consumer (which needs the topic) and stage 1 (which forwards); stopped after stage 1 stopped,
 * once what it forwarded is acknowledged (bounded). Its health is the forwarder's bound.
 */
export class RepartitionComponent implements Component {
  readonly name = 'repartition';
  readonly forwarder: Forwarder;
  readonly #config: KafkaSourceConfig;
  readonly #kafka: Kafka;
  readonly #producer: Producer;

  constructor(config: KafkaSourceConfig, registry: MetricRegistry, logger: Logger) {
    this.#config = config;
    this.#kafka = kafkaClient(config, { keyPrefix: 'source.kafka.', log: levelLog(logger) });
    this.#producer = this.#kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const { maxInFlightBytes, maxRecordBytes, lingerMs } = config.sessions;
    this.forwarder = new Forwarder(this.#producer, { topic: sessionsTopicOf(config), maxInFlightBytes, maxRecordBytes, lingerMs, log: levelLog(logger) });
    registerForwarderMetrics(registry, () => this.forwarder.stats());
  }

  /** @throws ConfigError for a missing or mis-sized topic; UpstreamError when the broker cannot be reached. */
  async start(): Promise<void> {
    const { sessions, topic } = this.#config;
    const internal = sessionsTopicOf(this.#config);
    const admin = this.#kafka.admin();
    try {
      await admin.connect();
      // The source topics first, as the source checks them (created with createTopics, else named with the key), before the repartition requires them.
      await checkSourceTopics(admin, this.#config);
      const { maxMessageBytes } = await prepareTopics(admin, {
        source: { topic, ...(sessions.sourcePartitions === undefined ? {} : { partitions: sessions.sourcePartitions }) },
        internal: { topic: internal, partitions: sessions.partitions, replicationFactor: sessions.replicationFactor },
        create: sessions.createTopics,
      });
      if (maxMessageBytes !== undefined) this.forwarder.limitRecordBytes(maxMessageBytes);
      await this.#producer.connect();
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new UpstreamError(`repartition: cannot prepare ${internal}: ${(err as Error).message}`, {
        retriable: true,
        cause: err,
        context: { brokers: this.#config.brokers, topic: internal },
      });
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  readonly stop = once(async () => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.forwarder.flushed(), new Promise<void>((r) => (timer = setTimeout(r, STOP_FLUSH_MS)))]);
    clearTimeout(timer);
    this.forwarder.close();
    await this.#producer.disconnect().catch(() => undefined);
  });

  health(): string | undefined {
    return this.forwarder.backpressure();
  }

  backlog(): { records: number; bytes: number } {
    const s = this.forwarder.stats();
    return { records: s.inFlightRecords, bytes: s.inFlightBytes };
  }
}

/** Stage 2's consumer configuration: the source's connection, the internal topic, its own group. */
export function sessionStageSourceConfig(config: KafkaSourceConfig): KafkaSourceConfig {
  const { sessions } = config;
  const topic = sessionsTopicOf(config);
  return {
    ...config,
    topic,
    groupId: sessions.groupId ?? `${config.groupId}.sessions`,
    deadLetterTopic: sessions.deadLetterTopic ?? `${topic}.dlq`,
    // The internal topic holds only what stage 1 forwarded: a new group reads all of it.
    fromBeginning: true,
  };
}

/**
 * Stage 2 reads a record of the internal topic into the session pipeline: a trace's steps and
 * capture state, or a refusal (the session learns a trace of it is missing). A record that does
 * not parse is dead-lettered with the reason `invalid-repartition-record`.
 */
export function sessionRecordReader(pipeline: Pipeline): RecordReader {
  return (value, position) => {
    const record = decodeRepartitionRecord(value);
    if ('error' in record) return { reason: 'invalid-repartition-record', detail: record.error };
    const { sessionId, traceId, capture } = record;
    if (record.kind === 'trace') {
      pipeline.acceptForwarded({ sessionId, traceId, steps: record.steps, capture }, position);
      return record.steps.length;
    }
    const reasons = [...capture.incompleteReasons, 'repartition-refused' as const];
    pipeline.acceptForwarded({ sessionId, traceId, steps: [], capture: { ...capture, incompleteReasons: reasons } }, position);
    return 0;
  };
}
