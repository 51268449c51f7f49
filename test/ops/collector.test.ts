// A real OpenTelemetry Collector (built here by scripts/setup/otelcol/build.sh from the Go module
// proxy) runs each shipped config in collector-config/, with compose host names and ports
// rewritten to loopback ones; spans go in through the OTel JS SDK's OTLP/protobuf exporter.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors.ts';
import { decodeOtlpProto } from '../../src/ingest/otlp/proto-decode.ts';
import { quietLogCreator, kafkajsLogLevel } from '../../src/kafka/kafkajs-log.ts';
import { kafkaForTests, uniqueTopic, quietKafka } from '../helpers/kafka.ts';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';
import { freePort } from './free-port.ts';
import { BUILD_TIMEOUT_MS, type CollectorProcess, ensureCollector, renderConfig, startCollector } from './otelcol.ts';

const CONFIG_DIR = new URL('../../collector-config/', import.meta.url).pathname;
const shipped = (name: string) => readFileSync(join(CONFIG_DIR, name, 'config.yaml'), 'utf8');

/** Loopback ports for the Collector's own listeners (OTLP gRPC and HTTP, its metrics). */
async function listenerReplacements(): Promise<{ httpPort: number; replacements: Record<string, string> }> {
  const [grpcPort, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  return {
    httpPort,
    replacements: {
      '0.0.0.0:4317': `127.0.0.1:${grpcPort}`,
      '0.0.0.0:4318': `127.0.0.1:${httpPort}`,
      'host: 0.0.0.0': 'host: 127.0.0.1',
      'port: 8888': `port: ${metricsPort}`,
    },
  };
}

/** A two-step agent run (a chat, a failing tool) exported as OTLP/protobuf to `url`; returns its trace id. */
async function sendAgentRun(url: string, conversationId: string): Promise<string> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'collector-e2e' }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracer = provider.getTracer('collector-e2e');
  const root = tracer.startSpan('invoke_agent planner', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', 'gen_ai.conversation.id': conversationId },
  });
  const ctx = trace.setSpan(context.active(), root);
  tracer.startSpan('chat gpt-4o', { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.conversation.id': conversationId } }, ctx).end();
  const tool = tracer.startSpan(
    'execute_tool lookup',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.call.arguments': '{"order":42}',
        'gen_ai.conversation.id': conversationId,
      },
    },
    ctx,
  );
  tool.setStatus({ code: SpanStatusCode.ERROR, message: 'order service unavailable' });
  tool.end();
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
  return root.spanContext().traceId;
}

let bin: string;
beforeAll(async () => {
  bin = await ensureCollector();
}, BUILD_TIMEOUT_MS + 60_000);

describe('collector-config/to-trajwatch through a real Collector', () => {
  let serve: ServeProcess;
  let collector: CollectorProcess | undefined;
  let httpPort: number;

  beforeAll(async () => {
    serve = await startServe();
    const listeners = await listenerReplacements();
    httpPort = listeners.httpPort;
    const config = renderConfig(shipped('to-trajwatch'), { ...listeners.replacements, 'http://trajwatch:4318': serve.url });
    collector = await startCollector(bin, config);
  }, 60_000);

  afterAll(async () => {
    await collector?.stop();
    await serve?.stop();
  });

  it('delivers an SDK-exported trajectory to trajwatch, steps and failure intact', async () => {
    const traceId = await sendAgentRun(`http://127.0.0.1:${httpPort}/v1/traces`, 'conv-collector-1');
    const rows = await waitForLines<{ traceIds: string[]; steps: { kind: string; toolName?: string; error?: unknown }[] }>(
      join(serve.dataDir, 'trajectories.jsonl'),
      (r) => r.some((t) => t.traceIds.includes(traceId)),
      30_000,
    );
    const t = rows.find((r) => r.traceIds.includes(traceId))!;
    expect(t.steps.map((s) => s.kind).sort()).toEqual(['agent', 'llm', 'tool']);
    const tool = t.steps.find((s) => s.kind === 'tool')!;
    expect(tool.toolName).toBe('lookup');
    expect(tool.error).toBeDefined();
    // It came through the Collector: trajwatch counted a protobuf request (the Collector's encoding).
    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    expect(metrics).toMatch(/trajwatch_spans_received_total\{transport="http",content_type="application\/x-protobuf"\} 3/);
  });
});

describe('collector-config/to-kafka through a real Collector and a real Kafka broker', () => {
  let brokers: string[] | undefined;
  let collector: CollectorProcess | undefined;
  let httpPort: number;
  // A topic of this run's own, so earlier runs' records do not mix in; the shipped name is otlp_spans.
  const topic = uniqueTopic('otlp_spans');

  beforeAll(async () => {
    brokers = await kafkaForTests();
    if (brokers === undefined) throw new Error('no Kafka broker for this test (see test/helpers/kafka.ts for why)');
    const listeners = await listenerReplacements();
    httpPort = listeners.httpPort;
    const admin = new Kafka({
      clientId: 'trajwatch-test-admin',
      brokers,
      logLevel: kafkajsLogLevel('nothing'),
      logCreator: quietLogCreator('nothing'),
    }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const config = renderConfig(shipped('to-kafka'), {
      ...listeners.replacements,
      'brokers: [kafka:9092]': `brokers: [${brokers.join(', ')}]`,
      'topic: otlp_spans': `topic: ${topic}`,
      // The evaluation events' own receiver and file (the stack's path back in; unused here).
      '0.0.0.0:4320': `127.0.0.1:${await freePort()}`,
      '/var/lib/otelcol/evaluations.jsonl': join(mkdtempSync(join(tmpdir(), 'trajwatch-otelcol-evals-')), 'evaluations.jsonl'),
    });
    collector = await startCollector(bin, config);
  }, 240_000);

  afterAll(async () => {
    await collector?.stop();
  });

  it('writes OTLP protobuf records keyed by trace id that trajwatch decodes', async () => {
    const traceId = await sendAgentRun(`http://127.0.0.1:${httpPort}/v1/traces`, 'conv-collector-2');
    const kafka = quietKafka('trajwatch-test-consumer', brokers);
    const consumer = kafka.consumer({ groupId: uniqueTopic('trajwatch-otelcol-test'), sessionTimeout: 10_000 });
    const records: { key: Buffer | null; value: Buffer | null; partition: number }[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      // The batch processor may split the three spans over several records; wait for all three.
      const spanCount = () => records.reduce((n, r) => n + spansIn(r.value).length, 0);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${spanCount()} of 3 spans arrived on ${topic} within 45 s`)), 45_000);
        void consumer.run({
          eachMessage: async ({ message, partition }) => {
            records.push({ key: message.key, value: message.value, partition });
            if (spanCount() >= 3) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    const spans = records.flatMap((r) => spansIn(r.value));
    expect(spans.map((s) => s.name).sort()).toEqual(['chat gpt-4o', 'execute_tool lookup', 'invoke_agent planner']);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    // partition_traces_by_id: the record key is the trace id, so every record went to one partition.
    for (const r of records) expect(r.key?.toString()).toBe(traceId); // the hex trace id as text
    expect(new Set(records.map((r) => r.partition)).size).toBe(1);
    const tool = spans.find((s) => s.name === 'execute_tool lookup')!;
    expect(tool.status.code).toBe(2);
  });
});

function spansIn(value: Buffer | null) {
  const decoded = decodeOtlpProto(value ?? new Uint8Array());
  if (decoded instanceof DecodeError) throw decoded;
  expect(decoded.rejected).toEqual([]);
  return decoded.spans;
}
