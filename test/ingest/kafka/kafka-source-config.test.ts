import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config-schema.ts';

describe('source configuration', () => {
  it('defaults to the OTLP receivers only, and fills every Kafka source default from brokers alone', () => {
    expect(ConfigSchema.parse({}).source).toEqual({ http: true });
    expect(ConfigSchema.parse({ source: { kafka: { brokers: ['kafka:9092'] } } }).source.kafka).toEqual({
      brokers: ['kafka:9092'],
      clientId: 'trajwatch',
      topic: 'otlp_spans',
      groupId: 'trajwatch',
      encoding: 'otlp_proto',
      logs: { enabled: false, topic: 'otlp_logs', encoding: 'otlp_proto' },
      createTopics: false,
      topicPartitions: 3,
      topicReplicationFactor: -1,
      deadLetterTopic: 'otlp_spans.dlq',
      createDeadLetterTopic: true,
      fromBeginning: true,
      commitIntervalMs: 1_000,
      admissionRetryMs: 100,
      sessionTimeoutMs: 30_000,
      heartbeatIntervalMs: 3_000,
      rebalanceTimeoutMs: 60_000,
      maxBytesPerPartition: 1024 * 1024,
      connectionTimeoutMs: 3_000,
      requestTimeoutMs: 30_000,
      kafkajsLogLevel: 'nothing',
      sessions: {
        enabled: true,
        partitions: 6,
        createTopics: true,
        replicationFactor: -1,
        maxInFlightBytes: 16 * 1024 * 1024,
        maxRecordBytes: 1_000_000,
        lingerMs: 5,
      },
    });
  });

  it('names every bad key: unknown keys, bad brokers, a bad encoding, no source at all', () => {
    const result = ConfigSchema.safeParse({
      source: { http: false, kafka: { brokers: ['no-port'], encoding: 'avro', topic: 'bad topic', extra: 1 } },
    });
    const paths = result.error!.issues.map((i) => i.path.join('.')).sort();
    expect(paths).toEqual(['source.kafka', 'source.kafka.brokers.0', 'source.kafka.encoding', 'source.kafka.topic']);
    const none = ConfigSchema.safeParse({ source: { http: false } });
    expect(none.error!.issues.map((i) => i.message)).toEqual(['at least one source: http, or kafka configured']);
  });

  it('takes SASL and TLS in the Kafka sink shapes', () => {
    const source = ConfigSchema.parse({
      source: { kafka: { brokers: ['k:9093'], sasl: { mechanism: 'scram-sha-512', username: 'tw', passwordEnv: 'KAFKA_PW' }, ssl: {} } },
    }).source.kafka!;
    expect(source.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'tw', passwordEnv: 'KAFKA_PW' });
    expect(source.ssl).toEqual({ rejectUnauthorized: true });
    expect(ConfigSchema.safeParse({ source: { kafka: { brokers: ['k:1'], sasl: { mechanism: 'plain', username: 'u' } } } }).success).toBe(false);
  });
});
