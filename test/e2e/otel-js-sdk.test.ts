import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpHttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpHttpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe, waitForLines } from '../helpers/serve.ts';

interface StepRow {
  id: string;
  kind: string;
  toolName?: string;
  toolCallId?: string;
  args?: { raw: string; parsed?: unknown };
  result?: string;
  error?: { source: string; type?: string; message?: string };
}
interface TrajectoryRow {
  key: string;
  complete: boolean;
  traceIds: string[];
  steps: StepRow[];
}

/** A small tool-using agent loop, instrumented by hand with GenAI semantic conventions. */
async function runAgent(exporter: SpanExporter, conversationId: string): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'e2e-agent' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('e2e');
  const root = tracer.startSpan('invoke_agent researcher', {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'researcher',
      'gen_ai.conversation.id': conversationId,
    },
  });
  const ctx = trace.setSpan(context.active(), root);
  const chat = tracer.startSpan(
    'chat gpt-4o',
    { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.conversation.id': conversationId } },
    ctx,
  );
  chat.end();
  const search = tracer.startSpan(
    'execute_tool web_search',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'web_search',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.call.arguments': '{"query": "otel", "limit": 3}',
        'gen_ai.tool.call.result': '["a","b"]',
        'gen_ai.conversation.id': conversationId,
      },
    },
    ctx,
  );
  search.end();
  const send = tracer.startSpan(
    'execute_tool send_email',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'send_email',
        'gen_ai.tool.call.id': 'call_2',
        'gen_ai.tool.call.arguments': '{"to":"a@example.com"}',
        'gen_ai.conversation.id': conversationId,
        'error.type': 'SmtpError',
      },
    },
    ctx,
  );
  send.recordException(new Error('mailbox unavailable'));
  send.setStatus({ code: SpanStatusCode.ERROR, message: 'mailbox unavailable' });
  send.end();
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
}

describe('real OTel JS SDK exporters into a running serve', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe();
  });
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  const cases: [string, (url: string) => SpanExporter][] = [
    ['OTLP/HTTP JSON', (url) => new OtlpHttpJsonExporter({ url: `${url}/v1/traces` })],
    ['OTLP/HTTP protobuf', (url) => new OtlpHttpProtoExporter({ url: `${url}/v1/traces` })],
    ['OTLP/HTTP protobuf, gzip', (url) => new OtlpHttpProtoExporter({ url: `${url}/v1/traces`, compression: 'gzip' as never })],
  ];

  for (const [name, makeExporter] of cases) {
    it(`assembles the agent's trajectory sent over ${name}`, async () => {
      const conversationId = `conv-${name.replace(/\W+/g, '-')}`;
      await runAgent(makeExporter(serve.url), conversationId);
      const rows = await waitForLines<TrajectoryRow>(join(serve.dataDir, 'trajectories.jsonl'), (r) => r.some((t) => t.key === conversationId));
      const t = rows.find((r) => r.key === conversationId)!;
      expect(t.complete).toBe(true);
      expect(t.traceIds).toHaveLength(1);
      // The SDK's clock can give the root and its first child the same start time, so the
      // order between those two is by end time; the kinds are what matters here.
      expect(t.steps.map((s) => s.kind).sort()).toEqual(['agent', 'llm', 'tool', 'tool']);
      const search = t.steps.find((s) => s.toolName === 'web_search');
      const send = t.steps.find((s) => s.toolName === 'send_email');
      expect(search).toMatchObject({
        toolName: 'web_search',
        toolCallId: 'call_1',
        args: { raw: '{"query": "otel", "limit": 3}', parsed: { query: 'otel', limit: 3 } },
        result: '["a","b"]',
      });
      expect(search!.error).toBeUndefined();
      expect(send).toMatchObject({ toolName: 'send_email', toolCallId: 'call_2' });
      expect(send!.error).toBeDefined();
      expect(send!.error!.type).toBe('SmtpError');
      expect(send!.result).toBeUndefined();
    });
  }
});
