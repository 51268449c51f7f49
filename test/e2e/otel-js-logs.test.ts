/**
 * GenAI content that arrives only as OTLP log records: the real OpenTelemetry JS logs SDK
 * (`@opentelemetry/sdk-logs` with its OTLP/HTTP JSON, OTLP/HTTP protobuf and OTLP/gRPC
 * exporters) emits the tool calls' arguments and results, and the model's output, as log
 * events correlated with the spans, while the spans themselves carry no content. A running
 * `serve` joins them: the trajectory carries the args (parsed) and results, and the two
 * identical calls are counted as a repetition.
 */
import { join } from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { OTLPLogExporter as OtlpGrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as OtlpHttpJsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OtlpHttpProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

interface StepRow {
  id: string;
  kind: string;
  toolName?: string;
  toolCallId?: string;
  args?: { raw: string; parsed?: unknown; digest: string };
  result?: string;
}
interface TrajectoryRow {
  key: string;
  complete: boolean;
  incompleteReasons: string[];
  traceIds: string[];
  steps: StepRow[];
}
interface FindingRow {
  analyst_id: string;
  observation?: { tool_name?: string; count?: number; attempts?: { trace_id: string }[] };
}

/**
 * An agent with one model call and two identical `get_weather` calls. Spans carry only the
 * operation, tool name and call id (as Strands' default and OpenAI-v2 do); content goes to
 * log events emitted in each span's context, exported by a separate, batching pipeline.
 */
async function runAgent(traceUrl: string, logExporter: LogRecordExporter, sessionId: string): Promise<void> {
  const resource = resourceFromAttributes({ 'service.name': 'logs-e2e-agent' });
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: traceUrl }))] });
  const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: logExporter })] });
  const tracer = tracerProvider.getTracer('logs-e2e');
  const logger = loggerProvider.getLogger('logs-e2e');

  const root = tracer.startSpan('invoke_agent forecaster', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'forecaster', 'gen_ai.conversation.id': sessionId },
  });
  const rootCtx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan(
    'chat',
    { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm-1', 'gen_ai.conversation.id': sessionId } },
    rootCtx,
  );
  const chatCtx = trace.setSpan(rootCtx, chat);
  logger.emit({ eventName: 'gen_ai.user.message', context: chatCtx, attributes: { 'gen_ai.system': 'openai' }, body: { content: 'Weather in Paris?' } });
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
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.id': callId,
          'gen_ai.conversation.id': sessionId,
        },
      },
      rootCtx,
    );
    const toolCtx = trace.setSpan(rootCtx, tool);
    // Strands' default shape: the call's input as a tool message, its result as a choice.
    logger.emit({ eventName: 'gen_ai.tool.message', context: toolCtx, body: { role: 'tool', content: '{"city": "Paris"}', id: callId } });
    logger.emit({ eventName: 'gen_ai.choice', context: toolCtx, body: { message: '18C, sunny', id: callId } });
    tool.end();
  }
  root.end();
  // Logs first: the usual order when exporters batch independently (the span is not yet there).
  await loggerProvider.forceFlush();
  await tracerProvider.forceFlush();
  await Promise.all([loggerProvider.shutdown(), tracerProvider.shutdown()]);
}

describe('content only in OTLP log records, from the real OTel JS logs SDK into a running serve', () => {
  let serve: ServeProcess;
  let grpcAddress: string;
  beforeAll(async () => {
    serve = await startServe();
    // The gRPC line follows the HTTP one that startServe waits for.
    for (let i = 0; i < 200 && !/otlp-grpc listening on \S+/.test(serve.output()); i++) await new Promise((r) => setTimeout(r, 25));
    grpcAddress = /otlp-grpc listening on (\S+)/.exec(serve.output())![1]!;
  });
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  const cases: [string, () => LogRecordExporter][] = [
    ['OTLP/HTTP JSON', () => new OtlpHttpJsonLogExporter({ url: `${serve.url}/v1/logs` })],
    ['OTLP/HTTP protobuf', () => new OtlpHttpProtoLogExporter({ url: `${serve.url}/v1/logs` })],
    ['OTLP/gRPC', () => new OtlpGrpcLogExporter({ url: `http://${grpcAddress}` })],
  ];

  for (const [name, makeExporter] of cases) {
    it(`joins tool args, results and the model output sent over ${name}`, async () => {
      const sessionId = `logs-${name.replace(/\W+/g, '-')}`;
      await runAgent(`${serve.url}/v1/traces`, makeExporter(), sessionId);
      const rows = await waitForLines<TrajectoryRow>(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.some((t) => t.key === sessionId));
      const t = rows.find((r) => r.key === sessionId)!;
      expect(t.complete).toBe(true);
      const tools = t.steps.filter((s) => s.kind === 'tool');
      expect(tools).toHaveLength(2);
      for (const tool of tools) {
        expect(tool.args?.parsed).toEqual({ city: 'Paris' });
        expect(tool.result).toBe('18C, sunny');
      }
      expect(tools[0]!.args!.digest).toBe(tools[1]!.args!.digest);
      const chat = t.steps.find((s) => s.kind === 'llm')!;
      expect(JSON.parse(chat.result!)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1' }] });

      const findings = await waitForLines<FindingRow>(join(serve.dataDir, 'findings.jsonl'), (r) =>
        r.some((f) => f.analyst_id === 'tool-repetition' && t.traceIds.includes(f.observation?.attempts?.[0]?.trace_id ?? '')),
      );
      const repetition = findings.find((f) => f.analyst_id === 'tool-repetition' && t.traceIds.includes(f.observation?.attempts?.[0]?.trace_id ?? ''))!;
      expect(repetition.observation).toMatchObject({ tool_name: 'get_weather', count: 2 });
    });
  }

  it('counts what became of the records in trajwatch_logs_total', async () => {
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    const joined = /trajwatch_logs_total\{outcome="joined"\} (\d+)/.exec(text);
    expect(Number(joined?.[1])).toBe(3 * 6);
    expect(text).toMatch(/trajwatch_log_records_received_total\{transport="grpc",content_type="application\/grpc"\} 6/);
  });
});
