/**
 * SASL/SCRAM-SHA-512 over TLS (SASL_SSL) to a real Kafka broker configured that way
 * (`scripts/setup/kafka/broker.sh` with `TRAJWATCH_KAFKA_SASL_SSL_PORT`; keytool makes its
 * certificate under .cache at test time), for the sink and the source, each through a real
 * `serve`. The client side is the shared connection config (`src/kafka/`): the password from
 * a file, the broker's certificate as the CA.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaClientConfig } from '../../src/kafka/client-config.ts';
import { KafkaConnectionSchema } from '../../src/kafka/config.ts';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { consumeMessages, securedBroker, startBroker, stopBroker, uniqueTopic } from '../helpers/kafka.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { collectorRecords } from '../helpers/otlp-records.ts';

const broker = securedBroker('sasl-ssl-test', 19196, 19198);

describe.runIf(broker !== undefined)('SASL_SSL (SCRAM-SHA-512 over TLS) to a real broker', () => {
  const secured = broker!.saslSsl!;
  /** The connection section a user writes for this broker. */
  const connection = () => ({
    brokers: secured.brokers,
    sasl: { mechanism: 'scram-sha-512', username: secured.username, passwordFile: secured.passwordFile },
    ssl: { caFile: secured.caFile },
  });
  const securedClient = (overrides: Record<string, unknown> = {}) =>
    new Kafka(kafkaClientConfig(KafkaConnectionSchema.parse({ ...connection(), connectionTimeoutMs: 5_000, ...overrides }), process.env, 'kafka.'));

  beforeAll(async () => {
    await startBroker(broker!);
  }, 180_000);
  afterAll(async () => {
    await stopBroker(broker!);
  }, 120_000);

  it('lets a client in with the SCRAM password from a file over TLS trusting the broker certificate', async () => {
    const admin = securedClient().admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers.map((b) => b.port)).toEqual([19198]);
    } finally {
      await admin.disconnect();
    }
  });

  it('refuses a wrong password, a client without TLS, and a client that does not trust the certificate', async () => {
    const dir = broker!.dir;
    const wrong = join(dir, 'wrong-password');
    await writeFile(wrong, 'not-the-password\n');
    const attempts = {
      'wrong password': securedClient({ sasl: { mechanism: 'scram-sha-512', username: secured.username, passwordFile: wrong } }),
      'no TLS': new Kafka({
        ...kafkaClientConfig(KafkaConnectionSchema.parse({ ...connection(), ssl: undefined, connectionTimeoutMs: 3_000 }), process.env, 'kafka.'),
        retry: { retries: 0 },
      }),
      'untrusted certificate': securedClient({ ssl: {} }),
    };
    for (const [what, kafka] of Object.entries(attempts)) {
      const admin = kafka.admin({ retry: { retries: 0 } });
      await expect(
        admin.connect().then(() => admin.describeCluster()),
        what,
      ).rejects.toThrow(
        { 'wrong password': /authentication failed/i, 'no TLS': /connection|timeout|closed/i, 'untrusted certificate': /self-signed|certificate/i }[what]!,
      );
      await admin.disconnect().catch(() => {});
    }
  });

  describe('the Kafka sink through serve', () => {
    const topics = { findings: uniqueTopic('secured.findings'), alarms: uniqueTopic('secured.alarms') };
    let serve: ServeProcess;
    beforeAll(async () => {
      serve = await startServe({ kafka: { ...connection(), createTopics: true, topics } });
    });
    afterAll(async () => {
      expect(await serve.stop()).toBe(0);
    });

    it("delivers findings over SASL_SSL, and the password is nowhere in serve's output", async () => {
      const ids = ['conv-secured-a', 'conv-secured-b'];
      await sendFlaggedAgentRuns(serve.url, ids);
      await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.length >= 6);
      // serve creates the topic (over SASL_SSL) on its first send; read only once it exists.
      const admin = new Kafka({ brokers: broker!.brokers }).admin();
      await admin.connect();
      for (let i = 0; i < 300 && !(await admin.listTopics()).includes(topics.findings); i++) await new Promise((r) => setTimeout(r, 100));
      await admin.disconnect();
      // Read back through the broker's plaintext listener: what arrived, independent of the sink's client.
      const all = await consumeMessages(broker!.brokers, [topics.findings], 6);
      expect(all).toHaveLength(6);
      expect(new Set(all.map((m) => m.key))).toEqual(new Set(ids));
      const password = (await readFile(secured.passwordFile, 'utf8')).trim();
      expect(serve.output()).not.toContain(password);
    });
  });

  describe('the Kafka source through serve', () => {
    const topic = uniqueTopic('secured.spans');
    let serve: ServeProcess;
    beforeAll(async () => {
      const admin = new Kafka({ brokers: broker!.brokers }).admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      await admin.disconnect();
      serve = await startServe({
        source: {
          kafka: {
            ...connection(),
            topic,
            groupId: uniqueTopic('secured-group'),
            deadLetterTopic: `${topic}.dlq`,
            sessionTimeoutMs: 6_000,
            heartbeatIntervalMs: 500,
          },
        },
      });
    });
    afterAll(async () => {
      expect(await serve.stop()).toBe(0);
    });

    it('reads OTLP records over SASL_SSL and writes their trajectories', async () => {
      const records = collectorRecords(['secured-run-1', 'secured-run-2']);
      const producer = securedClient().producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: records.map((r) => ({ key: r.key, value: r.value })) });
      await producer.disconnect();
      const traceIds = records.flatMap((r) => r.traceIds);
      const rows = await waitForLines<{ traceIds: string[] }>(
        join(serve.dataDir, 'trajectories.jsonl'),
        (r) => traceIds.every((id) => r.some((t) => t.traceIds.includes(id))),
        45_000,
      );
      for (const id of traceIds)
        expect(
          rows.some((t) => t.traceIds.includes(id)),
          id,
        ).toBe(true);
    });
  });
});
