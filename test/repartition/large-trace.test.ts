/**
 * Any trace through the repartition (docs/scaling-out.md §4, "Fragments"): a trace of 5 MiB of
 * real LLM content (TRAIL's message histories, `large-trace.ts`) written to the source topic as
 * the Collector writes it (OTLP/protobuf records under 1 MB, keyed by trace id), read by two
 * real `serve --source kafka` members with the repartition on. Its stage-1 record (≈ 8.7 MB)
 * is far over the internal topic's `max.message.bytes` (1 MB): it must go in fragments and come
 * out whole — every step, complete, and the findings of one `serve` given the same trace over
 * OTLP/HTTP. Figures printed as `[large-trace]`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { metric, readFindings, readTrajectories, waitFor } from '../helpers/serve-group.ts';
import { kafkaRecords, largeTrace, otlpRequest } from './large-trace.ts';
import { settledOn, startSessionMember } from './session-group.ts';

const brokers = await kafkaForTests();

interface Line {
  key: string;
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  traceIds: string[];
  steps: { id: string }[];
}

/** The highest revision of `key` in the data directories, once one is written. */
async function finalLine(dirs: string[], key: string): Promise<Line | undefined> {
  const rows = ((await readTrajectories(dirs)) as unknown as Line[]).filter((r) => r.key === key);
  return rows.sort((a, b) => b.revision - a.revision)[0];
}

async function sum(members: ServeProcess[], name: string): Promise<number> {
  let n = 0;
  for (const m of members) n += (await metric(m, name)) ?? 0;
  return n;
}

describe.runIf(brokers !== undefined)('a 5 MiB trace through the two-instance repartition (real broker)', () => {
  const kafka = quietKafka('large-trace-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer();
  let members: ServeProcess[] = [];

  beforeAll(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
  });
  afterEach(async () => {
    await Promise.all(members.map((m) => m.stop()));
    members = [];
  });
  afterAll(async () => {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  it('is forwarded in fragments and analyzed whole: every step, complete, the findings of one serve over OTLP/HTTP', async () => {
    const sessionId = uniqueTopic('swe-session');
    const trace = largeTrace(sessionId);
    const records = kafkaRecords(trace);
    expect(trace.jsonBytes).toBeGreaterThanOrEqual(5 * 1024 * 1024);

    // One serve over OTLP/HTTP: the reference.
    const single = await startServe({ assembler: { quietPeriodMs: 1_000, idleTimeoutMs: 60_000 } });
    members = [single];
    const posted = await fetch(`${single.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlpRequest(trace.spans)),
    });
    expect(posted.status).toBe(200);
    expect(await waitFor(async () => (await finalLine([single.dataDir], sessionId)) !== undefined, 60_000), single.output().slice(-2_000)).toBe(true);
    const reference = (await finalLine([single.dataDir], sessionId))!;
    const referenceIds = (await readFindings([single.dataDir])).ids;
    await single.stop();

    const topic = uniqueTopic('large.trace');
    const sessionsTopic = `${topic}.sessions`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const groupId = uniqueTopic('trajwatch-large');
    members = await Promise.all(Array.from({ length: 2 }, () => startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic })));
    const settled = await waitFor(() => settledOn(members, [topic, sessionsTopic], 6), 90_000);
    if (!settled) throw new Error(`the group did not settle:\n${members.map((m) => m.output()).join('\n---\n')}`);
    // The internal topic as created: the broker's default largest message.
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2, name: sessionsTopic, configNames: ['max.message.bytes'] }],
    });
    const maxMessageBytes = Number(described.resources[0]!.configEntries[0]!.configValue);
    expect(maxMessageBytes).toBeLessThanOrEqual(1_048_588);

    // One record a request: a batch of them would pass the source topic's largest message.
    for (const r of records) await producer.send({ topic, acks: -1, messages: [r] });
    const dirs = members.map((m) => m.dataDir);
    const done = await waitFor(async () => (await finalLine(dirs, sessionId))?.steps.length === trace.spans.length, 120_000);
    expect(done, members.map((m) => m.output().slice(-2_000)).join('\n---\n')).toBe(true);
    const line = (await finalLine(dirs, sessionId))!;
    const found = await readFindings(dirs);

    const fragments = await sum(members, 'trajwatch_repartition_fragments_total');
    const forwardedBytes = await sum(members, 'trajwatch_repartition_forwarded_bytes_total');
    const whole = await sum(members, 'trajwatch_repartition_reassembled_total');
    process.stdout.write(
      `[large-trace] ${JSON.stringify({
        otlpJsonBytes: trace.jsonBytes,
        spans: trace.spans.length,
        sourceRecords: records.length,
        internalMaxMessageBytes: maxMessageBytes,
        fragments,
        forwardedBytes,
        reassembled: whole,
        findings: found.ids.size,
      })}\n`,
    );
    expect(fragments).toBeGreaterThanOrEqual(Math.ceil(forwardedBytes / maxMessageBytes));
    expect(forwardedBytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(whole).toBe(1);
    expect(await sum(members, 'trajwatch_repartition_traces_total')).toBe(1);
    expect(line.complete).toBe(true);
    expect(line.incompleteReasons).toEqual([]);
    expect(line.traceIds).toEqual([trace.traceId]);
    expect(line.steps.map((s) => s.id).sort()).toEqual(reference.steps.map((s) => s.id).sort());
    expect(reference.complete).toBe(true);
    expect(referenceIds.size).toBeGreaterThan(0);
    expect(new Set(found.ids)).toEqual(referenceIds);
  }, 300_000);
});
