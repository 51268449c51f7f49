/**
 * `npm run stack -- demo`: sends the JS demo's agent run(s) (scripts/dev/demo.ts) through the
 * stack's Collector, then says where each finding arrived: its record on the findings topic
 * (partition, offset; a finding delivered twice, at-least-once after a member died, is counted)
 * and its evaluation event in the Collector's file exporter output.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kafkaClient } from '../../src/kafka/client.ts';
import { KafkaConnectionSchema } from '../../src/kafka/config.ts';
import { EVALUATIONS_FILE, NAMES } from './description.ts';
import { mappingOf, type StackState } from './state.ts';

const run = promisify(execFile);
const DEMO = new URL('../dev/demo.ts', import.meta.url).pathname;

export interface DemoOptions {
  runs: number;
  /** The conversations' id prefix (default a new `stack-demo-<uuid>`). */
  conversation?: string;
  /** Findings per run the demo's scripted run gives (the failed call, the repeat, two unguarded sends). */
  expectPerRun: number;
  waitMs: number;
  /** Also wait this long for a trajwatch alert in Alertmanager (judge on); 0: just read what is there. */
  alarmWaitMs?: number;
  /** Called once the demo process has started sending (the chaos test kills a member then). */
  onSending?: () => void;
}

export interface ArrivedFinding {
  findingId: string;
  area: string;
  trajectoryKey: string;
  /** Every delivery on the findings topic (more than one: a duplicate). */
  records: { partition: number; offset: string }[];
  /** Evaluation events with this finding id in the Collector's file exporter output. */
  evaluationEvents: number;
}

export interface DemoReport {
  conversations: string[];
  topic: string;
  findings: ArrivedFinding[];
  /** Findings topic records beyond the first per finding id. */
  duplicates: number;
  /** Runs with fewer than `expectPerRun` distinct findings when the wait ended. */
  missing: string[];
  evaluationsFile: string;
  /** trajwatch's alerts active in Alertmanager (Prometheus evaluating deploy/prometheus/alerts.yml over both members). */
  alerts: { alertname: string; labels: Record<string, string>; startsAt: string }[];
}

interface FindingRow {
  finding_id?: string;
  area?: string;
  subject?: { trajectory_key?: string };
}

/** Reads the whole findings topic; keeps the records of these conversations. */
async function readFindingsTopic(state: StackState, topic: string, keys: ReadonlySet<string>): Promise<Map<string, ArrivedFinding>> {
  const kafka = kafkaClient(KafkaConnectionSchema.parse({ brokers: state.kafka.brokers, clientId: 'trajwatch-stack-demo' }), { keyPrefix: 'stack.kafka.' });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const out = new Map<string, ArrivedFinding>();
  const pending = new Set(ends.filter((p) => p.high !== p.low).map((p) => p.partition));
  if (pending.size === 0) return out;
  const high = new Map(ends.map((p) => [p.partition, BigInt(p.high)]));
  const consumer = kafka.consumer({ groupId: `trajwatch-stack-demo-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stack demo: could not read ${topic} to its end within 60 s`)), 60_000);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const row = JSON.parse(message.value?.toString() ?? '{}') as FindingRow;
          const key = row.subject?.trajectory_key;
          if (row.finding_id !== undefined && key !== undefined && keys.has(key)) {
            const f = out.get(row.finding_id) ?? { findingId: row.finding_id, area: row.area ?? '', trajectoryKey: key, records: [], evaluationEvents: 0 };
            f.records.push({ partition, offset: message.offset });
            out.set(row.finding_id, f);
          }
          if (BigInt(message.offset) + 1n >= high.get(partition)!) pending.delete(partition);
          if (pending.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}

/** Evaluation events per finding id in the file exporter's output (whole lines only). */
async function evaluationEvents(path: string): Promise<Map<string, number>> {
  const lines = (await readFile(path, 'utf8').catch(() => '')).split('\n');
  lines.pop();
  const counts = new Map<string, number>();
  for (const line of lines) {
    if (line.trim() === '') continue;
    const payload = JSON.parse(line) as {
      resourceLogs?: { scopeLogs?: { logRecords?: { attributes?: { key: string; value: { stringValue?: string } }[] }[] }[] }[];
    };
    for (const rl of payload.resourceLogs ?? [])
      for (const sl of rl.scopeLogs ?? [])
        for (const r of sl.logRecords ?? []) {
          const id = r.attributes?.find((a) => a.key === 'trajwatch.finding_id')?.value.stringValue;
          if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
        }
  }
  return counts;
}

