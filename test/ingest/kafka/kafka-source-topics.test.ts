/**
 * The Kafka source's topics at start, against the real broker (which does not auto-create
 * topics): a missing spans, logs or dead-letter topic is created when `createTopics` allows it, else the start
 * refuses with a ConfigError naming the topic and the key that fixes it; a logs topic of another
 * partition count than the spans topic is refused, naming both.
 */
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../../src/analyze.ts';
import { ConfigSchema } from '../../../src/config-schema.ts';
import { ConfigError } from '../../../src/errors.ts';
import { KafkaSourceConfigSchema } from '../../../src/ingest/kafka/config.ts';
import { KafkaSource } from '../../../src/ingest/kafka/source.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../../helpers/kafka.ts';
import { startServe } from '../../helpers/serve.ts';
import { lastAssignment, waitFor } from '../../helpers/serve-group.ts';

const brokers = await kafkaForTests();

function pipeline(): Pipeline {
  const config = ConfigSchema.parse({});
  return new Pipeline({
    limits: config.assembler,
    clock: 'arrival',
    analyze: createAnalyzer(config),
    keyBy: 'trace',
    sinks: [
      {
        name: 'none',
        write: () => {},
        backpressure: () => undefined,
        backlog: () => ({ records: 0, bytes: 0 }),
        flushed: async () => {},
        close: async () => {},
      },
    ],
  });
}

/** The ConfigError a start refused with (fails the test when it started). */
async function refusal(config: Record<string, unknown>): Promise<ConfigError> {
  const started = await KafkaSource.start(KafkaSourceConfigSchema.parse({ brokers, ...config }), pipeline(), { log: () => {} }).then(
    async (source) => {
      await source.stop();
      return undefined;
    },
    (err: unknown) => err,
  );
  expect(started).toBeInstanceOf(ConfigError);
  return started as ConfigError;
}

