// Integration: a real Apache Kafka broker (scripts/setup/kafka/broker.sh).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaSink } from '../../src/sinks/kafka/sink.ts';
import type { SinkRecord } from '../../src/sinks/record.ts';
import { kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();

const record = (i: number): SinkRecord => ({ topic: 'findings', key: `t-${i}`, id: `f-${i}`, value: JSON.stringify({ i }), headers: {} });

describe.runIf(brokers !== undefined)('KafkaSink onProduce observer', () => {
  it('is told of every acknowledged produce request with its duration and record count, and a throwing observer does not fail delivery', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-kafka-observer-'));
    const seen: [number, number][] = [];
    const topics = { findings: uniqueTopic('test.observer'), alarms: uniqueTopic('test.observer-alarms') };
    const sink = await KafkaSink.open(parseKafkaSinkConfig({ brokers, topics, createTopics: true }), {
      outboxDir: dir,
      log: () => undefined,
      onProduce: (seconds, records) => {
        seen.push([seconds, records]);
        throw new Error('observer bug');
      },
    });
    try {
      expect(sink.write(Array.from({ length: 20 }, (_, i) => record(i))).ok).toBe(true);
      await sink.flushed();
      const stats = sink.stats();
      expect(stats).toMatchObject({ delivered: 20, sendErrors: 0 });
      expect(seen.length).toBe(stats.batchesDelivered);
      expect(seen.reduce((n, [, r]) => n + r, 0)).toBe(20);
      expect(seen.every(([s]) => s > 0 && s < 60)).toBe(true);
    } finally {
      await sink.close(0);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