/** trajwatch's active alerts in Alertmanager's API, waiting (bounded) for a coordinator alarm when `waitMs` > 0. */
async function alertmanagerAlerts(url: string, waitMs: number): Promise<DemoReport['alerts']> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const res = await fetch(`${url}/api/v2/alerts?active=true`);
    if (!res.ok) throw new Error(`stack demo: Alertmanager answered ${res.status} at ${url}/api/v2/alerts`);
    const alerts = ((await res.json()) as { labels: Record<string, string>; startsAt: string }[])
      .filter((a) => a.labels.alertname?.startsWith('Trajwatch') === true)
      .map((a) => ({ alertname: a.labels.alertname!, labels: a.labels, startsAt: a.startsAt }));
    if (alerts.some((a) => a.alertname === 'TrajwatchCoordinatorAlarm') || Date.now() >= deadline) return alerts;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** Sends the demo's runs through the stack's Collector and waits (bounded) for every run's findings on the topic and in the file. */
export async function demo(state: StackState, o: DemoOptions): Promise<DemoReport> {
  const m = mappingOf(state);
  const base = o.conversation ?? `stack-demo-${randomUUID()}`;
  const conversations = o.runs === 1 ? [base] : Array.from({ length: o.runs }, (_, i) => `${base}-${i + 1}`);
  const endpoint = `http://${m.addr('otel-collector', 'otlpHttp')}`;
  // Content as OTLP log records (the GenAI details event), as the 2026 conventions put it: the Collector's logs pipeline must carry it.
  const sending = run(process.execPath, [DEMO, '--endpoint', endpoint, '--content', 'logs', '--runs', String(o.runs), '--conversation', base], {
    timeout: 120_000,
  });
  o.onSending?.();
  await sending.catch((err: Error & { stderr?: string }) => {
    throw new Error(`stack demo: the JS demo failed: ${err.message}\n${err.stderr ?? ''}`);
  });
  const topic = m.name(NAMES.findings);
  const evaluationsFile = join(m.dir('otel-collector', '/var/lib/otelcol'), EVALUATIONS_FILE);
  const keys = new Set(conversations);
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    // Until the sink's first send the topic may not exist, or have no leader yet: read again.
    const found = await readFindingsTopic(state, topic, keys).catch((err: Error & { retriable?: boolean }) => {
      if (err.retriable !== true || Date.now() > deadline) throw err;
      return new Map<string, ArrivedFinding>();
    });
    const events = await evaluationEvents(evaluationsFile);
    for (const f of found.values()) f.evaluationEvents = events.get(f.findingId) ?? 0;
    const findings = [...found.values()].sort((a, b) => a.trajectoryKey.localeCompare(b.trajectoryKey) || a.area.localeCompare(b.area));
    const missing = conversations.filter((c) => findings.filter((f) => f.trajectoryKey === c).length < o.expectPerRun);
    const allEvents = findings.every((f) => f.evaluationEvents > 0);
    if ((missing.length === 0 && allEvents) || Date.now() > deadline) {
      const duplicates = findings.reduce((n, f) => n + f.records.length - 1, 0);
      const alerts = await alertmanagerAlerts(`http://${m.addr('alertmanager', 'web')}`, o.alarmWaitMs ?? 0);
      return { conversations, topic, findings, duplicates, missing, evaluationsFile, alerts };
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** The report as people read it. */
export function reportText(r: DemoReport): string {
  const lines = [`demo: ${r.conversations.length} run(s) sent through the Collector: ${r.conversations.join(', ')}`];
  for (const f of r.findings) {
    const at = f.records.map((x) => `partition ${x.partition} offset ${x.offset}`).join(', ');
    lines.push(
      `  ${f.trajectoryKey} ${f.area} ${f.findingId.slice(0, 15)}…: ${r.topic} ${at}; evaluation events in ${EVALUATIONS_FILE}: ${f.evaluationEvents}`,
    );
  }
  lines.push(`demo: ${r.findings.length} findings, ${r.duplicates} duplicate deliveries (at-least-once), evaluation events in ${r.evaluationsFile}`);
  for (const a of r.alerts) {
    const about = ['question', 'service', 'agent', 'instance'].flatMap((k) => (a.labels[k] === undefined ? [] : [`${k}=${a.labels[k]}`])).join(' ');
    lines.push(`demo: alert in Alertmanager: ${a.alertname} ${about} since ${a.startsAt}`);
  }
  if (r.missing.length > 0) lines.push(`demo: runs short of findings when the wait ended: ${r.missing.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
