import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { ConfigError } from '../errors.ts';
import { ensureTopics } from '../kafka/topics.ts';
import { Backoff } from '../storage/backoff.ts';

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

/** How long a topic just created (here or by another member starting beside this one) may take to appear in metadata. */
const METADATA_SETTLE_ATTEMPTS = 8;

/**
 * The topics' metadata, asked again (the house backoff from 100 ms: at most about 25 s in all,
 * half that on average) while the broker
 * answers a retriable error: a topic created a moment ago by this process or by another member
 * starting beside it is `UNKNOWN_TOPIC_OR_PARTITION` until every broker has its metadata.
 */
async function settledMetadata(admin: Admin, topics: string[]): ReturnType<Admin['fetchTopicMetadata']> {
  const backoff = new Backoff(100, 12_800);
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.fetchTopicMetadata({ topics });
    } catch (err) {
      const retriable = (err as { retriable?: boolean }).retriable === true;
      if (!retriable || attempt >= METADATA_SETTLE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, backoff.next()));
    }
  }
}
