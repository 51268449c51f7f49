/**
 * The Vercel AI SDK (`ai` 6): a `generateText` tool loop with `experimental_telemetry` on,
 * the model a real `@ai-sdk/openai` Chat Completions model (`createOpenAI({ baseURL }).chat`)
 * pointed at the stand-in, exported by NodeSDK over OTLP/HTTP protobuf. The SDK keeps no
 * conversation: the app carries turn 1's `response.messages` into turn 2, as the SDK's docs
 * show, and names the session with `experimental_telemetry.metadata.sessionId`. Run with
 * `generateText` and, as a second row, `streamText`.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { generateText, type ModelMessage, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { TURN_1, TURN_2 } from '../stand-in-model.ts';
import type { ScenarioOptions, ScenarioRun } from './scenario.ts';
import { getWeather, lookupOrder, ORDER_DESCRIPTION, WEATHER_DESCRIPTION } from './tools.ts';

/** `generate` is `generateText`; `stream` is `streamText` (the model streaming too). */
export async function runVercelAi(opts: ScenarioOptions, mode: 'generate' | 'stream' = 'generate'): Promise<ScenarioRun> {
  const processor = new tracing.BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.otlpUrl}/v1/traces` }));
  const sdk = new NodeSDK({ resource: resourceFromAttributes({ 'service.name': 'vercel-ai-agent' }), spanProcessors: [processor] });
  sdk.start();
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
      const call = {
        model,
        system: 'You answer weather and order questions with your tools.',
        messages,
        tools,
        stopWhen: stepCountIs(8),
        experimental_telemetry: { isEnabled: true, functionId: 'support-agent', metadata: { sessionId: opts.sessionId } },
      };
      if (mode === 'generate') {
        const result = await generateText(call);
        messages.push(...result.response.messages);
        answers.push(result.text);
      } else {
        const result = streamText(call);
        answers.push(await result.text);
        messages.push(...(await result.response).messages);
      }
      await processor.forceFlush();
    }
    return { answers };
  } finally {
    await sdk.shutdown();
  }
}
