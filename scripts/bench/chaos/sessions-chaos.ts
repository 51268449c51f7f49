/**
 * Chaos under steady load for sessions at any scale (issue 16; docs/scaling-out.md §4):
 *
 *   TRAJWATCH_TEST_KAFKA=127.0.0.1:19092 node scripts/bench/chaos/sessions-chaos.ts [--seconds 180] [--kill-every 20] [--rate 3]
 *
 * Loopback only, bounded in time (load `--seconds`, then at most 240 s to settle):
 * 1. a real OpenTelemetry Collector (`.cache/otelcol/otelcol-trajwatch`, built by
 *    scripts/setup/otelcol/build.sh) runs the shipped collector-config/to-kafka with loopback ports,
 *    writing to a fresh 6-partition topic;
 * 2. three `trajwatch serve --source kafka` members (repartition on, findings to a fresh Kafka
 *    topic through the Kafka sink);
 * 3. steady load: `--rate` conversations per second (3 to 6 traces each, one OTLP/JSON POST per
 *    trace) to the Collector's OTLP/HTTP receiver;
 * 4. every `--kill-every` seconds one member (in turn) gets SIGKILL and is started again on the
 *    same data directory; the time until it owns partitions of both topics again is its recovery;
 * 5. after the load, `trajwatch replay` of everything sent gives the expected finding ids: every
 *    one must reach the findings topic (0 lost); duplicates are counted.
 * Prints one JSON summary; exits 1 when a finding is lost.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka } from 'kafkajs';
import { kafkajsLogLevel, quietLogCreator } from '../../../src/kafka/kafkajs-log.ts';
import { uniqueTopic } from '../../../test/helpers/kafka.ts';
import type { ServeProcess } from '../../../test/helpers/serve.ts';
import { renderConfig, startCollector } from '../../../test/ops/otelcol.ts';
import { assignmentOf, replayFindingIds, settledOn, startSessionMember } from '../../../test/repartition/session-group.ts';
import { type Conversation, conversation } from '../../../test/repartition/session-records.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '180' },
    'kill-every': { type: 'string', default: '20' },
    rate: { type: 'string', default: '3' },
  },
});
const loadSeconds = Math.min(Number(values.seconds), 600);
const killEveryMs = Number(values['kill-every']) * 1000;
const rate = Number(values.rate);
const SETTLE_LIMIT_MS = 240_000;

const brokers = (process.env['TRAJWATCH_TEST_KAFKA'] ?? '127.0.0.1:19092').split(',');
if (!brokers.every((b) => b.startsWith('127.0.0.1:') || b.startsWith('localhost:'))) throw new Error('loopback brokers only');
const collectorBin = new URL('../../../.cache/otelcol/otelcol-trajwatch', import.meta.url).pathname;
const shippedConfig = readFileSync(new URL('../../../collector-config/to-kafka/config.yaml', import.meta.url), 'utf8');

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kafka = new Kafka({ clientId: 'sessions-chaos', brokers, logLevel: kafkajsLogLevel('nothing'), logCreator: quietLogCreator('nothing') });
const admin = kafka.admin();
await admin.connect();
const topic = uniqueTopic('chaos.otlp');
const sessionsTopic = `${topic}.sessions`;
const findingsTopic = `${topic}.findings`;
const groupId = uniqueTopic('chaos-trajwatch');
await admin.createTopics({
  topics: [
    { topic, numPartitions: 6 },
    { topic: findingsTopic, numPartitions: 3 },
  ],
  waitForLeaders: true,
});

// What reaches the findings topic, from its start, all run long.
const seen = new Map<string, number>();
let findingRecords = 0;
const reader = kafka.consumer({ groupId: uniqueTopic('chaos-reader') });
await reader.connect();
await reader.subscribe({ topics: [findingsTopic], fromBeginning: true });
await reader.run({
  eachMessage: async ({ message }) => {
    const row = JSON.parse(message.value!.toString()) as { finding_id?: string };
    if (row.finding_id === undefined) return;
    findingRecords++;
    seen.set(row.finding_id, (seen.get(row.finding_id) ?? 0) + 1);
  },
});

const [grpcPort, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
const collector = await startCollector(
  collectorBin,
  renderConfig(shippedConfig, {
    '0.0.0.0:4317': `127.0.0.1:${grpcPort}`,
    '0.0.0.0:4318': `127.0.0.1:${httpPort}`,
    'host: 0.0.0.0': 'host: 127.0.0.1',
    'port: 8888': `port: ${metricsPort}`,
    'brokers: [kafka:9092]': `brokers: [${brokers.join(', ')}]`,
    'topic: otlp_spans': `topic: ${topic}`,
    // The stack's evaluation-event receiver and file (unused here).
    '0.0.0.0:4320': `127.0.0.1:${await freePort()}`,
    '/var/lib/otelcol/evaluations.jsonl': join(mkdtempSync(join(tmpdir(), 'sessions-chaos-evals-')), 'evaluations.jsonl'),
  }),
);

const start = (dataDir?: string) =>
  startSessionMember({ brokers, topic, groupId, sessionsTopic, findingsTopic, ...(dataDir === undefined ? {} : { dataDir }) });
const members: ServeProcess[] = await Promise.all([start(), start(), start()]);
const settleDeadline = Date.now() + 90_000;
while (!settledOn(members, [topic, sessionsTopic], 6) && Date.now() < settleDeadline) await sleep(200);

/** Per process, the last reading of its records counters (a killed one keeps its last). */
const consumed = new Map<ServeProcess, { source: number; sessions: number }>();
async function scrape(m: ServeProcess): Promise<void> {
  try {
    const text = await (await fetch(`${m.url}/metrics`)).text();
    const read = (name: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name} `))
          ?.split(' ')[1] ?? 0,
      );
    consumed.set(m, { source: read('trajwatch_kafka_source_records_total'), sessions: read('trajwatch_kafka_sessions_source_records_total') });
  } catch {
    // Killed between two scrapes: its last reading stays.
  }
}
const scraper = setInterval(() => void Promise.all(members.map(scrape)), 500);

const sent: Conversation[] = [];
let traces = 0;
let spans = 0;
let postErrors = 0;
const url = `http://127.0.0.1:${httpPort}/v1/traces`;
async function post(body: unknown): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).catch(() => undefined);
    if (res?.ok === true) return;
    postErrors++;
    if (attempt > 20) throw new Error('the Collector refuses the load');
    await sleep(200);
  }
}

