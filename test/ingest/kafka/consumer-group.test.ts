/**
 * Real `trajwatch serve --source kafka` processes in one consumer group against the real
 * broker (scripts/setup/kafka/broker.sh), fed OTLP protobuf records shaped like the Collector's.
 * Each test reports its figures (records, findings, duplicates, timings) on stdout.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { kafkaForTests, uniqueTopic, quietKafka } from '../../helpers/kafka.ts';
import type { ServeProcess } from '../../helpers/serve.ts';
import {
  expectedFindingIds,
  groupSettled,
  lastAssignment,
  metric,
  readFindings,
  readTrajectories,
  startAll,
  startMember,
  waitFor,
} from '../../helpers/serve-group.ts';
import { agentRunSpans, collectorRecords, encodeSpans, type OtlpRecord } from '../../helpers/otlp-records.ts';

const brokers = await kafkaForTests();

const hasAll = (found: ReadonlySet<string>, expected: ReadonlySet<string>) => [...expected].every((id) => found.has(id));

/** Waits (bounded) until the members split the partitions; on failure shows what each logged. */
async function expectSettled(members: readonly ServeProcess[], partitions: number): Promise<void> {
  // Joins that land mid-rebalance can wait out the rebalance timeout (60 s) on a loaded machine.
  if (await waitFor(() => groupSettled(members, partitions), 90_000)) return;
  throw new Error(`the group did not settle on ${partitions} partitions:\n${members.map((m) => m.output()).join('\n---\n')}`);
}

function report(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`[consumer-group] ${name}: ${JSON.stringify(figures)}\n`);
}

