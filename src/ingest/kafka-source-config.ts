import { z } from 'zod';
import { KafkaConnectionSchema, KafkaTopicNameSchema as TopicName } from '../kafka/config.ts';

/**
 * The Kafka source: OTLP records written by the OTel Collector's Kafka exporter, read as one
 * consumer group (docs/scaling-out.md). Strict, every default embedded.
 */
export const KafkaSourceConfigSchema = KafkaConnectionSchema.extend({
  /** The Collector exporter's `traces.topic`. */
  topic: TopicName.default('otlp_spans'),
  /** Every instance of one deployment uses the same group id; Kafka shares the partitions among them. */
  groupId: z.string().min(1).default('trajwatch'),
  /** The Collector exporter's `traces.encoding`. */
  encoding: z.enum(['otlp_proto', 'otlp_json']).default('otlp_proto'),
  /** Undecodable records go here with the reason in the `trajwatch.dlq.reason` header. */
  deadLetterTopic: TopicName.default('otlp_spans.dlq'),
  /** Create the dead-letter topic at start when it is missing (brokers often refuse auto-creation). */
  createDeadLetterTopic: z.boolean().default(true),
  /** A new group with no committed offset starts at the oldest record (true) or the newest. */
  fromBeginning: z.boolean().default(true),
  /** Offsets are committed at this interval (and on rebalance and stop), never automatically by kafkajs. */
  commitIntervalMs: z.number().int().min(10).default(1_000),
  /** While the pipeline refuses input, the consumer is paused and admission asked again at this interval. */
  admissionRetryMs: z.number().int().min(1).default(100),
  sessionTimeoutMs: z.number().int().min(1_000).default(30_000),
  heartbeatIntervalMs: z.number().int().min(100).default(3_000),
  rebalanceTimeoutMs: z.number().int().min(1_000).default(60_000),
  /** Bytes fetched per partition per request (kafkajs `maxBytesPerPartition`). */
  maxBytesPerPartition: z.number().int().min(1024).default(1024 * 1024),
})
  .refine((c) => c.heartbeatIntervalMs < c.sessionTimeoutMs, {
    message: 'heartbeatIntervalMs must be below sessionTimeoutMs',
    path: ['heartbeatIntervalMs'],
  });

export type KafkaSourceConfig = z.infer<typeof KafkaSourceConfigSchema>;

/** Where spans come from: the OTLP receivers, a Kafka topic, or both. */
export const SourceConfigSchema = z
  .strictObject({
    /** The OTLP/HTTP (and gRPC) receivers; `/metrics` and `/healthz` are served either way. */
    http: z.boolean().default(true),
    /** Consume OTLP from Kafka as a consumer group; absent, no Kafka source runs. */
    kafka: KafkaSourceConfigSchema.optional(),
  })
  .refine((s) => s.http || s.kafka !== undefined, { message: 'at least one source: http, or kafka configured' });

export type SourceConfig = z.infer<typeof SourceConfigSchema>;