const kills: { at: number; victim: number; recoverySeconds: number | undefined }[] = [];
const startedAt = Date.now();
let nextKill = startedAt + killEveryMs;
let victim = 0;
let index = 0;
const pending: Promise<void>[] = [];
while (Date.now() - startedAt < loadSeconds * 1000) {
  const tickStart = Date.now();
  for (let i = 0; i < rate; i++) {
    const c = conversation('chaos', index, 3 + (index % 4));
    index++;
    sent.push(c);
    traces += c.requests.length;
    spans += c.requests.length * 3;
    for (const r of c.requests) pending.push(post(r));
  }
  if (Date.now() >= nextKill) {
    nextKill += killEveryMs;
    const m = members[victim]!;
    await scrape(m);
    const exited = new Promise((r) => m.child.once('exit', r));
    m.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    const restarted = await start(m.dataDir);
    members[victim] = restarted;
    const record = { at: (killedAt - startedAt) / 1000, victim, recoverySeconds: undefined as number | undefined };
    kills.push(record);
    // Recovery: the restarted member owns partitions of both topics again (watched in the background).
    void (async () => {
      while (Date.now() - killedAt < 120_000) {
        if ((assignmentOf(restarted, topic)?.length ?? 0) > 0 && (assignmentOf(restarted, sessionsTopic)?.length ?? 0) > 0) {
          record.recoverySeconds = (Date.now() - killedAt) / 1000;
          return;
        }
        await sleep(100);
      }
    })();
    victim = (victim + 1) % members.length;
  }
  await sleep(Math.max(0, 1000 - (Date.now() - tickStart)));
}
await Promise.all(pending);
const loadEndedAt = Date.now();

const expected = await replayFindingIds(sent);
const settleBy = Date.now() + SETTLE_LIMIT_MS;
while ([...expected].some((id) => !seen.has(id)) && Date.now() < settleBy) await sleep(500);
const allFoundAfterLoadSeconds = (Date.now() - loadEndedAt) / 1000;
await Promise.all(members.map(scrape));
clearInterval(scraper);

const lost = [...expected].filter((id) => !seen.has(id));
const unexpected = [...seen.keys()].filter((id) => !expected.has(id));
let stage1Records = 0;
let stage2Records = 0;
for (const c of consumed.values()) {
  stage1Records += c.source;
  stage2Records += c.sessions;
}
const topicRecords = (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
const internalRecords = (await admin.fetchTopicOffsets(sessionsTopic)).reduce((n, p) => n + Number(p.high), 0);
const summary = {
  loadSeconds,
  conversations: sent.length,
  traces,
  spans,
  postRetries: postErrors,
  kills: kills.length,
  recoverySeconds: kills.map((k) => k.recoverySeconds),
  expectedFindings: expected.size,
  distinctOnTopic: seen.size,
  lost: lost.length,
  unexpected: unexpected.length,
  findingRecords,
  duplicates: findingRecords - seen.size,
  allFoundSecondsAfterLoad: allFoundAfterLoadSeconds,
  sourceTopicRecords: topicRecords,
  stage1RecordsConsumed: stage1Records,
  stage1ReRead: stage1Records - topicRecords,
  internalTopicRecords: internalRecords,
  stage2RecordsConsumed: stage2Records,
  stage2ReRead: stage2Records - internalRecords,
  loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
};
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
if (lost.length > 0) process.stdout.write(`lost (first 5): ${lost.slice(0, 5).join(', ')}\n`);

await Promise.all(members.map((m) => m.stop()));
await collector.stop();
await reader.disconnect();
await admin.disconnect();
process.exit(lost.length === 0 ? 0 : 1);
