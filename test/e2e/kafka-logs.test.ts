/**
 * Content events through Kafka, all real parts: the OTel JS SDK sends spans without content and
 * the tool calls' arguments and results as log events to a real Collector
 * (test/fixtures/otelcol/kafka-logs.yaml), whose kafka exporter writes traces and logs to two
 * topics keyed by trace id; two `serve --source kafka` members (logs read, sessions
 * repartitioned) join them; the same Collector sends the same data over OTLP/HTTP to a reference
 * `serve`. The members' session trajectories carry the args and results, and their findings are
 * the reference's.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../ops/free-port.ts';
import { BUILD_TIMEOUT_MS, type CollectorProcess, ensureCollector, renderConfig, startCollector } from '../ops/otelcol.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { groupSettled, metric, readFindings, readTrajectories, startAll, waitFor } from '../helpers/serve-group.ts';

const brokers = await kafkaForTests();
const FIXTURE = new URL('../fixtures/otelcol/kafka-logs.yaml', import.meta.url).pathname;
const PARTITIONS = 3;
const SESSIONS = Array.from({ length: 8 }, (_, i) => `kafka-logs-${i}`);
/** Logs and spans reach the assembler apart (two exporters, two topics): the quiet period covers the gap. */
const ASSEMBLER = { quietPeriodMs: 3_000 };

interface StepRow {
  kind: string;
  toolName?: string;
  args?: { parsed?: unknown };
  result?: string;
}

/**
 * One agent run: spans carry only the operation, tool name and call id; the user message, the
 * model's choice and each tool call's input and result go as log events in the spans' context
 * (Strands' default shape), two identical `get_weather` calls (a repetition).
 */
