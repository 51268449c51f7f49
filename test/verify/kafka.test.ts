/**
 * `trajwatch verify --kafka` reads the findings topic of a real broker (the shared test broker)
 * from its start to its end offsets, after a real `serve` with the Kafka sink wrote it, and
 * checks the topic's records as it checks the local log's.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { verifyJson } from './helpers.ts';

const brokers = await kafkaForTests();

describe.runIf(brokers !== undefined)('trajwatch verify --kafka against a real broker', { timeout: 300_000 }, () => {
  it('holds on the topic a serve wrote, then names the topic record that breaks an invariant', async () => {
    const topics = { findings: uniqueTopic('verify.findings'), alarms: uniqueTopic('verify.alarms') };
    const serve = await startServe({ sinks: { kafka: { brokers, createTopics: true, topicPartitions: 2, topics } } });
    let local: Record<string, unknown>[];
    try {
      await sendFlaggedAgentRuns(serve.url, ['conv-verify-kafka-a', 'conv-verify-kafka-b']);
      // Per run: two findings and a manifest; the Kafka sink acknowledges them before serve stops.
      local = await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.length >= 6);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const config = join(serve.dataDir, 'verify.json');
    await writeFile(config, JSON.stringify({ sinks: { kafka: { brokers, topics } } }));
    const clean = await verifyJson(serve.dataDir, ['--kafka', '--config', config]);
    expect(clean.out.violations).toEqual([]);
    expect(clean.code).toBe(0);
    expect(clean.out.summary.read).toContainEqual({ source: `kafka:${topics.findings}`, records: local.length, files: 0, unfinishedLines: 0 });

    // A finding of the topic with its claim edited: its id no longer follows from it.
    const finding = local.find((r) => !('record_kind' in r))!;
    const producer = new Kafka({ brokers: brokers!, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    const [sent] = await producer.send({
      topic: topics.findings,
      messages: [{ key: (finding.subject as { trajectory_key: string }).trajectory_key, value: JSON.stringify({ ...finding, claim: 'edited' }), partition: 0 }],
    });
    await producer.disconnect();
    const broken = await verifyJson(serve.dataDir, ['--kafka', '--config', config]);
    expect(broken.code).toBe(1);
    const mismatch = broken.out.violations.find((v) => v.invariant === 'finding-id-stable' && /is not the id of its identity inputs/.test(v.what));
    expect(mismatch?.location).toEqual({ topic: topics.findings, partition: 0, offset: sent!.baseOffset });
  });
});
