import type { Admin, Kafka } from 'kafkajs';
import { ConfigError } from '../../errors.ts';
import { whileSettling } from '../../kafka/settle.ts';
import { ensureTopics, type WantedTopic } from '../../kafka/topics.ts';
import type { KafkaSourceConfig } from './config.ts';

const WHERE = 'the Kafka cluster (source.kafka)';

/**
 * Where a record of the logs topic sits for the pipeline's position bookkeeping, which knows
 * partitions only: partition p of the logs topic is position partition `-2 - p` (the spans
 * topic's are their own numbers, the span WAL's is -1). Partition p of both topics belongs to
 * one member (co-partitioned), so a rebalance forgets both together. Its own inverse.
 */
export function logsPositionPartition(partition: number): number {
  return -2 - partition;
}

/** The source topics the OTLP consumer reads: the spans topic, and the logs topic when `logs.enabled`. */
export function sourceTopics(config: KafkaSourceConfig): string[] {
  return config.logs.enabled ? [config.topic, config.logs.topic] : [config.topic];
}

/** The dead-letter topic: created when `createDeadLetterTopic`, else named with that key when missing. */
export function deadLetterTopic(config: KafkaSourceConfig): WantedTopic {
  return {
    topic: config.deadLetterTopic,
    label: 'the dead-letter topic',
    create: config.createDeadLetterTopic ? { numPartitions: 1, replicationFactor: -1 } : undefined,
    fix: 'create it, or set source.kafka.createDeadLetterTopic',
    where: WHERE,
  };
}

/**
 * Checks, before the consumer joins, that the source topics and the dead-letter topic exist
 * (one admin session) and that the logs topic has the spans topic's partition count (the
 * Collector keys both by trace id; one member reads partition p of both). A missing one is created when `createTopics` is on (with the other's
 * partition count when that one exists, else `topicPartitions`), else a {@link ConfigError}
 * naming the topic and the key that fixes it; so is a partition-count mismatch. Takes a
 * connected admin, or a client (connected for the call).
 *
 * @throws ConfigError as above; kafkajs errors from the broker.
 */
export async function checkSourceTopics(client: Admin | Kafka, config: KafkaSourceConfig): Promise<void> {
  if (!('admin' in client)) return prepare(client, config);
  const admin = client.admin();
  await admin.connect();
  try {
    await prepare(admin, config);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function prepare(admin: Admin, config: KafkaSourceConfig): Promise<void> {
  const topics = sourceTopics(config);
  const existing = new Set(await admin.listTopics());
  const present = topics.filter((t) => existing.has(t));
  const partitions = present.length === 0 ? config.topicPartitions : (await partitionCounts(admin, present)).get(present[0]!)!;
  const create = config.createTopics ? { numPartitions: partitions, replicationFactor: config.topicReplicationFactor } : undefined;
  const how = create === undefined ? ', or set source.kafka.createTopics' : '';
  await ensureTopics(admin, [
    { topic: config.topic, label: 'the spans topic', create, fix: `create it (the Collector's traces topic; source.kafka.topic names it)${how}`, where: WHERE },
    ...(config.logs.enabled
      ? [
          {
            topic: config.logs.topic,
            label: 'the logs topic',
            create,
            fix: `create it with ${partitions} partitions like ${config.topic} (source.kafka.logs.topic names it)${how}, or set source.kafka.logs.enabled false`,
            where: WHERE,
          },
        ]
      : []),
    deadLetterTopic(config),
  ]);
  if (!config.logs.enabled) return;
  const counts = await partitionCounts(admin, topics);
  const spans = counts.get(config.topic);
  const logs = counts.get(config.logs.topic);
  if (spans !== logs) {
    throw new ConfigError(
      [
        `topic ${config.topic} has ${spans} partitions and ${config.logs.topic} ${logs}: they must have the same count, so that one consumer reads a trace's spans and logs (source.kafka.topic, source.kafka.logs.topic): repartition one of them`,
      ],
      WHERE,
    );
  }
}

/** Partition counts of `topics`, asked again while a topic created a moment ago settles. */
async function partitionCounts(admin: Admin, topics: string[]): Promise<Map<string, number>> {
  const metadata = await whileSettling(() => admin.fetchTopicMetadata({ topics }));
  return new Map(metadata.topics.map((t) => [t.name, t.partitions.length]));
}
