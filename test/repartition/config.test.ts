import { describe, expect, it } from 'vitest';
import { KafkaSourceConfigSchema, sessionsTopicOf } from '../../src/ingest/kafka/config.ts';

describe('source.kafka.sessions', () => {
  const base = { brokers: ['127.0.0.1:9092'] };

  it('is on by default, its internal topic named after the group', () => {
    const c = KafkaSourceConfigSchema.parse({ ...base, groupId: 'fleet-a' });
    expect(c.sessions).toMatchObject({ enabled: true, partitions: 6, createTopics: true, maxRecordBytes: 1_000_000 });
    expect(sessionsTopicOf(c)).toBe('fleet-a.sessions');
    expect(sessionsTopicOf(KafkaSourceConfigSchema.parse({ ...base, sessions: { topic: 'x.repartition' } }))).toBe('x.repartition');
  });

  it('is strict: an unknown key, a bad partition count, or a group id that makes no topic name is an error', () => {
    expect(KafkaSourceConfigSchema.safeParse({ ...base, sessions: { partitons: 6 } }).success).toBe(false);
    expect(KafkaSourceConfigSchema.safeParse({ ...base, sessions: { partitions: 0 } }).success).toBe(false);
    const bad = KafkaSourceConfigSchema.safeParse({ ...base, groupId: 'a group/with spaces' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('set sessions.topic');
    expect(KafkaSourceConfigSchema.safeParse({ ...base, groupId: 'a group/with spaces', sessions: { enabled: false } }).success).toBe(true);
  });
});
