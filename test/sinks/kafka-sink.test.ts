// Integration: a real Apache Kafka broker (scripts/setup/kafka/broker.sh), a real kafkajs consumer.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import type { KafkaSinkConfigInput } from '../../src/sinks/kafka/config.ts';
import { KafkaSink } from '../../src/sinks/kafka/sink.ts';
import type { LevelLogLevel } from '../../src/telemetry/logger.ts';
import type { SinkRecord } from '../../src/sinks/record.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();

const dirs: string[] = [];
const sinks: KafkaSink[] = [];
afterEach(async () => {
  for (const sink of sinks.splice(0)) await sink.close(0);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function outboxDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-kafka-sink-'));
  dirs.push(dir);
  return dir;
}

function finding(i: number, topic: SinkRecord['topic'] = 'findings'): SinkRecord {
  const id = `f-${i.toString().padStart(5, '0')}`;
  return {
    topic,
    key: `trajectory-${i % 7}`,
    id,
    value: JSON.stringify({ finding_id: id, schema_version: '1.1.0', claim: `claim ${i}` }),
    headers: { schema_version: '1.1.0' },
  };
}

function configFor(topics: { findings: string; alarms: string }, overrides: Partial<KafkaSinkConfigInput> = {}) {
  return parseKafkaSinkConfig({ brokers, topics, createTopics: true, retryMaxMs: 1_000, ...overrides });
}

describe.skipIf(brokers === undefined)('KafkaSink against a real broker', () => {
  it('delivers records with their key, value and headers, many per produce request', async () => {
    const topics = { findings: uniqueTopic('test.findings'), alarms: uniqueTopic('test.alarms') };
    const sink = await KafkaSink.open(configFor(topics), { outboxDir: await outboxDir() });
    sinks.push(sink);
    const records = [...Array.from({ length: 240 }, (_, i) => finding(i)), ...Array.from({ length: 10 }, (_, i) => finding(1000 + i, 'alarms'))];
    expect(sink.write(records)).toMatchObject({ ok: true, firstSeq: 0, lastSeq: 249 });
    await sink.flushed();

    const stats = sink.stats();
    expect(stats).toMatchObject({ delivered: 250, outboxRecords: 0, sendErrors: 0, failing: false });
    expect(stats.batchesDelivered).toBeLessThanOrEqual(5);
    expect(stats.produceLatencyMs.count).toBe(stats.batchesDelivered);

    const messages = await consumeMessages(brokers!, [topics.findings, topics.alarms], 250);
    expect(messages).toHaveLength(250);
    const byId = new Map(messages.map((m) => [JSON.parse(m.value).finding_id as string, m]));
    for (const r of records) {
      const m = byId.get(r.id);
      expect(m, r.id).toBeDefined();
      expect(m!.topic).toBe(r.topic === 'findings' ? topics.findings : topics.alarms);
      expect(m!.key).toBe(r.key);
      expect(m!.value).toBe(r.value);
      expect(m!.headers).toEqual({ 'content-type': 'application/json', schema_version: '1.1.0' });
    }
    // One trajectory's records share a partition and keep their order there.
    const partitionsOfKey = new Map<string, Set<number>>();
    for (const m of messages) {
      const set = partitionsOfKey.get(m.key!) ?? new Set<number>();
      set.add(m.partition);
      partitionsOfKey.set(m.key!, set);
    }
    for (const set of partitionsOfKey.values()) expect(set.size).toBe(1);
    const ofKey0 = messages.filter((m) => m.topic === topics.findings && m.key === 'trajectory-0').map((m) => m.value);
    expect(ofKey0).toEqual(records.filter((r) => r.topic === 'findings' && r.key === 'trajectory-0').map((r) => r.value));
  });

  it('sends records written while a request is in flight in the next one, in write order, and records every acknowledgement', async () => {
    const topics = { findings: uniqueTopic('test.findings'), alarms: uniqueTopic('test.alarms') };
    const dir = await outboxDir();
    // One partition, so the topic's order is the delivery order; small requests, so there are many.
    const sink = await KafkaSink.open(configFor(topics, { topicPartitions: 1, batchSize: 7 }), { outboxDir: dir });
    const records = Array.from({ length: 120 }, (_, i) => finding(i));
    const flushes: Promise<void>[] = [];
    for (let i = 0; i < records.length; i += 10) {
      expect(sink.write(records.slice(i, i + 10)).ok).toBe(true);
      flushes.push(sink.flushed());
      await new Promise((r) => setImmediate(r)); // the next write lands while a request is out
    }
    await Promise.all(flushes);
    const stats = sink.stats();
    expect(stats).toMatchObject({ delivered: 120, outboxRecords: 0, outboxBytes: 0, sendErrors: 0 });
    expect(stats.batchesDelivered).toBeGreaterThanOrEqual(120 / 7);
    expect(await sink.close()).toEqual({ flushed: true, pendingRecords: 0 });

    const messages = await consumeMessages(brokers!, [topics.findings], 120);
    expect(messages.map((m) => JSON.parse(m.value).finding_id)).toEqual(records.map((r) => r.id));
    // The acknowledgements reached the outbox's disk: nothing is sent again by the next run.
    const reopened = await KafkaSink.open(configFor(topics), { outboxDir: dir });
    sinks.push(reopened);
    expect(reopened.stats().outboxRecords).toBe(0);
  });

  it('leaves undelivered records in the outbox on close, and a new sink over it delivers them', async () => {
    const topics = { findings: uniqueTopic('test.findings'), alarms: uniqueTopic('test.alarms') };
    const dir = await outboxDir();
    const logs: { level: LevelLogLevel; message: string }[] = [];
    // Nothing listens on port 1: the first sink can only fail.
    const cut = await KafkaSink.open(parseKafkaSinkConfig({ brokers: ['127.0.0.1:1'], topics, connectionTimeoutMs: 200, retryInitialMs: 50 }), {
      outboxDir: dir,
      log: (level, message) => logs.push({ level, message }),
    });
    const records = Array.from({ length: 60 }, (_, i) => finding(i));
    expect(cut.write(records.slice(0, 30)).ok).toBe(true);
    expect(cut.write(records.slice(30)).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    const closed = await cut.close(100);
    expect(closed).toEqual({ flushed: false, pendingRecords: 60 });
    expect(cut.stats().sendErrors).toBeGreaterThan(0);
    expect(cut.stats().delivered).toBe(0);
    // The first failure is logged once, not every retry.
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);

    const resumed = await KafkaSink.open(configFor(topics), { outboxDir: dir });
    sinks.push(resumed);
    expect(resumed.stats().outboxRecords).toBe(60);
    await resumed.flushed();
    expect(resumed.stats()).toMatchObject({ delivered: 60, outboxRecords: 0 });
    expect(await resumed.close()).toEqual({ flushed: true, pendingRecords: 0 });

    const messages = await consumeMessages(brokers!, [topics.findings], 60);
    expect(messages.map((m) => JSON.parse(m.value).finding_id).sort()).toEqual(records.map((r) => r.id).sort());
  });

  it('refuses writes with "full" at maxOutboxRecords and accepts again once delivery frees room', async () => {
    const topics = { findings: uniqueTopic('test.findings'), alarms: uniqueTopic('test.alarms') };
    const sink = await KafkaSink.open(configFor(topics, { maxOutboxRecords: 20 }), { outboxDir: await outboxDir() });
    sinks.push(sink);
    expect(sink.write(Array.from({ length: 20 }, (_, i) => finding(i))).ok).toBe(true);
    expect(sink.backpressure()).toBe('kafka-outbox-full');
    expect(sink.write([finding(20)])).toMatchObject({ ok: false, reason: 'full', pendingRecords: 20 });

    await sink.whenWritable();
    expect(sink.backpressure()).toBeUndefined();
    expect(sink.write([finding(20)]).ok).toBe(true);
    await sink.flushed();
    const messages = await consumeMessages(brokers!, [topics.findings], 21);
    expect(new Set(messages.map((m) => JSON.parse(m.value).finding_id)).size).toBe(21);
  });
});
