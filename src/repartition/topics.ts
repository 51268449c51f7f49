import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { ConfigError } from '../errors.ts';
import { ensureTopics } from '../kafka/topics.ts';
import { whileSettling } from '../kafka/settle.ts';

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
  const { topic, partitions, replicationFactor } = plan.internal;
  await ensureTopics(admin, [
    { topic: plan.source.topic, fix: 'create it (docs/scaling-out.md §1)', where: 'the Kafka cluster (source.kafka)' },
    {
      topic,
      label: 'the sessions topic',
      create: plan.create ? { numPartitions: partitions, replicationFactor } : undefined,
      fix: `create it with ${partitions} partitions, or set source.kafka.sessions.createTopics`,
      where: 'the Kafka cluster (source.kafka.sessions)',
    },
  ]);
  const metadata = await settledMetadata(admin, [plan.source.topic, plan.internal.topic]);
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

/** The topics' metadata, asked again while a topic just created settles (`whileSettling`). */
function settledMetadata(admin: Admin, topics: string[]): ReturnType<Admin['fetchTopicMetadata']> {
  return whileSettling(() => admin.fetchTopicMetadata({ topics }));
}