/** Waits (bounded) for the member's first join, so that it holds its assignment. */
async function joined(source: KafkaSource): Promise<void> {
  for (let i = 0; i < 600 && source.stats().joins === 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(source.stats().joins).toBeGreaterThan(0);
}

describe.runIf(brokers !== undefined)('Kafka source topics at start (real broker, no auto-creation)', () => {
  const admin = quietKafka('topics-test', brokers).admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

  const create = (topic: string, numPartitions: number) => admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
  const partitions = async (topic: string) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length;
  const base = (topic: string) => ({
    topic,
    groupId: uniqueTopic('topics-group'),
    deadLetterTopic: `${topic}.dlq`,
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 500,
  });

  it('a missing spans topic stops the start, naming the topic and source.kafka.createTopics, and is not created', async () => {
    const topic = uniqueTopic('topics.spans-missing');
    const err = await refusal(base(topic));
    expect(err.issues).toEqual([
      `the spans topic ${topic} does not exist: create it (the Collector's traces topic; source.kafka.topic names it), or set source.kafka.createTopics`,
    ]);
    expect(err.message).toContain('source.kafka');
    expect(await admin.listTopics()).not.toContain(topic);
  });

  it('a missing dead-letter topic that may not be created stops the start, naming it and source.kafka.createDeadLetterTopic', async () => {
    const topic = uniqueTopic('topics.spans');
    await create(topic, 1);
    const err = await refusal({ ...base(topic), createDeadLetterTopic: false });
    expect(err.issues).toEqual([`the dead-letter topic ${topic}.dlq does not exist: create it, or set source.kafka.createDeadLetterTopic`]);
  });

  it('a missing logs topic stops the start, naming the topic, its partition count and the keys that fix it', async () => {
    const topic = uniqueTopic('topics.spans');
    const logs = uniqueTopic('topics.logs-missing');
    await create(topic, 2);
    const err = await refusal({ ...base(topic), logs: { enabled: true, topic: logs } });
    expect(err.issues).toEqual([
      `the logs topic ${logs} does not exist: create it with 2 partitions like ${topic} (source.kafka.logs.topic names it), or set source.kafka.createTopics, or set source.kafka.logs.enabled false`,
    ]);
  });

  it('logs off while the logs topic exists: the start warns that its content events go unread, naming source.kafka.logs.enabled', async () => {
    const topic = uniqueTopic('topics.spans');
    const logs = uniqueTopic('topics.logs-unread');
    await create(topic, 1);
    await create(logs, 1);
    const lines: string[] = [];
    const log = (level: string, message: string) => void lines.push(`${level} ${message}`);
    const source = await KafkaSource.start(KafkaSourceConfigSchema.parse({ brokers, ...base(topic), logs: { enabled: false, topic: logs } }), pipeline(), {
      log,
    });
    await source.stop();
    expect(lines.filter((l) => l.includes(logs))).toEqual([
      `warn topic ${logs} exists but source.kafka.logs.enabled is false: its OTLP log records (GenAI content events: prompts, tool arguments and results) are not read or joined; set source.kafka.logs.enabled true`,
    ]);
  });

  it('a logs topic of another partition count stops the start, naming both topics, both counts and both keys', async () => {
    const topic = uniqueTopic('topics.spans');
    const logs = uniqueTopic('topics.logs');
    await create(topic, 2);
    await create(logs, 3);
    const err = await refusal({ ...base(topic), createTopics: true, logs: { enabled: true, topic: logs } });
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toContain(`topic ${topic} has 2 partitions and ${logs} 3`);
    expect(err.issues[0]).toContain('(source.kafka.topic, source.kafka.logs.topic)');
  });

  it('with createTopics, a missing logs topic is created with the spans topic’s partition count, and both when neither exists', async () => {
    const topic = uniqueTopic('topics.spans');
    const logs = uniqueTopic('topics.logs-created');
    await create(topic, 4);
    const one = await KafkaSource.start(
      KafkaSourceConfigSchema.parse({ brokers, ...base(topic), createTopics: true, logs: { enabled: true, topic: logs } }),
      pipeline(),
      { log: () => {} },
    );
    await joined(one);
    await one.stop();
    expect(await partitions(logs)).toBe(4);

    const spans2 = uniqueTopic('topics.spans-created');
    const logs2 = uniqueTopic('topics.logs-created');
    const two = await KafkaSource.start(
      KafkaSourceConfigSchema.parse({ brokers, ...base(spans2), createTopics: true, topicPartitions: 2, logs: { enabled: true, topic: logs2 } }),
      pipeline(),
      { log: () => {} },
    );
    await joined(two);
    const assigned = two.stats();
    await two.stop();
    expect([await partitions(spans2), await partitions(logs2)]).toEqual([2, 2]);
    // One member holds partition p of both topics.
    expect(assigned.assignedLogPartitions).toEqual(assigned.assignedPartitions);
    expect(assigned.assignedPartitions).toEqual([0, 1]);
  });

  it('serve --source kafka with the repartition: a missing spans topic is named with source.kafka.createTopics; with it, both source topics are created', async () => {
    const topic = uniqueTopic('topics.serve-spans');
    const logs = uniqueTopic('topics.serve-logs');
    const kafka = { brokers, ...base(topic), logs: { enabled: true, topic: logs } };
    const refused = await startServe({ source: { http: false, kafka } }, ['--source', 'kafka']).then(
      async (serve) => {
        await serve.stop();
        return '';
      },
      (err: Error) => err.message,
    );
    expect(refused).toContain('serve exited with 1 before listening');
    expect(refused).toContain(`the spans topic ${topic} does not exist`);
    expect(refused).toContain('or set source.kafka.createTopics');

    const serve = await startServe({ source: { http: false, kafka: { ...kafka, createTopics: true, topicPartitions: 2 } } }, ['--source', 'kafka']);
    // Joined (every layer started) before the stop, so the stop is the clean one.
    expect(await waitFor(() => lastAssignment(serve) !== undefined, 60_000)).toBe(true);
    expect(await serve.stop()).toBe(0);
    expect([await partitions(topic), await partitions(logs)]).toEqual([2, 2]);
  }, 90_000);
});
