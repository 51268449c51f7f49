import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * Sends, through the real OTel JS SDK and its OTLP/HTTP protobuf exporter, one agent run per
 * conversation id that the inline checks flag: a failing tool (error-output) and the same
 * search twice (exact tool repetition). Returns once the exporter has delivered.
 */
export async function sendFlaggedAgentRuns(endpoint: string, conversationIds: readonly string[]): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'kafka-e2e-agent' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { maxQueueSize: 10_000 })],
  });
  const tracer = provider.getTracer('e2e');
  for (const conversationId of conversationIds) {
    const common = { 'gen_ai.conversation.id': conversationId };
    const root = tracer.startSpan('invoke_agent planner', {
      attributes: { ...common, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
    });
    const ctx = trace.setSpan(context.active(), root);
    for (let i = 0; i < 2; i++) {
      tracer
        .startSpan(
          'execute_tool web_search',
          {
            attributes: {
              ...common,
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': 'web_search',
              'gen_ai.tool.call.arguments': i === 0 ? '{"q":"kafka","n":1}' : '{ "n": 1, "q": "kafka" }',
              'gen_ai.tool.call.result': '["result"]',
            },
          },
          ctx,
        )
        .end();
    }
    const fetchSpan = tracer.startSpan(
      'execute_tool fetch_page',
      {
        attributes: {
          ...common,
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'fetch_page',
          'gen_ai.tool.call.arguments': '{"url":"https://example.com"}',
        },
      },
      ctx,
    );
    fetchSpan.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset by peer' });
    fetchSpan.end();
    root.end();
  }
  await provider.forceFlush();
  await provider.shutdown();
}
