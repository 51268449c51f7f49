/**
 * The Kafka source reading OTLP logs beside spans, in one process against the real broker:
 * content events (OTLP/JSON log records, keyed by trace id like the Collector's
 * `partition_logs_by_trace_id`) are joined to the spans' steps, an undecodable logs record is
 * dead-lettered naming the logs topic, and both topics' offsets are committed up to the end
 * once what they carried is closed and durable.
 */
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnalyzer } from '../../../src/analyze.ts';
import type { Trajectory } from '../../../src/assemble/trajectory.ts';
import { ConfigSchema } from '../../../src/config-schema.ts';
import { KafkaSourceConfigSchema } from '../../../src/ingest/kafka/config.ts';
import { KafkaSource } from '../../../src/ingest/kafka/source.ts';
import { Pipeline } from '../../../src/pipeline/pipeline.ts';
import { consumeMessages, kafkaForTests, uniqueTopic, quietKafka } from '../../helpers/kafka.ts';
import { agentRunSpans, encodeSpans } from '../../helpers/otlp-records.ts';

const brokers = await kafkaForTests();
const RUNS = ['kl-a', 'kl-b', 'kl-c', 'kl-d', 'kl-e', 'kl-f'];

/** One OTLP/JSON logs request: the result of each run's first tool call as a `gen_ai.choice` event in that span's context. */
function resultEvent(traceId: string, spanId: string, callId: string, result: string): Buffer {
  const body = {
    kvlistValue: {
      values: [
        { key: 'message', value: { stringValue: result } },
        { key: 'id', value: { stringValue: callId } },
      ],
    },
  };
  const record = { timeUnixNano: '1700000000000000000', eventName: 'gen_ai.choice', traceId, spanId, body };
  return Buffer.from(JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 't' }, logRecords: [record] }] }] }));
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 40_000, state?: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${state === undefined ? '' : `: ${await state()}`}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(brokers !== undefined)('Kafka source with the logs topic (real broker)', () => {
  const kafka = quietKafka('logs-source-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer();
  beforeAll(() => Promise.all([admin.connect(), producer.connect()]));
  afterAll(() => Promise.all([admin.disconnect(), producer.disconnect()]));

  it('joins content events from the logs topic, dead-letters an undecodable one, and commits both topics to their ends', async () => {
    const topic = uniqueTopic('logs-source.spans');
    const logsTopic = uniqueTopic('logs-source.logs');
    const groupId = uniqueTopic('logs-source-group');
    await admin.createTopics({ topics: [topic, logsTopic].map((t) => ({ topic: t, numPartitions: 2 })), waitForLeaders: true });
    const config = ConfigSchema.parse({ assembler: { quietPeriodMs: 300 } });
    const closed: Trajectory[] = [];
    const pipeline = new Pipeline({
      limits: config.assembler,
      clock: 'arrival',
      analyze: createAnalyzer(config),
      keyBy: 'trace',
      onTrajectory: (t) => closed.push(t),
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
    const ticker = setInterval(() => pipeline.tick(), 50);
    const source = await KafkaSource.start(
      KafkaSourceConfigSchema.parse({
        brokers,
        topic,
        groupId,
        logs: { enabled: true, topic: logsTopic, encoding: 'otlp_json' },
        deadLetterTopic: `${topic}.dlq`,
        commitIntervalMs: 100,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
      }),
      pipeline,
      { log: () => {} },
    );
    try {
      const runs = RUNS.map((id) => ({ id, ...agentRunSpans(id) }));
      // Logs first (the usual order: the log exporter flushes before the span's batch), then an undecodable one, then the spans.
      await producer.send({
        topic: logsTopic,
        acks: -1,
        messages: runs.map((r) => {
          const tool = r.spans[0] as { spanId: string };
          return { key: r.traceId, value: resultEvent(r.traceId, tool.spanId, `call-${r.id}-1`, `ok-${r.id}`) };
        }),
      });
      await producer.send({ topic: logsTopic, acks: -1, messages: [{ key: runs[0]!.traceId, value: Buffer.from('{not json') }] });
      await producer.send({ topic, acks: -1, messages: runs.map((r) => ({ key: r.traceId, value: encodeSpans(r.spans) })) });

      await until(`every run closed (${JSON.stringify(source.stats())})`, () =>
        RUNS.every((id) => closed.some((t) => t.steps.some((s) => s.toolCallId === `call-${id}-1`))),
      );
      for (const r of runs) {
        const t = closed.find((c) => c.key === r.traceId)!;
        expect(t.steps.find((s) => s.toolCallId === `call-${r.id}-1`)?.result).toBe(`ok-${r.id}`);
        expect(t.steps.find((s) => s.toolCallId === `call-${r.id}-2`)?.result).toBeUndefined();
      }
      expect(source.stats()).toMatchObject({ logRecordsConsumed: RUNS.length, deadLettered: { 'undecodable-otlp-json': 1 }, mixedPartitionTrajectories: 0 });
      expect(source.stats().assignedLogPartitions).toEqual([0, 1]);

      const [dead] = await consumeMessages(brokers!, [`${topic}.dlq`], 1);
      expect(dead!.headers['trajwatch.dlq.source']).toMatch(new RegExp(`^${logsTopic.replaceAll('.', '\\.')}/[01]/\\d+$`));

      // Committed = the end of every partition of both topics: nothing finished is replayed, nothing unfinished skipped.
      const ends = async (t: string) =>
        (await admin.fetchTopicOffsets(t))
          .sort((a, b) => a.partition - b.partition)
          .map((p) => Number(p.high))
          .join();
      const commits = async (t: string) =>
        (await admin.fetchOffsets({ groupId, topics: [t] }))[0]!.partitions
          .sort((a, b) => a.partition - b.partition)
          .map((p) => Math.max(0, Number(p.offset)))
          .join();
      const state = async () =>
        JSON.stringify({
          spans: [await commits(topic), await ends(topic)],
          logs: [await commits(logsTopic), await ends(logsTopic)],
          committable: [...pipeline.committable()],
          stats: source.stats(),
        });
      await until(
        'both topics committed to their ends',
        async () => (await commits(topic)) === (await ends(topic)) && (await commits(logsTopic)) === (await ends(logsTopic)),
        40_000,
        state,
      );
    } finally {
      clearInterval(ticker);
      await source.stop();
    }
  }, 120_000);
});
