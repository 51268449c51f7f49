import type { Admin, Kafka } from 'kafkajs';
import { ConfigError } from '../errors.ts';
import { whileSettling } from './settle.ts';

/** A topic trajwatch needs, how to create it when that is allowed, and what fixes it when it is missing. */
export interface WantedTopic {
  topic: string;
  /** Created with these when missing; absent: trajwatch does not create it, and a missing one is an error. */
  create?: { numPartitions: number; replicationFactor: number } | undefined;
  /** How the error names it (`the sessions topic`); default `topic`. */
  label?: string;
  /** What fixes a missing one: `create it with 6 partitions, or set source.kafka.sessions.createTopics`. */
  fix: string;
  /** The error's source: `the Kafka cluster (source.kafka)`. */
  where: string;
}

/**
 * Makes sure every wanted topic exists: those missing that may be created are (waiting for
 * their leaders); the first missing one that may not is a {@link ConfigError} naming the topic
 * and the key or step that fixes it. Takes a connected admin, or a client (connected for the
 * call, disconnected after).
 *
 * @throws ConfigError for a missing topic trajwatch may not create; kafkajs errors from the broker.
 */
export async function ensureTopics(client: Admin | Kafka, wanted: readonly WantedTopic[]): Promise<void> {
  if ('admin' in client) {
    const admin = client.admin();
    await admin.connect();
    try {
      return await ensureTopics(admin, wanted);
    } finally {
      await admin.disconnect();
    }
  }
  const existing = new Set(await client.listTopics());
  const missing = wanted.filter((w) => !existing.has(w.topic));
  const refused = missing.find((w) => w.create === undefined);
  if (refused !== undefined) throw new ConfigError([`${refused.label ?? 'topic'} ${refused.topic} does not exist: ${refused.fix}`], refused.where);
  if (missing.length === 0) return;
  // A broker under load may not yet know a topic it just created while kafkajs waits for its leaders
  // (UNKNOWN_TOPIC_OR_PARTITION, which kafkajs does not retry): asked again, the topics already exist.
  const topics = missing.map((w) => ({ topic: w.topic, ...w.create! }));
  await whileSettling(() => client.createTopics({ waitForLeaders: true, topics }));
}
