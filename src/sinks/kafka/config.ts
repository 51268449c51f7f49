import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseHostPort } from '../../config/host-port.ts';
import { parseSection } from '../../config/parse-section.ts';
import { ConfigError } from '../../errors.ts';
import { DEFAULT_OUTBOX_LIMITS } from './outbox.ts';

const Broker = z.string().refine((v) => parseHostPort(v) !== undefined, {
  message: 'expected HOST:PORT with a port from 0 to 65535',
});

const TopicName = z
  .string()
  .regex(/^[a-zA-Z0-9._-]{1,249}$/, 'a Kafka topic name: 1 to 249 of [a-zA-Z0-9._-]');

/** SASL credentials: the secret is named by an environment variable or a file, never inline. */
const SaslSchema = z
  .strictObject({
    mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
    username: z.string().min(1),
    passwordEnv: z.string().min(1).optional(),
    passwordFile: z.string().min(1).optional(),
  })
  .refine((s) => (s.passwordEnv === undefined) !== (s.passwordFile === undefined), {
    message: 'set exactly one of passwordEnv or passwordFile',
  });

/** TLS: PEM file paths; `{}` alone means TLS with the system's trusted CAs. */
const SslSchema = z.strictObject({
  caFile: z.string().min(1).optional(),
  certFile: z.string().min(1).optional(),
  keyFile: z.string().min(1).optional(),
  rejectUnauthorized: z.boolean().default(true),
});

/** The Kafka sink's configuration: strict, every default embedded. */
export const KafkaSinkConfigSchema = z
  .strictObject({
    brokers: z.array(Broker).min(1),
    clientId: z.string().min(1).default('trajwatch'),
    topics: z
      .strictObject({
        findings: TopicName.default('trajwatch.findings'),
        alarms: TopicName.default('trajwatch.alarms'),
      })
      .prefault({}),
    /** Create missing topics through the admin API before the first send. */
    createTopics: z.boolean().default(false),
    /** Partitions and replication of topics this sink creates (-1: the broker's default). */
    topicPartitions: z.number().int().min(1).default(3),
    topicReplicationFactor: z.number().int().min(-1).default(-1),
    sasl: SaslSchema.optional(),
    ssl: SslSchema.optional(),
    /** kafkajs supports gzip natively; other codecs would need extra packages. */
    compression: z.enum(['none', 'gzip']).default('none'),
    /** Records per produce request (one `sendBatch`). */
    batchSize: z.number().int().min(1).max(10_000).default(500),
    /** Serialized bytes per produce request beyond its first record. */
    maxBatchBytes: z.number().int().min(1024).default(512 * 1024),
    /** Outbox bounds: at either, `write` answers `full` and `backpressure()` says so. */
    maxOutboxBytes: z.number().int().min(1024).default(DEFAULT_OUTBOX_LIMITS.maxOutboxBytes),
    maxOutboxRecords: z.number().int().min(1).default(DEFAULT_OUTBOX_LIMITS.maxOutboxRecords),
    /** Below the broker's default `message.max.bytes` (1 MiB), so the broker never rejects one. */
    maxRecordBytes: z.number().int().min(256).default(DEFAULT_OUTBOX_LIMITS.maxRecordBytes),
    outboxSegmentBytes: z.number().int().min(4096).default(DEFAULT_OUTBOX_LIMITS.segmentBytes),
    connectionTimeoutMs: z.number().int().min(1).default(3_000),
    requestTimeoutMs: z.number().int().min(1).default(30_000),
    /** Delivery retry backoff after a failed send: doubles from initial up to max. */
    retryInitialMs: z.number().int().min(1).default(250),
    retryMaxMs: z.number().int().min(1).default(10_000),
    /** How long `close()` keeps delivering before it gives up (what is left stays in the outbox). */
    closeTimeoutMs: z.number().int().min(0).default(10_000),
    /** kafkajs's own log lines, forwarded to stderr at or above this level ('nothing' by default). */
    kafkajsLogLevel: z.enum(['nothing', 'error', 'warn', 'info', 'debug']).default('nothing'),
  })
  .refine((c) => c.retryInitialMs <= c.retryMaxMs, {
    message: 'retryInitialMs must not exceed retryMaxMs',
    path: ['retryInitialMs'],
  });

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

/** The SASL password from the named environment variable or file (trailing newline trimmed). */
export function resolveSaslPassword(
  sasl: NonNullable<KafkaSinkConfig['sasl']>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (sasl.passwordEnv !== undefined) {
    const value = env[sasl.passwordEnv];
    if (value === undefined || value === '') {
      throw new ConfigError([`sasl.passwordEnv: environment variable ${sasl.passwordEnv} is not set`], 'kafka sink');
    }
    return value;
  }
  try {
    return readFileSync(sasl.passwordFile!, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError([`sasl.passwordFile: cannot read ${sasl.passwordFile}: ${(err as Error).message}`], 'kafka sink');
  }
}
