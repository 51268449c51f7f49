// Integration: the pipeline's FindingSink over the Kafka sink, against the real broker.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaFindingSink, findingRecord } from '../../src/sinks/kafka/kafka-finding-sink.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();

/** Only the fields the Kafka sink reads; the finding schema itself is tested elsewhere. */
function finding(i: number): Finding {
  return {
    schema_version: '1.1.0',
    finding_id: `f1_${i.toString(16).padStart(64, '0')}`,
    subject: { trajectory_key: `session-${i % 3}`, trace_ids: ['0'.repeat(32)], revision: 1 },
    claim: `claim ${i}`,
  } as unknown as Finding;
}

describe('findingRecord', () => {
  it('keys by trajectory, dedupes by finding_id and carries the schema version', () => {
    const f = finding(7);
    expect(findingRecord(f, 'alarms').topic).toBe('alarms');
    expect(findingRecord(f)).toEqual({
      topic: 'findings',
      key: 'session-1',
      id: f.finding_id,
      value: JSON.stringify(f),
      headers: { schema_version: '1.1.0' },
    });
  });
});

describe('findingRecord of an analysis manifest', () => {
  it('keys it by trajectory like its findings, dedupes by manifest_id and says its kind in a header (a finding has none)', () => {
    const m = {
      record_kind: 'analysis-manifest',
      schema_version: '1.0.0',
      manifest_id: `m1_${'e'.repeat(64)}`,
      subject: { trajectory_key: 'session-1', trace_ids: ['0'.repeat(32)], revision: 1 },
    } as unknown as AnalysisManifest;
    expect(findingRecord(m)).toEqual({
      topic: 'findings',
      key: 'session-1',
      id: m.manifest_id,
      value: JSON.stringify(m),
      headers: { schema_version: '1.0.0', record_kind: 'analysis-manifest' },
    });
    expect(findingRecord(finding(1)).headers).not.toHaveProperty('record_kind');
  });
});

describe.skipIf(brokers === undefined)('KafkaFindingSink against a real broker', () => {
  it('takes every finding even past a full outbox, reports backpressure meanwhile, and delivers all in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-kafka-findings-'));
    const topics = { findings: uniqueTopic('test.findings'), alarms: uniqueTopic('test.alarms') };
    try {
      const sink = await KafkaFindingSink.open(parseKafkaSinkConfig({ brokers, topics, createTopics: true, maxOutboxRecords: 10, topicPartitions: 1 }), {
        outboxDir: dir,
      });
      const findings = Array.from({ length: 45 }, (_, i) => finding(i));
      sink.write(findings.slice(0, 8), 'findings');
      sink.write(findings.slice(8), 'findings'); // does not fit: fills the outbox, the rest waits in order
      expect(sink.overflowRecords).toBe(35);
      expect(sink.backlog().records).toBe(45);
      expect(sink.backpressure()).toBe('kafka-outbox-full');

      await sink.flushed();
      expect(sink.overflowRecords).toBe(0);
      expect(sink.backpressure()).toBeUndefined();
      expect(sink.backlog()).toEqual({ records: 0, bytes: 0 });
      expect(sink.kafka.stats().delivered).toBe(45);
      await sink.close();

      const messages = await consumeMessages(brokers!, [topics.findings], 45);
      // One partition: the topic's order is the write order.
      expect(messages.map((m) => JSON.parse(m.value).finding_id)).toEqual(findings.map((f) => f.finding_id));
      expect(messages[0]!.key).toBe('session-0');
      expect(messages[0]!.headers).toEqual({ 'content-type': 'application/json', schema_version: '1.1.0' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
