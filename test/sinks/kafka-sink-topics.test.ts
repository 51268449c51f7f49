/**
 * The Kafka sink and a missing topic on the real broker (which does not auto-create topics):
 * without `createTopics` the start warns, and the delivery failure names the topic and `sinks.kafka.createTopics`
 * (not kafkajs's "does not host this topic-partition"), the records wait in the outbox, and
 * they are delivered once the topic exists.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaSink } from '../../src/sinks/kafka/sink.ts';
import { consumeMessages, kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();

describe.runIf(brokers !== undefined)('Kafka sink topics (real broker, no auto-creation)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('without createTopics, a missing topic is named with the key that fixes it; the records wait and go once it exists', async () => {
    const topics = { findings: uniqueTopic('sink.findings-missing'), alarms: uniqueTopic('sink.alarms-missing') };
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-sink-topics-'));
    dirs.push(dir);
    const logged: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const sink = await KafkaSink.open(parseKafkaSinkConfig({ brokers, topics, retryInitialMs: 50, retryMaxMs: 500 }), {
      outboxDir: dir,
      log: (level, message, fields = {}) => logged.push({ level, message, fields }),
    });
    try {
      // Named at start, before any finding is written.
      for (let i = 0; i < 200 && !logged.some((l) => l.level === 'warn'); i++) await new Promise((r) => setTimeout(r, 50));
      const atStart = logged.find((l) => l.level === 'warn');
      expect(atStart?.message).toContain(`topic ${topics.findings} does not exist`);
      expect(atStart?.message).toContain('sinks.kafka.createTopics');
      expect(atStart?.message).toContain('findings wait in the outbox until it exists');

      const value = JSON.stringify({ finding_id: 'f-1', claim: 'c' });
      expect(sink.write([{ topic: 'findings', key: 't-1', id: 'f-1', value, headers: {} }])).toMatchObject({ ok: true });
      for (let i = 0; i < 200 && !logged.some((l) => l.message.includes('failing')); i++) await new Promise((r) => setTimeout(r, 50));
      const failure = logged.find((l) => l.message.includes('failing'));
      expect(failure?.fields.error).toContain(`topic ${topics.findings} does not exist`);
      expect(failure?.fields.error).toContain('sinks.kafka.createTopics');
      expect(failure?.fields.error).not.toContain('does not host this topic-partition');
      expect(sink.stats()).toMatchObject({ delivered: 0, outboxRecords: 1 });

      const admin = quietKafka('sink-topics-test', brokers).admin();
      await admin.connect();
      await admin.createTopics({ topics: [topics.findings, topics.alarms].map((topic) => ({ topic, numPartitions: 1 })), waitForLeaders: true });
      await admin.disconnect();
      await sink.flushed();
      expect(sink.stats()).toMatchObject({ delivered: 1, outboxRecords: 0 });
      const [message] = await consumeMessages(brokers!, [topics.findings], 1);
      expect(message!.value).toBe(value);
    } finally {
      await sink.close(0);
    }
  });
});
