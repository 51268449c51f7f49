/**
 * The Vercel AI SDK 7 (`ai` 7, installed as `ai-v7`) with its OpenTelemetry integration
 * `@ai-sdk/otel` (`registerTelemetry(new OpenTelemetry(...))`), the model a real
 * `@ai-sdk/openai` 4 Chat Completions model (installed as `ai-sdk-openai-v4`, the major that
 * speaks AI SDK 7's provider spec) pointed at the stand-in; exported by NodeSDK over OTLP/HTTP
 * protobuf. AI SDK 7 has no session option: its documented `enrichSpan` hook puts the call's
 * `runtimeContext.sessionId` on every span as `gen_ai.conversation.id`.
 */
import { OpenTelemetry } from '@ai-sdk/otel';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { generateText, type ModelMessage, registerTelemetry, stepCountIs, tool } from 'ai-v7';
import { createOpenAI } from 'ai-sdk-openai-v4';
import { z } from 'zod';
import { TURN_1, TURN_2 } from '../stand-in-model.ts';
import type { ScenarioOptions, ScenarioRun } from './scenario.ts';
import { getWeather, lookupOrder, ORDER_DESCRIPTION, WEATHER_DESCRIPTION } from './tools.ts';

export async function runVercelAi7(opts: ScenarioOptions): Promise<ScenarioRun> {
  const processor = new tracing.BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.otlpUrl}/v1/traces` }));
  const sdk = new NodeSDK({ resource: resourceFromAttributes({ 'service.name': 'vercel-ai-7-agent' }), spanProcessors: [processor] });
  sdk.start();
  registerTelemetry(
    new OpenTelemetry({
      agentSpanName: 'functionId',
      enrichSpan: ({ runtimeContext }) => (typeof runtimeContext?.sessionId === 'string' ? { 'gen_ai.conversation.id': runtimeContext.sessionId } : undefined),
    }),
  );
  try {
    const model = createOpenAI({ apiKey: 'not-a-real-key', baseURL: opts.modelBaseUrl }).chat('gpt-4o-mini');
    const tools = {
      get_weather: tool({
        description: WEATHER_DESCRIPTION,
        inputSchema: z.object({ city: z.string() }),
        execute: async (input) => getWeather(input),
      }),
      lookup_order: tool({
        description: ORDER_DESCRIPTION,
        inputSchema: z.object({ order_id: z.string() }),
        execute: async (input): Promise<string> => lookupOrder(input),
      }),
    };
    const messages: ModelMessage[] = [];
    const answers: string[] = [];
    for (const prompt of [TURN_1, TURN_2]) {
      if (answers.length > 0) await opts.betweenTurns?.();
      messages.push({ role: 'user', content: prompt });
      const result = await generateText({
        model,
        system: 'You answer weather and order questions with your tools.',
        messages,
        tools,
        stopWhen: stepCountIs(8),
        runtimeContext: { sessionId: opts.sessionId },
        telemetry: { isEnabled: true, functionId: 'support-agent', includeRuntimeContext: { sessionId: true } },
      });
      messages.push(...result.response.messages);
      answers.push(result.text);
      await processor.forceFlush();
    }
    return { answers };
  } finally {
    await sdk.shutdown();
  }
}
