import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { ConfigError } from '../errors.ts';

/** kafkajs `ConfigResourceTypes.TOPIC` (a CommonJS enum that ESM cannot import by name). */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

export interface TopicPlan {
  /** The source topic (the Collector's), and the partition count it must have when given. */
  source: { topic: string; partitions?: number };
  /** The internal repartition topic and the partition count it must have. */
  internal: { topic: string; partitions: number; replicationFactor: number };
  /** Create the internal topic when it is missing. */
  create: boolean;
}

/**
 * Checks, before either stage consumes, that the topics of a repartition are what the
 * configuration says: the source topic exists (with `source.partitions` when given); the
 * internal topic exists with exactly `internal.partitions` (created so when missing and
 * `create` is on). A missing or mis-sized topic is a {@link ConfigError} naming the topic, the
 * sizes and the fix: a topic of another size would move sessions between partitions (keys hash
 * modulo the count) and is never used. Returns the internal topic's `max.message.bytes`.
 */
export async function prepareTopics(admin: Admin, plan: TopicPlan): Promise<{ maxMessageBytes: number | undefined }> {
  const existing = new Set(await admin.listTopics());
  if (!existing.has(plan.source.topic)) {
    throw new ConfigError([`topic ${plan.source.topic} does not exist: create it (docs/scaling-out.md §1)`], 'the Kafka cluster (source.kafka)');
  }
  if (!existing.has(plan.internal.topic)) {
    if (!plan.create) {
      throw new ConfigError(
        [`the sessions topic ${plan.internal.topic} does not exist: create it with ${plan.internal.partitions} partitions, or set source.kafka.sessions.createTopics`],
        'the Kafka cluster (source.kafka.sessions)',
      );
    }
    await admin.createTopics({
      topics: [{ topic: plan.internal.topic, numPartitions: plan.internal.partitions, replicationFactor: plan.internal.replicationFactor }],
      waitForLeaders: true,
    });
  }
  const metadata = await admin.fetchTopicMetadata({ topics: [plan.source.topic, plan.internal.topic] });
  for (const t of metadata.topics) {
    const want = t.name === plan.internal.topic ? plan.internal.partitions : plan.source.partitions;
    if (want !== undefined && t.partitions.length !== want) {
      const key = t.name === plan.internal.topic ? 'sessions.partitions' : 'sessions.sourcePartitions';
      throw new ConfigError(
        [`topic ${t.name} has ${t.partitions.length} partitions, the configuration says ${want} (source.kafka.${key}): fix one of them`],
        'the Kafka cluster (source.kafka.sessions)',
      );
    }
  }
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: TOPIC_RESOURCE, name: plan.internal.topic, configNames: ['max.message.bytes'] }],
  });
  const entry = described.resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes');
  const maxMessageBytes = entry === undefined ? undefined : Number(entry.configValue);
  return { maxMessageBytes: Number.isFinite(maxMessageBytes) ? maxMessageBytes : undefined };
}
