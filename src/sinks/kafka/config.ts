import { z } from 'zod';
import { parseSection } from '../../config/parse-section.ts';
import { KafkaConnectionSchema, KafkaTopicNameSchema as TopicName } from '../../kafka/config.ts';
import { StreamAudiencesSchema } from '../audience-sink.ts';
import { batchKeys, OUTBOX_DELIVERY_KEYS, retryOrder } from '../delivery/config.ts';

/** The Kafka sink's configuration: strict, every default embedded. */
export const KafkaSinkConfigSchema = KafkaConnectionSchema.extend({
  topics: z
    .strictObject({
      findings: TopicName.default('trajwatch.findings'),
      alarms: TopicName.default('trajwatch.alarms'),
    })
    .prefault({}),
  /**
   * The view each topic carries: `internal` (default, everything) or `external` (no model ids,
   * receipts, ledger keys, certificate ids, window-policy digests; docs/consumers.md).
   */
  audience: StreamAudiencesSchema,
  /** Create missing topics through the admin API before the first send. */
  createTopics: z.boolean().default(false),
  /** Partitions and replication of topics this sink creates (-1: the broker's default). */
  topicPartitions: z.number().int().min(1).default(3),
  topicReplicationFactor: z.number().int().min(-1).default(-1),
  /** kafkajs supports gzip natively; other codecs would need extra packages. */
  compression: z.enum(['none', 'gzip']).default('none'),
  /** Records per produce request (one `sendBatch`), and its bytes beyond the first record. */
  ...batchKeys(500, 512 * 1024),
  ...OUTBOX_DELIVERY_KEYS,
}).refine(...retryOrder);

export type KafkaSinkConfig = z.infer<typeof KafkaSinkConfigSchema>;
export type KafkaSinkConfigInput = z.input<typeof KafkaSinkConfigSchema>;

/**
 * Validates a Kafka sink configuration, collecting every problem.
 * @throws ConfigError naming each bad key and value.
 * @example parseKafkaSinkConfig({ brokers: ['127.0.0.1:9092'] }, 'sinks.kafka')
 */
export function parseKafkaSinkConfig(input: unknown, source = 'kafka sink configuration'): KafkaSinkConfig {
  return parseSection(KafkaSinkConfigSchema, input, source);
}
