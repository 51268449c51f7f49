/**
 * `trajwatch tail --kafka` against the real broker (which does not auto-create topics): a
 * missing findings or alarms topic is answered in one line naming the topic and the keys that
 * fix it, exit 1 (a configuration problem, as a ConfigError is), never a kafkajs stack; an
 * unreachable broker in one line too, exit 2. The topic is not created by asking.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();

/** trajwatch's own lines on stderr (Node 24 warns once about a negative timer inside kafkajs 2.2.4). */
const ownLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('trajwatch'));

describe.runIf(brokers !== undefined)('tail --kafka and a missing topic (real broker)', () => {
  /** A config file naming `topics` on the test broker. */
  const configFile = async (topics: Record<string, string>) => {
    const dir = await mkdtemp(join(tmpdir(), 'tail-kafka-'));
    await writeFile(join(dir, 'config.json'), JSON.stringify({ sinks: { kafka: { brokers, topics } } }));
    return join(dir, 'config.json');
  };

  for (const which of ['findings', 'alarms'] as const) {
    it(`a missing ${which} topic: one line naming it and sinks.kafka.topics.${which}, exit 1, nothing created`, async () => {
      const topics = { findings: uniqueTopic('tail.findings-missing'), alarms: uniqueTopic('tail.alarms-missing') };
      const args = ['tail', '--kafka', '--config', await configFile(topics), '--timeout-ms', '20000', ...(which === 'alarms' ? ['--alarms'] : [])];
      const { code, stdout, stderr } = await runCli(args, 60_000);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).not.toContain('KafkaJS');
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(ownLines(stderr)).toEqual([
        `trajwatch tail: topic ${topics[which]} does not exist on ${brokers!.join(',')}: serve's Kafka sink creates it at its first record with sinks.kafka.createTopics, or set sinks.kafka.topics.${which} to the topic serve writes`,
      ]);
      const admin = quietKafka('tail-test', brokers).admin();
      await admin.connect();
      const existing = await admin.listTopics();
      await admin.disconnect();
      expect(existing).not.toContain(topics[which]);
    });
  }

  it('an unreachable broker: one line naming it, exit 2', async () => {
    const { code, stderr } = await runCli(['tail', '--kafka', '--timeout-ms', '20000'], 60_000, {
      env: { ...process.env, TRAJWATCH_SINK_KAFKA_BROKERS: '127.0.0.1:1' },
    });
    expect(code).toBe(2);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(ownLines(stderr)).toHaveLength(1);
    expect(ownLines(stderr)[0]).toMatch(/^trajwatch: tail --kafka: cannot list the topics of 127\.0\.0\.1:1: /);
  });
});
