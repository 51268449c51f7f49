/**
 * Throughput of the two-stage group, 1 vs 2 members, on this machine (docs/scaling-out.md §4):
 *
 *   TRAJWATCH_TEST_KAFKA=127.0.0.1:19092 node scripts/bench/chaos/sessions-throughput.ts [--conversations 2000]
 *
 * For 1 and for 2 members (a fresh 6-partition topic and group each, the repartition on): once
 * the group has settled, the conversations (3 to 6 traces each, one record per trace, as the
 * Collector writes them) are produced as fast as the producer goes, and the run ends when every
 * session's trajectory is written whole. Wall seconds run from the first record produced to the
 * last session written (two quiet periods of 1 s are in it); CPU seconds are the members'
 * utime + stime over that time (/proc/PID/stat). Loopback only; bounded (each run at most 300 s).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Kafka } from 'kafkajs';
import { kafkajsLogLevel, quietLogCreator } from '../../../src/kafka/kafkajs-log.ts';
import { uniqueTopic } from '../../../test/helpers/kafka.ts';
import type { ServeProcess } from '../../../test/helpers/serve.ts';
import { readTrajectories } from '../../../test/helpers/serve-group.ts';
import { finalRevisions, settledOn, startSessionMember, type TrajectoryLine } from '../../../test/repartition/session-group.ts';
import { conversations } from '../../../test/repartition/session-records.ts';

const { values } = parseArgs({ options: { conversations: { type: 'string', default: '2000' } } });
const count = Number(values.conversations);
const brokers = (process.env['TRAJWATCH_TEST_KAFKA'] ?? '127.0.0.1:19092').split(',');
if (!brokers.every((b) => b.startsWith('127.0.0.1:') || b.startsWith('localhost:'))) throw new Error('loopback brokers only');
const RUN_LIMIT_MS = 300_000;
const TICKS_PER_SECOND = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kafka = new Kafka({ clientId: 'sessions-throughput', brokers, logLevel: kafkajsLogLevel('nothing'), logCreator: quietLogCreator('nothing') });
const admin = kafka.admin();
const producer = kafka.producer();
await Promise.all([admin.connect(), producer.connect()]);
const convs = conversations('tp', count);
const records = convs.flatMap((c) => c.records);
const spans = records.length * 3;

function cpuSeconds(m: ServeProcess): number {
  const fields = readFileSync(`/proc/${m.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat; after the ") " split, at indexes 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

const results = [];
for (const instances of [1, 2]) {
  const topic = uniqueTopic(`throughput.otlp.${instances}`);
  await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
  const groupId = uniqueTopic(`tp-${instances}`);
  const sessionsTopic = `${groupId}.sessions`;
  const members = await Promise.all(Array.from({ length: instances }, () => startSessionMember({ brokers, topic, groupId, sessionsTopic })));
  const deadline = Date.now() + RUN_LIMIT_MS;
  while (!settledOn(members, [topic, sessionsTopic], 6) && Date.now() < deadline) await sleep(20);
  const t0 = Date.now();
  const cpu0 = members.map(cpuSeconds);
  for (let i = 0; i < records.length; i += 500) {
    await producer.send({ topic, acks: -1, messages: records.slice(i, i + 500).map((r) => ({ key: r.key, value: r.value })) });
  }
  const dirs = members.map((m) => m.dataDir);
  let whole = 0;
  while (Date.now() < deadline) {
    const finals = finalRevisions((await readTrajectories(dirs)) as unknown as TrajectoryLine[]);
    whole = convs.filter((c) => finals.get(c.sessionId)?.traceIds.length === c.traceIds.length).length;
    if (whole === convs.length) break;
    await sleep(250);
  }
  const wall = (Date.now() - t0) / 1000;
  const cpu = members.map((m, i) => cpuSeconds(m) - cpu0[i]!).reduce((a, b) => a + b, 0);
  results.push({
    instances,
    sessionsWhole: whole,
    wallSeconds: wall,
    cpuSeconds: Number(cpu.toFixed(2)),
    spansPerWallSecond: Math.round(spans / wall),
    spansPerCpuSecond: Math.round(spans / cpu),
  });
  await Promise.all(members.map((m) => m.stop()));
}
process.stdout.write(
  JSON.stringify(
    {
      conversations: count,
      traces: records.length,
      spans,
      results,
      cores: (await import('node:os')).cpus().length,
      loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    },
    null,
    2,
  ) + '\n',
);
await Promise.all([admin.disconnect(), producer.disconnect()]);