describe.runIf(brokers !== undefined)('serve --source kafka as a consumer group (real broker)', () => {
  const kafka = quietKafka('group-test', brokers);
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

  async function topicWith(partitions: number, prefix: string): Promise<string> {
    const topic = uniqueTopic(prefix);
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    return topic;
  }

  const send = (topic: string, records: readonly OtlpRecord[]) =>
    producer.send({ topic, acks: -1, messages: records.map((r) => ({ key: r.key, value: r.value })) });

  const runIds = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

  it('three members share the partitions and every expected finding appears exactly once after dedupe', async () => {
    const started = Date.now();
    const topic = await topicWith(6, 'group.share');
    const groupId = uniqueTopic('trajwatch-share');
    members = await startAll([1, 2, 3].map(() => startMember({ brokers: brokers!, topic, groupId })));
    await expectSettled(members, 6);
    const assignments = members.map((m) => lastAssignment(m));

    const records = collectorRecords(runIds('share', 240), { sessionEvery: 5 });
    const expected = await expectedFindingIds(records);
    await send(topic, records);
    const dirs = members.map((m) => m.dataDir);
    await waitFor(async () => hasAll((await readFindings(dirs)).ids, expected), 60_000);
    const found = await readFindings(dirs);

    const missing = [...expected].filter((id) => !found.ids.has(id));
    const unexpected = [...found.ids].filter((id) => !expected.has(id));
    report('share', {
      records: records.length,
      runs: 240,
      expectedFindings: expected.size,
      distinctFound: found.ids.size,
      lines: found.lines,
      duplicates: found.lines - found.ids.size,
      perMember: found.perDir,
      assignments,
      seconds: (Date.now() - started) / 1000,
    });
    expect(missing).toEqual([]);
    expect(unexpected).toEqual([]);
    // Each member owned partitions and did part of the work.
    expect(found.perDir.every((n) => n > 0)).toBe(true);

    // A clean stop commits: with every trajectory finished, each partition is committed to its end.
    expect(await Promise.all(members.map((m) => m.stop()))).toEqual([0, 0, 0]);
    members = [];
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const byPartition = (list: { partition: number; offset: string }[]) => list.map((p) => [p.partition, Number(p.offset)]).sort((a, b) => a[0]! - b[0]!);
    expect(byPartition(committed!.partitions)).toEqual(byPartition(ends.map((e) => ({ partition: e.partition, offset: e.high }))));
  }, 180_000);

  it('a member killed with SIGKILL mid-stream and started again loses no finding; duplicates are counted', async () => {
    const started = Date.now();
    const topic = await topicWith(6, 'group.kill');
    const groupId = uniqueTopic('trajwatch-kill');
    members = await startAll([1, 2, 3].map(() => startMember({ brokers: brokers!, topic, groupId })));
    await expectSettled(members, 6);

    const waves = Array.from({ length: 12 }, (_, w) => collectorRecords(runIds(`kill-${w}`, 30), { sessionEvery: 5 }));
    const all = waves.flat();
    const expected = await expectedFindingIds(all);
    const victim = members[1]!;
    const dirs = members.map((m) => m.dataDir);
    let victimOpenAtKill: number | undefined;
    let victimPartitions: number[] | undefined;
    for (const [w, wave] of waves.entries()) {
      await send(topic, wave);
      await new Promise((r) => setTimeout(r, 150));
      if (w === 4) {
        victimOpenAtKill = await metric(victim, 'trajwatch_trajectories_open');
        victimPartitions = lastAssignment(victim);
        const exited = new Promise((r) => victim.child.once('exit', r));
        victim.child.kill('SIGKILL');
        await exited;
        // A killed process has no exit code for ServeProcess.stop to see: leave it out of the cleanup.
        members = members.filter((m) => m !== victim);
      }
    }
    const killedAt = Date.now();
    // The same data directory, as a restarted container would have.
    const restarted = await startMember({ brokers: brokers!, topic, groupId, dataDir: victim.dataDir });
    members.push(restarted);
    const live = members;
    const settled = await waitFor(() => groupSettled(live, 6), 60_000);
    const complete = await waitFor(async () => hasAll((await readFindings(dirs)).ids, expected), 90_000);
    const found = await readFindings(dirs);
    const missing = [...expected].filter((id) => !found.ids.has(id));
    report('sigkill', {
      records: all.length,
      runs: 360,
      expectedFindings: expected.size,
      distinctFound: found.ids.size,
      lines: found.lines,
      duplicates: found.lines - found.ids.size,
      perDataDir: found.perDir,
      tornLines: found.tornLines,
      victimPartitions,
      victimOpenTrajectoriesAtKill: victimOpenAtKill,
      restartedAssignment: lastAssignment(restarted),
      secondsFromKillToAllFindings: (Date.now() - killedAt) / 1000,
      seconds: (Date.now() - started) / 1000,
    });
    expect(settled).toBe(true);
    expect(complete).toBe(true);
    expect(missing).toEqual([]);
    expect([...found.ids].filter((id) => !expected.has(id))).toEqual([]);
    expect(lastAssignment(restarted)!.length).toBeGreaterThan(0);
  }, 240_000);

  it('a rebalance while trajectories are open loses none of them and emits none as incomplete', async () => {
    const started = Date.now();
    const topic = await topicWith(4, 'group.rebalance');
    const groupId = uniqueTopic('trajwatch-rebalance');
    const first = await startMember({ brokers: brokers!, topic, groupId, idleTimeoutMs: 120_000 });
    members = [first];
    await expectSettled(members, 4);

    // Every run's tool spans first, its root later: 40 trajectories stay open on the first member.
    const runs = runIds('rebalance', 40).map((id) => agentRunSpans(id));
    const heads: OtlpRecord[] = runs.map((r) => ({ key: r.traceId, value: encodeSpans(r.spans.slice(0, 3)), traceIds: [r.traceId] }));
    const roots: OtlpRecord[] = runs.map((r) => ({ key: r.traceId, value: encodeSpans(r.spans.slice(3)), traceIds: [r.traceId] }));
    const expected = await expectedFindingIds([...heads, ...roots]);
    await send(topic, heads);
    expect(await waitFor(async () => (await metric(first, 'trajwatch_trajectories_open')) === 40, 30_000)).toBe(true);
    // Commits were made, and none passed a record of an open trajectory.
    await new Promise((r) => setTimeout(r, 600));
    const before = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committedBefore = before[0]!.partitions.map((p) => Number(p.offset));
    expect(committedBefore.every((o) => o <= 0)).toBe(true);

    const second = await startMember({ brokers: brokers!, topic, groupId, idleTimeoutMs: 120_000 });
    members.push(second);
    await expectSettled(members, 4);
    const rebalancedAt = Date.now();
    await send(topic, roots);
    const dirs = members.map((m) => m.dataDir);
    const complete = await waitFor(async () => hasAll((await readFindings(dirs)).ids, expected), 60_000);
    const found = await readFindings(dirs);
    const trajectories = await readTrajectories(dirs);
    const dropped = await metric(first, 'trajwatch_kafka_source_dropped_trajectories_total');
    const after = await admin.fetchOffsets({ groupId, topics: [topic] });
    report('rebalance', {
      records: heads.length + roots.length,
      openAtRebalance: 40,
      droppedByFirstMemberAtRebalance: dropped,
      committedBeforeRebalance: committedBefore,
      committedAtEnd: after[0]!.partitions.map((p) => Number(p.offset)),
      expectedFindings: expected.size,
      distinctFound: found.ids.size,
      lines: found.lines,
      duplicates: found.lines - found.ids.size,
      perMember: found.perDir,
      assignments: members.map((m) => lastAssignment(m)),
      trajectoriesWritten: trajectories.length,
      secondsFromRebalanceToAllFindings: (Date.now() - rebalancedAt) / 1000,
      seconds: (Date.now() - started) / 1000,
    });
    expect(complete).toBe(true);
    expect([...expected].filter((id) => !found.ids.has(id))).toEqual([]);
    expect(dropped).toBeGreaterThan(0);
    // Nothing was emitted as incomplete: every trajectory written is a whole run.
    expect(trajectories.filter((t) => !t.complete || t.steps.length !== 4)).toEqual([]);
    expect(new Set(trajectories.map((t) => t.key)).size).toBe(40);
    expect(found.perDir.every((n) => n > 0)).toBe(true);
  }, 180_000);
});
