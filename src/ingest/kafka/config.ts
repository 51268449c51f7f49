import { z } from 'zod';
import { KafkaConnectionSchema, KafkaTopicNameSchema as TopicName } from '../../kafka/config.ts';
import { intKey } from '../../config/int-key.ts';

/**
 * Sessions at any scale (docs/scaling-out.md §4): stage 1 assembles by trace on the partition
 * the Collector wrote and forwards each closed trace that names a session to `topic`, keyed by
 * session id; stage 2 (consumer group `groupId`, default `<source groupId>.sessions`) assembles
 * sessions from it and runs the analysis. Off: trajectories are keyed by trace and a trace naming
 * a session is marked `partitioned-session`.
 */
export const SessionStageConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /**
   * The internal repartition topic; absent: `<source groupId>.sessions`. One per deployment, as
   * Kafka Streams names its internal topics after the application: two deployments (groups)
   * sharing one would read each other's sessions.
   */
  topic: TopicName.optional(),
  /** Its partition count: checked at start (a topic of another size is an error, never used). */
  partitions: intKey(1, 6),
  /** Create the internal topic at start when missing, with `partitions` and `replicationFactor`. */
  createTopics: z.boolean().default(true),
  /** -1: the broker's default. */
  replicationFactor: z.number().int().min(-1).max(32).default(-1),
  /** Stage 2's consumer group; absent: the source's `groupId` + `.sessions`. */
  groupId: z.string().min(1).optional(),
  /** Records of the internal topic that do not parse go here; absent: `<topic>.dlq`. */
  deadLetterTopic: TopicName.optional(),
  /** Forwarded bytes not yet acknowledged above which stage 1 stops consuming (its partitions pause). */
  maxInFlightBytes: intKey(1024, 16 * 1024 * 1024),
  /**
   * Largest record forwarded; the topic's `max.message.bytes`, read at start, lowers it. A
   * trace over it is refused (counted, logged) and its session marked `repartition-refused`.
   */
  maxRecordBytes: intKey(1024, 1_000_000),
  /** Forwards are gathered this long into one produce request. */
  lingerMs: z.number().int().min(0).max(1_000).default(5),
  /** The source topic's partition count, when given: checked at start like the internal topic's. */
  sourcePartitions: z.number().int().min(1).optional(),
});

export type SessionStageConfig = z.infer<typeof SessionStageConfigSchema>;

/**
 * OTLP logs from Kafka (the Collector exporter's `logs` topic): GenAI content events joined to
 * the spans they name, as `/v1/logs` does. The Collector must key them by trace id
 * (`partition_logs_by_trace_id`) and the topic must have the spans topic's partition count:
 * partition p of both goes to one consumer (checked at start).
 */
export const KafkaLogsConfigSchema = z.strictObject({
  /** Off: only spans are read (content events sent as logs are then not joined). */
  enabled: z.boolean().default(false),
  /** The Collector exporter's `logs.topic`. */
  topic: TopicName.default('otlp_logs'),
  /** The Collector exporter's `logs.encoding`. */
  encoding: z.enum(['otlp_proto', 'otlp_json']).default('otlp_proto'),
});

export type KafkaLogsConfig = z.infer<typeof KafkaLogsConfigSchema>;

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
  /** The logs topic read beside `topic`; see {@link KafkaLogsConfigSchema}. */
  logs: KafkaLogsConfigSchema.prefault({}),
  /**
   * Create the source topics (`topic`, `logs.topic`) at start when missing: with the partition
   * count of the one that exists, else `topicPartitions`. Off: a missing one stops the start.
   */
  createTopics: z.boolean().default(false),
  /** Partitions of a source topic created at start (when neither exists; -1 replication: the broker's default). */
  topicPartitions: z.number().int().min(1).default(3),
  topicReplicationFactor: z.number().int().min(-1).max(32).default(-1),
  /** Undecodable records go here with the reason in the `trajwatch.dlq.reason` header. */
  deadLetterTopic: TopicName.default('otlp_spans.dlq'),
  /** Create the dead-letter topic at start when it is missing (brokers often refuse auto-creation). */
  createDeadLetterTopic: z.boolean().default(true),
  /** A new group with no committed offset starts at the oldest record (true) or the newest. */
  fromBeginning: z.boolean().default(true),
  /** Offsets are committed at this interval (and on rebalance and stop), never automatically by kafkajs. */
  commitIntervalMs: intKey(10, 1_000),
  /** While the pipeline refuses input, the consumer is paused and admission asked again at this interval. */
  admissionRetryMs: intKey(1, 100),
  sessionTimeoutMs: intKey(1_000, 30_000),
  heartbeatIntervalMs: intKey(100, 3_000),
  rebalanceTimeoutMs: intKey(1_000, 60_000),
  /** Bytes fetched per partition per request (kafkajs `maxBytesPerPartition`). */
  maxBytesPerPartition: intKey(1024, 1024 * 1024),
  /** The repartition to sessions (stage 2); see {@link SessionStageConfigSchema}. */
  sessions: SessionStageConfigSchema.prefault({}),
})
  .refine((c) => c.heartbeatIntervalMs < c.sessionTimeoutMs, {
    message: 'heartbeatIntervalMs must be below sessionTimeoutMs',
    path: ['heartbeatIntervalMs'],
  })
  .refine((c) => !c.logs.enabled || (c.logs.topic !== c.topic && c.logs.topic !== c.deadLetterTopic), {
    message: 'the logs topic must be a topic of its own, not the spans or dead-letter topic',
    path: ['logs', 'topic'],
  })
  .refine((c) => !c.sessions.enabled || TopicName.safeParse(sessionsTopicOf(c)).success, {
    message: 'the groupId does not make a topic name (<groupId>.sessions): set sessions.topic',
    path: ['sessions', 'topic'],
  });

export type KafkaSourceConfig = z.infer<typeof KafkaSourceConfigSchema>;

/** The internal repartition topic: `sessions.topic`, else `<groupId>.sessions`. */
export function sessionsTopicOf(c: { groupId: string; sessions: { topic?: string | undefined } }): string {
  return c.sessions.topic ?? `${c.groupId}.sessions`;
}

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
