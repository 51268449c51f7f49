import { Ajv2020 } from 'ajv/dist/2020.js';
import { Kafka, logLevel } from 'kafkajs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingJsonSchema, recordJsonSchema } from '../../src/findings/json-schema.ts';
import { AnalysisManifestSchema } from '../../src/findings/manifest-schema.ts';
import { type Finding, FindingSchema } from '../../src/findings/schema.ts';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { runCli } from '../helpers/cli.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

const brokers = await kafkaForTests();

async function waitForTopic(brokerList: string[], topic: string, timeoutMs = 30_000): Promise<void> {
  const admin = new Kafka({ brokers: brokerList, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    while (!(await admin.listTopics()).includes(topic)) {
      if (Date.now() > deadline) throw new Error(`topic ${topic} was not created within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

describe.runIf(brokers !== undefined)('findings to a real Kafka broker, end to end', () => {
  const topics = { findings: uniqueTopic('e2e.findings'), alarms: uniqueTopic('e2e.alarms') };
  let serve: ServeProcess;

  beforeAll(async () => {
    serve = await startServe({ kafka: { brokers, createTopics: true, topicPartitions: 2, topics } });
  });
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  it('real SDK exporter → serve → broker → a consumer reads findings that parse with the published schema', async () => {
    const ids = ['conv-kafka-a', 'conv-kafka-b'];
    await sendFlaggedAgentRuns(serve.url, ids);
    // serve creates the topic on its first send; read only once it exists.
    await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.length >= 6);
    await waitForTopic(brokers!, topics.findings);
    // Per conversation: error-output on the failing tool and one repetition group, then its
    // analysis manifest (told apart by the record_kind header; a finding carries none).
    const all = await consumeMessages(brokers!, [topics.findings], 6);
    expect(all).toHaveLength(6);
    const messages = all.filter((m) => m.headers.record_kind === undefined);
    expect(messages).toHaveLength(4);
    const manifests = all.filter((m) => m.headers.record_kind === 'analysis-manifest').map((m) => AnalysisManifestSchema.parse(JSON.parse(m.value)));
    expect(manifests.map((m) => m.subject.trajectory_key).sort()).toEqual(ids);
    for (const m of all.filter((x) => x.headers.record_kind !== undefined)) expect(m.key).toBe(JSON.parse(m.value).subject.trajectory_key);
    const record = new Ajv2020({ strict: false, allErrors: true }).compile(recordJsonSchema());
    for (const m of all) expect(record(JSON.parse(m.value)), JSON.stringify(record.errors)).toBe(true);

    const validate = new Ajv2020({ strict: false, allErrors: true });
    const check = validate.compile(findingJsonSchema());
    const findings = messages.map((m) => {
      const json: unknown = JSON.parse(m.value);
      expect(check(json), JSON.stringify(check.errors)).toBe(true);
      const finding: Finding = FindingSchema.parse(json);
      expect(m.key).toBe(finding.subject.trajectory_key);
      expect(m.headers).toMatchObject({ schema_version: '1.1.0', 'content-type': 'application/json' });
      return finding;
    });
    for (const id of ids) {
      const mine = findings.filter((f) => f.subject.trajectory_key === id);
      expect(mine.map((f) => f.area).sort()).toEqual(['error-output', 'tool.repetition']);
      const repetition = mine.find((f) => f.area === 'tool.repetition')!;
      expect(repetition.claim).toMatch(/web_search.*identical arguments/);
      expect(repetition.observation).toMatchObject({ tool_name: 'web_search', count: 2 });
    }
    // The local log holds the same findings (the broker is a second sink, not a replacement).
    const local = (await waitForLines<Finding>(join(serve.dataDir, 'findings.jsonl'), (r) => r.length >= 6)).filter((r) => !('record_kind' in r));
    expect(new Set(local.map((f) => f.finding_id))).toEqual(new Set(findings.map((f) => f.finding_id)));
  });

  it('trajwatch tail --kafka prints the findings of the topic', async () => {
    const configPath = join(serve.dataDir, 'config.json');
    const run = await runCli(['tail', '--kafka', '--from-start', '--max', '4', '--timeout-ms', '30000', '--config', configPath]);
    expect(run.code).toBe(0);
    const printed = run.stdout
      .trim()
      .split('\n')
      .map((l) => FindingSchema.parse(JSON.parse(l)));
    expect(printed).toHaveLength(4);
  });

  it('trajwatch tail prints the local log', async () => {
    const run = await runCli(['tail', '--data-dir', serve.dataDir, '--from-start', '--max', '4', '--timeout-ms', '10000']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toHaveLength(4);
  });
});
