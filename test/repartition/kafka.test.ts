/**
 * The repartition's Kafka edges against the real broker: topic checks at start (missing,
 * mis-sized: clear errors), and the forwarder's bounds (in-flight bytes, record size).
 */
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { ConfigError } from '../../src/errors.ts';
import { Forwarder } from '../../src/repartition/forwarder.ts';
import { decodeRepartitionRecord } from '../../src/repartition/record.ts';
import { prepareTopics } from '../../src/repartition/topics.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import { makeStep } from '../helpers/steps.ts';

const brokers = await kafkaForTests();

describe.runIf(brokers !== undefined)('repartition topics and forwarder (real broker)', () => {
  const kafka = quietKafka('repartition-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });

  beforeAll(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
  });
  afterAll(async () => {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  const plan = (source: string, internal: string, create: boolean, partitions = 6) => ({
    source: { topic: source },
    internal: { topic: internal, partitions, replicationFactor: -1 },
    create,
  });

  it('creates a missing internal topic with its partitions; a missing one without createTopics, a mis-sized one and a missing source are errors', async () => {
    const source = uniqueTopic('rp.source');
    await admin.createTopics({ topics: [{ topic: source, numPartitions: 3 }], waitForLeaders: true });
    const internal = `${source}.sessions`;

    await expect(prepareTopics(admin, plan(source, internal, false))).rejects.toThrow(/does not exist: create it with 6 partitions/);
    const { maxMessageBytes } = await prepareTopics(admin, plan(source, internal, true));
    expect(maxMessageBytes).toBeGreaterThan(0);
    const [meta] = (await admin.fetchTopicMetadata({ topics: [internal] })).topics;
    expect(meta!.partitions.length).toBe(6);

    const wrong = prepareTopics(admin, plan(source, internal, true, 4));
    await expect(wrong).rejects.toBeInstanceOf(ConfigError);
    await expect(prepareTopics(admin, plan(source, internal, true, 4))).rejects.toThrow(/has 6 partitions, the configuration says 4/);
    await expect(prepareTopics(admin, { ...plan(source, internal, true), source: { topic: source, partitions: 12 } })).rejects.toThrow(
      /has 3 partitions, the configuration says 12/,
    );
    await expect(prepareTopics(admin, plan(uniqueTopic('rp.none'), internal, true))).rejects.toThrow(/does not exist/);
  });

  const trace = (key: string, sessionId: string, resultBytes: number): [Trajectory, () => Trajectory['steps']] => {
    const step = makeStep({
      id: `${key}-s`,
      traceId: key,
      kind: 'tool',
      name: 'execute_tool x',
      convention: 'genai',
      sessionId,
      result: 'r'.repeat(resultBytes),
      startTimeUnixNano: 1n,
      endTimeUnixNano: 2n,
      statusCode: 1,
      encodedBytes: resultBytes,
    });
    const t: Trajectory = {
      key,
      traceIds: [key],
      revision: 1,
      complete: true,
      incompleteReasons: [],
      steps: [step],
      conflicts: [],
      refusedSpans: 0,
      closedBy: 'quiet-after-root',
    };
    return [t, () => [step]];
  };

  it('names backpressure while bytes are in flight, sends a record over the limit in fragments, and forwards keyed by session', async () => {
    const topic = uniqueTopic('rp.fwd');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    const logged: string[] = [];
    const forwarder = new Forwarder(producer, { topic, maxInFlightBytes: 4_000, maxRecordBytes: 3_000, lingerMs: 5, log: (_l, m) => logged.push(m) });
    const acks = [
      forwarder.forward(...trace('t1', 'sess-a', 2_000)),
      forwarder.forward(...trace('t2', 'sess-a', 2_000)),
      forwarder.forward(...trace('t3', 'sess-b', 10_000)),
    ];
    expect(forwarder.backpressure()).toBe('repartition-in-flight');
    await Promise.all(acks);
    expect(forwarder.backpressure()).toBeUndefined();
    const stats = forwarder.stats();
    expect(stats).toMatchObject({ forwarded: 3, refused: 0, fragmented: 1, inFlightBytes: 0, inFlightRecords: 0 });
    expect(stats.fragments).toBeGreaterThanOrEqual(4);
    expect(logged).toEqual([]);

    const consumer = kafka.consumer({ groupId: uniqueTopic('rp.read') });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const seen: { key: string; kind: string; partition: number; offset: number }[] = [];
    const want = 2 + stats.fragments;
    await new Promise<void>((done) => {
      void consumer.run({
        eachMessage: async ({ message, partition }) => {
          const r = decodeRepartitionRecord(message.value);
          if ('error' in r) throw new Error(r.error);
          seen.push({ key: message.key!.toString(), kind: r.kind, partition, offset: Number(message.offset) });
          if (seen.length === want) done();
        },
      });
    });
    await consumer.disconnect();
    expect(seen.filter((s) => s.kind === 'trace')).toHaveLength(2);
    // One session, one partition: both traces of sess-a where the key hashes; sess-b's fragments in order on one partition.
    const a = seen.filter((s) => s.key === 'sess-a');
    expect(new Set(a.map((s) => s.partition)).size).toBe(1);
    const b = seen.filter((s) => s.key === 'sess-b');
    expect(b.every((s) => s.kind === 'fragment')).toBe(true);
    expect(new Set(b.map((s) => s.partition)).size).toBe(1);
    // Not a record without a trace: the undecided case is `undefined`, analyzed by stage 1.
    expect(
      forwarder.forward(
        ...(() => {
          const [t, c] = trace('t4', 'x', 1);
          const s = c()[0]!;
          delete (s as { sessionId?: string }).sessionId;
          return [t, () => [s]] as const;
        })(),
      ),
    ).toBeUndefined();
  }, 60_000);

  it('a record the broker refuses as too large (a topic limit below maxRecordBytes, not read at start) becomes a refusal record, counted and logged', async () => {
    const topic = uniqueTopic('rp.refuse');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '20000' }] }], waitForLeaders: true });
    const logged: string[] = [];
    const forwarder = new Forwarder(producer, {
      topic,
      maxInFlightBytes: 1 << 20,
      maxRecordBytes: 200_000,
      lingerMs: 5,
      compression: 'none',
      log: (_l, m) => logged.push(m),
    });
    await Promise.all([forwarder.forward(...trace('t5', 'sess-c', 60_000)), forwarder.forward(...trace('t6', 'sess-c', 500))]);
    expect(forwarder.stats()).toMatchObject({ forwarded: 2, refused: 1, inFlightBytes: 0, inFlightRecords: 0 });
    expect(logged.filter((m) => m.includes('refused'))).toHaveLength(1);
    const consumer = kafka.consumer({ groupId: uniqueTopic('rp.read') });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const kinds: string[] = [];
    await new Promise<void>((done) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const r = decodeRepartitionRecord(message.value);
          kinds.push('error' in r ? 'error' : r.kind);
          if (kinds.length === 2) done();
        },
      });
    });
    await consumer.disconnect();
    expect(kinds.sort()).toEqual(['refused', 'trace']);
  }, 60_000);
});