async function runAgent(collectorUrl: string, sessionId: string): Promise<void> {
  const resource = resourceFromAttributes({ 'service.name': 'kafka-logs-agent' });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${collectorUrl}/v1/traces` }))],
  });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${collectorUrl}/v1/logs` }) })],
  });
  const tracer = tracerProvider.getTracer('kafka-logs');
  const logger = loggerProvider.getLogger('kafka-logs');
  const session = { 'gen_ai.conversation.id': sessionId };
  const root = tracer.startSpan('invoke_agent forecaster', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'forecaster', ...session },
  });
  const rootCtx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan('chat', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm-1', ...session } }, rootCtx);
  const chatCtx = trace.setSpan(rootCtx, chat);
  logger.emit({ eventName: 'gen_ai.user.message', context: chatCtx, body: { content: `Weather in Paris? (${sessionId})` } });
  logger.emit({
    eventName: 'gen_ai.choice',
    context: chatCtx,
    body: {
      index: 0,
      finish_reason: 'tool_calls',
      message: { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    },
  });
  chat.end();
  for (const callId of ['call_1', 'call_2']) {
    const tool = tracer.startSpan(
      'execute_tool get_weather',
      { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': callId, ...session } },
      rootCtx,
    );
    const toolCtx = trace.setSpan(rootCtx, tool);
    logger.emit({ eventName: 'gen_ai.tool.message', context: toolCtx, body: { role: 'tool', content: '{"city": "Paris"}', id: callId } });
    logger.emit({ eventName: 'gen_ai.choice', context: toolCtx, body: { message: '18C, sunny', id: callId } });
    tool.end();
  }
  root.end();
  await loggerProvider.forceFlush();
  await tracerProvider.forceFlush();
  await Promise.all([loggerProvider.shutdown(), tracerProvider.shutdown()]);
}

/** The finding ids of the local findings logs in `dirs` (none yet: empty). */
async function findingIds(dirs: string[]): Promise<Set<string>> {
  return (await readFindings(dirs)).ids;
}

/** The distinct tool-repetition findings in `dirs`, by finding id. */
async function repetitions(dirs: string[]): Promise<number> {
  const ids = new Set<string>();
  for (const dir of dirs) {
    const text = await readFile(join(dir, 'findings.jsonl'), 'utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as { finding_id?: string; analyst_id?: string };
      if (row.analyst_id === 'tool-repetition' && row.finding_id !== undefined) ids.add(row.finding_id);
    }
  }
  return ids.size;
}

describe.runIf(brokers !== undefined)('content events as OTLP logs through a real Collector and Kafka, joined by two members', () => {
  const spansTopic = uniqueTopic('kafka-logs.spans');
  const logsTopic = uniqueTopic('kafka-logs.logs');
  const groupId = uniqueTopic('kafka-logs-group');
  let collector: CollectorProcess | undefined;
  let reference: ServeProcess | undefined;
  let members: ServeProcess[] = [];
  let collectorUrl: string;

  beforeAll(async () => {
    const bin = await ensureCollector();
    const admin = quietKafka('kafka-logs-test', brokers).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [spansTopic, logsTopic].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })),
      waitForLeaders: true,
    });
    await admin.disconnect();
    reference = await startServe({ assembler: ASSEMBLER });
    const kafka = {
      brokers,
      topic: spansTopic,
      logs: { enabled: true, topic: logsTopic },
      groupId,
      deadLetterTopic: `${spansTopic}.dlq`,
      commitIntervalMs: 200,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 10_000,
    };
    members = await startAll([1, 2].map(() => startServe({ assembler: ASSEMBLER, source: { http: false, kafka } }, ['--source', 'kafka'])));
    if (!(await waitFor(() => groupSettled(members, PARTITIONS), 90_000))) {
      throw new Error(`the group did not settle:\n${members.map((m) => m.output()).join('\n---\n')}`);
    }
    const httpPort = await freePort();
    collectorUrl = `http://127.0.0.1:${httpPort}`;
    collector = await startCollector(
      bin,
      renderConfig(await readFile(FIXTURE, 'utf8'), {
        __HTTP_PORT__: String(httpPort),
        __BROKERS__: brokers!.join(', '),
        __SPANS_TOPIC__: spansTopic,
        __LOGS_TOPIC__: logsTopic,
        __REFERENCE_URL__: reference.url,
      }),
    );
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await collector?.stop();
    const codes = await Promise.all([...members, ...(reference === undefined ? [] : [reference])].map((m) => m.stop()));
    expect(codes.every((c) => c === 0)).toBe(true);
  });

  it('each member holds partition p of both topics', () => {
    for (const member of members) {
      const lines = member
        .output()
        .split('\n')
        .filter((l) => l.includes('"partitions assigned"') && l.includes(logsTopic));
      expect(lines.length).toBeGreaterThan(0);
      expect(member.output()).not.toContain('spans and logs partitions assigned apart');
    }
  });

  it('the session trajectories carry the tool args and results from the log events, and the findings are the HTTP path’s', async () => {
    for (const sessionId of SESSIONS) await runAgent(collectorUrl, sessionId);
    const dirs = members.map((m) => m.dataDir);
    const joined = async () => {
      const rows = await readTrajectories(dirs);
      return SESSIONS.every((s) => rows.some((t) => t.key === s && (t.steps as StepRow[]).some((step) => step.result === '18C, sunny')));
    };
    if (!(await waitFor(joined, 90_000))) {
      const keys = (await readTrajectories(dirs)).map((t) => t.key);
      throw new Error(`not every session was joined within 90 s (trajectories: ${keys.join(', ')}):\n${members.map((m) => m.output()).join('\n---\n')}`);
    }
    const rows = await readTrajectories(dirs);
    // Both members wrote sessions: the partitions (and so the traces) were shared.
    const perMember = await Promise.all(members.map(async (m) => (await readTrajectories([m.dataDir])).filter((t) => SESSIONS.includes(t.key)).length));
    for (const sessionId of SESSIONS) {
      const t = rows.filter((r) => r.key === sessionId).at(-1)!;
      const tools = (t.steps as StepRow[]).filter((s) => s.kind === 'tool');
      expect(tools).toHaveLength(2);
      for (const tool of tools) {
        expect(tool.args?.parsed).toEqual({ city: 'Paris' });
        expect(tool.result).toBe('18C, sunny');
      }
      expect(JSON.parse((t.steps as StepRow[]).find((s) => s.kind === 'llm')!.result!)).toMatchObject({ role: 'assistant' });
    }

    const expected = await findingIds([reference!.dataDir]);
    const settled = await waitFor(async () => {
      const found = await findingIds(dirs);
      return expected.size > 0 && [...expected].every((id) => found.has(id));
    }, 60_000);
    const found = await findingIds(dirs);
    process.stdout.write(
      `[kafka-logs] sessions ${SESSIONS.length}, trajectories per member ${JSON.stringify(perMember)}, findings reference ${expected.size}, members ${found.size}\n`,
    );
    expect(settled).toBe(true);
    expect([...found].sort()).toEqual([...expected].sort());
    // Six log records per run (user message, choice, and a message and a choice per tool call); a replay after a rebalance may count some twice.
    const logRecords = (await Promise.all(members.map((m) => metric(m, 'trajwatch_kafka_source_log_records_total')))).reduce<number>((a, b) => a + (b ?? 0), 0);
    expect(logRecords).toBeGreaterThanOrEqual(6 * SESSIONS.length);
    // The repetition is seen only in the joined args: every session has one.
    expect(await repetitions(dirs)).toBe(SESSIONS.length);
  }, 240_000);
});
