/**
 * Stage 2's commits around fragments (docs/scaling-out.md §4, "Fragments"), with a real `serve
 * --source kafka` member and the real broker: this test writes the internal topic itself (as
 * stage 1 would) — fragments of one trace with another session's whole record between them. The
 * group's committed offset must stay at the first fragment while the trace is not whole, even
 * after the record behind it was analyzed and its findings made durable; a trace that never
 * gets its last fragment marks its session `repartition-fragment-lost` once the deadline passed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { splitRecord } from '../../src/repartition/fragments.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import type { ServeProcess } from '../helpers/serve.ts';
import { metric, readTrajectories, waitFor } from '../helpers/serve-group.ts';
import { settledOn, startSessionMember } from './session-group.ts';
import { traceRecord } from './step-records.ts';

const brokers = await kafkaForTests();

interface Line {
  key: string;
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  steps: unknown[];
}

async function finalLine(dir: string, key: string): Promise<Line | undefined> {
  const rows = ((await readTrajectories([dir])) as unknown as Line[]).filter((r) => r.key === key);
  return rows.sort((a, b) => b.revision - a.revision)[0];
}

const hex32 = (s: string) => Buffer.from(s.padEnd(16, '0').slice(0, 16)).toString('hex');

describe.runIf(brokers !== undefined)('stage 2 commits around fragments (real broker, real serve)', () => {
  const kafka = quietKafka('fragment-offsets-test', brokers);
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let member: ServeProcess | undefined;

  beforeAll(async () => {
    await Promise.all([admin.connect(), producer.connect()]);
  });
  afterEach(async () => {
    await member?.stop();
    member = undefined;
  });
  afterAll(async () => {
    await Promise.all([admin.disconnect(), producer.disconnect()]);
  });

  /** One member with the repartition on; returns the internal topic and stage 2's group. */
  async function start(sessions: Record<string, unknown> = {}): Promise<{ sessionsTopic: string; group: string }> {
    const topic = uniqueTopic('frag.offsets');
    const sessionsTopic = `${topic}.sessions`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
    const groupId = uniqueTopic('trajwatch-frag');
    member = await startSessionMember({ brokers: brokers!, topic, groupId, sessionsTopic, sessions });
    const m = member;
    if (!(await waitFor(() => settledOn([m], [topic, sessionsTopic], 6), 60_000))) throw new Error(`did not settle:\n${m.output()}`);
    return { sessionsTopic, group: `${groupId}.sessions` };
  }

  async function send(topic: string, partition: number, key: string, value: Buffer): Promise<number> {
    const [meta] = await producer.send({ topic, acks: -1, messages: [{ key, value, partition }] });
    return Number(meta!.baseOffset);
  }

  async function committed(group: string, topic: string, partition: number): Promise<number> {
    const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return Number(t!.partitions.find((p) => p.partition === partition)!.offset);
  }

  it('commits nothing past the first fragment of a trace not yet whole; once whole and analyzed, past its last', async () => {
    const { sessionsTopic, group } = await start();
    const m = member!;
    const session = uniqueTopic('frag-s');
    const other = uniqueTopic('frag-o');
    const fragments = splitRecord(session, hex32('frag-trace'), traceRecord(session, hex32('frag-trace'), 20, 400), 2_500);
    expect(fragments.length).toBeGreaterThanOrEqual(4);
    const p = 2;
    const first = await send(sessionsTopic, p, session, fragments[0]!);
    for (const f of fragments.slice(1, -1)) await send(sessionsTopic, p, session, f);
    // Another session's whole trace behind the fragments, on the same partition: it closes and is written.
    const behind = await send(sessionsTopic, p, other, traceRecord(other, hex32('other-trace'), 3, 100));
    expect(await waitFor(async () => (await finalLine(m.dataDir, other)) !== undefined, 60_000), m.output().slice(-2_000)).toBe(true);
    // Two commits after it was durable: neither may pass the first fragment.
    const commitsNow = (await metric(m, 'trajwatch_kafka_sessions_source_commits_total')) ?? 0;
    expect(await waitFor(async () => ((await metric(m, 'trajwatch_kafka_sessions_source_commits_total')) ?? 0) >= commitsNow + 2, 30_000)).toBe(true);
    const held = await committed(group, sessionsTopic, p);
    expect(held).toBeLessThanOrEqual(first);
    expect(await metric(m, 'trajwatch_repartition_reassembly_traces')).toBe(1);

    const last = await send(sessionsTopic, p, session, fragments.at(-1)!);
    expect(last).toBeGreaterThan(behind);
    expect(await waitFor(async () => (await finalLine(m.dataDir, session))?.steps.length === 20, 60_000), m.output().slice(-2_000)).toBe(true);
    const line = (await finalLine(m.dataDir, session))!;
    expect(line.complete).toBe(true);
    expect(await waitFor(async () => (await committed(group, sessionsTopic, p)) > last, 30_000)).toBe(true);
    expect(await metric(m, 'trajwatch_repartition_reassembly_bytes')).toBe(0);
  }, 180_000);

  it('a trace whose last fragment never comes marks its session repartition-fragment-lost at the deadline, and the offsets then move on', async () => {
    const { sessionsTopic, group } = await start({ reassemblyDeadlineMs: 500 });
    const m = member!;
    const session = uniqueTopic('frag-lost');
    const p = 4;
    await send(sessionsTopic, p, session, traceRecord(session, hex32('lost-whole'), 3, 100));
    const fragments = splitRecord(session, hex32('lost-frag'), traceRecord(session, hex32('lost-frag'), 20, 400), 2_500);
    let last = 0;
    for (const f of fragments.slice(0, -1)) last = await send(sessionsTopic, p, session, f);
    const lost = async () => (await finalLine(m.dataDir, session))?.incompleteReasons.includes('repartition-fragment-lost') === true;
    expect(await waitFor(lost, 60_000), m.output().slice(-2_000)).toBe(true);
    const line = (await finalLine(m.dataDir, session))!;
    expect(line.complete).toBe(false);
    // The whole trace's steps are there; the lost one's are not.
    expect(line.steps).toHaveLength(3);
    expect(m.output()).toContain('repartition-fragment-lost');
    expect(await waitFor(async () => (await committed(group, sessionsTopic, p)) > last, 30_000)).toBe(true);
  }, 180_000);
});
