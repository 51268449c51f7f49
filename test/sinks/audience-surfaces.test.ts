import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config-schema.ts';
import { AudienceRefusals, refusalLines } from '../../src/sinks/audience-refusals.ts';
import { AudienceSink, withAudience } from '../../src/sinks/audience-sink.ts';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';
import type { Finding } from '../../src/findings/schema.ts';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaFindingSink } from '../../src/sinks/kafka/kafka-finding-sink.ts';
import { LocalLogSink } from '../../src/sinks/local-log-sink.ts';
import { expectExternalView, expectInternalView, judgedFinding, l0Findings, replayedFinding, sampleManifest } from '../findings/audience-fixture.ts';
import { consumeMessages, kafkaForTests, uniqueTopic } from '../helpers/kafka.ts';

const brokers = await kafkaForTests();
const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'trajwatch-audience-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const records = () => [judgedFinding(), replayedFinding(), ...l0Findings()];

describe('audience on the local logs: sinks.localLog.audience', () => {
  it('an external findings log holds none of the internal fields, an internal alarms log all of them', async () => {
    const dir = await tempDir();
    const config = ConfigSchema.parse({ sinks: { localLog: { audience: { findings: 'external' } } } });
    expect(config.sinks.localLog.audience).toEqual({ findings: 'external', alarms: 'internal' });
    const sink = withAudience(await LocalLogSink.open(dir, 1 << 20), config.sinks.localLog.audience);
    const manifest = sampleManifest();
    sink.write(records(), 'findings');
    sink.writeManifest!(manifest);
    sink.write(records(), 'alarms');
    await sink.close();
    const lines = async (file: string) =>
      (await readFile(join(dir, file), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
    const findings = await lines('findings.jsonl');
    expect(findings).toHaveLength(records().length + 1);
    for (const r of findings) expectExternalView(r);
    const alarms = await lines('alarms.jsonl');
    alarms.forEach((r, i) => expectInternalView(r, records()[i]!));
  });

  it('a record whose external view cannot be trusted is kept whole in the quarantine log, counted and named, never written to the external log, and stalls nothing', async () => {
    const dir = await tempDir();
    const logged: Record<string, unknown>[] = [];
    const quarantine = await JsonlLog.open(join(dir, 'audience-refused.jsonl'));
    const refusals = new AudienceRefusals(quarantine, (_level, message, context) => logged.push({ message, ...context }));
    const sink = new AudienceSink(await LocalLogSink.open(dir, 1 << 20), { findings: 'external', alarms: 'internal' }, refusals);
    const bad = judgedFinding();
    (bad.observation as { values: Record<string, unknown> }).values.judge_endpoint = 'https://judge.internal';
    const good = l0Findings()[0]!;
    expect(sink.backpressure()).toBeUndefined();
    sink.write([bad, good] as Finding[], 'findings');
    sink.write([bad] as Finding[], 'findings');
    expect(sink.refused).toBe(2);
    // Not backpressure: ingestion carries on, the rest of the stream is written.
    expect(sink.backpressure()).toBeUndefined();
    expect(refusals.count).toBe(2);
    expect(refusals.counts()).toEqual([{ sink: 'local-log', kind: 'trace-questions/trace-question', count: 2 }]);
    // The first refusal of the sink is logged, the second counted.
    expect(logged).toEqual([expect.objectContaining({ id: bad.finding_id, reason: expect.stringMatching(/judge_endpoint/), quarantine: quarantine.path })]);
    expect(refusalLines(refusals)[0]).toMatch(/^2 record\(s\) refused by an external view \(audience-strip-failed\)/);
    expect(refusalLines(refusals)[1]).toContain(`finding ${bad.finding_id} (trace-questions/trace-question)`);
    // The internal stream is the record itself: no strip, nothing refused.
    sink.write([bad], 'alarms');
    await sink.close();
    await refusals.close();
    const text = await readFile(join(dir, 'findings.jsonl'), 'utf8');
    expect(text).not.toContain('judge.internal');
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as Finding).finding_id),
    ).toEqual([good.finding_id]);
    expect(await readFile(join(dir, 'alarms.jsonl'), 'utf8')).toContain('judge.internal');
    const kept = (await readFile(quarantine.path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { refusal: string; sink: string; stream: string; id: string; record: Finding });
    expect(kept.map((k) => [k.refusal, k.sink, k.stream, k.id])).toEqual([
      ['audience-strip-failed', 'local-log', 'findings', bad.finding_id],
      ['audience-strip-failed', 'local-log', 'findings', bad.finding_id],
    ]);
    expect(kept[0]!.record).toEqual(bad);
  });

  it('is strict configuration: an unknown stream or view is an error', () => {
    expect(() => ConfigSchema.parse({ sinks: { localLog: { audience: { findings: 'partner' } } } })).toThrow();
    expect(() => ConfigSchema.parse({ sinks: { localLog: { audience: { manifests: 'external' } } } })).toThrow();
    expect(ConfigSchema.parse({}).sinks.localLog.audience).toEqual({ findings: 'internal', alarms: 'internal' });
  });
});

describe.skipIf(brokers === undefined)('audience on Kafka topics: kafka.audience (real broker)', () => {
  it('the external topic carries none of the internal fields, the internal topic all of them', async () => {
    const topics = { findings: uniqueTopic('audience.findings'), alarms: uniqueTopic('audience.alarms') };
    const config = parseKafkaSinkConfig({ brokers, topics, createTopics: true, topicPartitions: 1, audience: { findings: 'external' } });
    // As topology/build.ts composes it.
    const sink = withAudience(await KafkaFindingSink.open(config, { outboxDir: await tempDir() }), config.audience);
    sink.write(records(), 'findings');
    sink.writeManifest!(sampleManifest());
    sink.write(records(), 'alarms');
    await sink.flushed();
    await sink.close();
    const external = await consumeMessages(brokers!, [topics.findings], records().length + 1, 10_000);
    expect(external).toHaveLength(records().length + 1);
    for (const m of external) expectExternalView(JSON.parse(m.value));
    const internal = await consumeMessages(brokers!, [topics.alarms], records().length, 10_000);
    internal.forEach((m, i) => expectInternalView(JSON.parse(m.value), records()[i]!));
  }, 60_000);

  it('refuses an unknown audience in the Kafka sink configuration', () => {
    expect(() => parseKafkaSinkConfig({ brokers: ['127.0.0.1:9092'], audience: { findings: 'public' } })).toThrow(/audience/);
  });
});
