import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../../src/analyze.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { ConfigSchema } from '../../../src/config-schema.ts';
import { DecodeError } from '../../../src/errors.ts';
import { KafkaSourceConfigSchema } from '../../../src/ingest/kafka/config.ts';
import { KafkaSource } from '../../../src/ingest/kafka/source.ts';
import { decodeOtlpProto } from '../../../src/ingest/otlp/proto-decode.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import type { FindingSink } from '../../../src/sinks/finding-sink.ts';
import { consumeMessages, kafkaForTests, uniqueTopic, quietKafka } from '../../helpers/kafka.ts';
import { collectorRecords } from '../../helpers/otlp-records.ts';

const brokers = await kafkaForTests();

const memorySink = (): FindingSink => ({
  name: 'memory',
  write: () => {},
  backpressure: () => undefined,
  backlog: () => ({ records: 0, bytes: 0 }),
  flushed: async () => {},
  close: async () => {},
});

function pipeline(closed: Trajectory[]): Pipeline {
  const config = ConfigSchema.parse({ assembler: { quietPeriodMs: 100 } });
  return new Pipeline({
    limits: config.assembler,
    clock: 'arrival',
    analyze: createAnalyzer(config),
    sinks: [memorySink()],
    keyBy: 'trace',
    onTrajectory: (t) => closed.push(t),
  });
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(brokers !== undefined)('Kafka source against a real broker', () => {
  const kafka = quietKafka('source-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer();
  const ticker = new Set<NodeJS.Timeout>();
  beforeAll(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
  });
  afterAll(async () => {
    for (const t of ticker) clearInterval(t);
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  const sourceConfig = (topic: string, groupId: string) =>
    KafkaSourceConfigSchema.parse({
      brokers,
      topic,
      groupId,
      deadLetterTopic: `${topic}.dlq`,
      commitIntervalMs: 100,
      admissionRetryMs: 20,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
    });

  const committed = async (groupId: string, topic: string): Promise<number> => {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return Number(entry!.partitions[0]!.offset);
  };

  it('sends undecodable records to the dead-letter topic with the reason, moves on, and commits past them', async () => {
    const topic = uniqueTopic('source.dlq');
    const groupId = uniqueTopic('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    // Run a over two records (children, then the rest with the root), run b in one.
    const [a1, a2, b] = collectorRecords(['dlq-a', 'dlq-b']);
    const garbage = Buffer.from('this is not protobuf');
    expect(decodeOtlpProto(garbage)).toBeInstanceOf(DecodeError);
    await producer.send({
      topic,
      messages: [
        { key: a1!.key, value: a1!.value },
        { key: 'bad', value: garbage, headers: { origin: 'test' } },
        { key: a2!.key, value: a2!.value },
        { key: b!.key, value: b!.value },
        { key: 'tombstone', value: null },
      ],
    });

    const closed: Trajectory[] = [];
    const target = pipeline(closed);
    const tick = setInterval(() => target.tick(), 20);
    ticker.add(tick);
    const source = await KafkaSource.start(sourceConfig(topic, groupId), target, { log: () => {} });
    try {
      await until('both runs closed and the commit past the last record', async () => closed.length === 2 && (await committed(groupId, topic)) === 5);
      expect(closed.every((t) => t.complete)).toBe(true);
      expect(source.stats()).toMatchObject({
        recordsConsumed: 5,
        deadLettered: { 'undecodable-otlp-proto': 1, 'no-value': 1 },
        assignedPartitions: [0],
      });
      const dead = await consumeMessages(brokers!, [`${topic}.dlq`], 2);
      expect(dead.map((m) => [m.key, m.headers['trajwatch.dlq.reason'], m.headers['trajwatch.dlq.source']])).toEqual([
        ['bad', 'undecodable-otlp-proto', `${topic}/0/1`],
        ['tombstone', 'no-value', `${topic}/0/4`],
      ]);
      expect(dead[0]!.value).toBe('this is not protobuf');
      expect(dead[0]!.headers.origin).toBe('test');
    } finally {
      await source.stop();
      clearInterval(tick);
    }
  });

  it('pauses the consumer while the pipeline refuses input and takes every record once it accepts again', async () => {
    const topic = uniqueTopic('source.pause');
    const groupId = uniqueTopic('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const records = collectorRecords(Array.from({ length: 12 }, (_, i) => `pause-${i}`));
    await producer.send({ topic, messages: records.map((r) => ({ key: r.key, value: r.value })) });

    const closed: Trajectory[] = [];
    const inner = pipeline(closed);
    let refusing = true;
    const target = {
      admission: () => (refusing ? 'test-refuses' : inner.admission()),
      accept: inner.accept.bind(inner),
      committable: inner.committable.bind(inner),
      settled: inner.settled.bind(inner),
      dropPartitions: inner.dropPartitions.bind(inner),
    };
    const tick = setInterval(() => inner.tick(), 20);
    ticker.add(tick);
    const source = await KafkaSource.start(sourceConfig(topic, groupId), target, { log: () => {} });
    try {
      await until('the consumer to pause', () => source.stats().paused);
      await new Promise((r) => setTimeout(r, 500));
      expect(inner.counts.spansAccepted).toBe(0);
      expect(source.stats().recordsConsumed).toBe(0);
      refusing = false;
      await until('every run closed', () => closed.length === 12);
      expect(source.stats()).toMatchObject({ recordsConsumed: records.length, paused: false });
      expect(source.stats().pauses).toBeGreaterThanOrEqual(1);
      expect(closed.every((t) => t.complete && t.steps.length === 4)).toBe(true);
      expect(new Set(closed.map((t) => t.key)).size).toBe(12);
    } finally {
      await source.stop();
      clearInterval(tick);
    }
  });
});
