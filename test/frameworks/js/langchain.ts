/**
 * LangChain.js v1: `createAgent` from `langchain` (its agent loop, built on LangGraph) with a
 * real `@langchain/openai` `ChatOpenAI` pointed at the stand-in, a LangGraph `MemorySaver`
 * checkpointer keeping the conversation, and `@arizeai/openinference-instrumentation-langchain`
 * patching `@langchain/core/callbacks/manager` by hand, as its README says (ESM). Exported by
 * NodeSDK over OTLP/HTTP protobuf.
 *
 * The session is LangGraph's `configurable.thread_id`: both turns are `agent.invoke` on one
 * thread, and the instrumentation writes the run metadata's `thread_id` as `session.id`. Run
 * with `agent.invoke` and, as a second row, `agent.stream`.
 */
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { TURN_1, TURN_2 } from '../stand-in-model.ts';
import type { ScenarioOptions, ScenarioRun } from './scenario.ts';
import { getWeather, lookupOrder, ORDER_DESCRIPTION, WEATHER_DESCRIPTION } from './tools.ts';

/**
 * `invoke` answers each turn at once; `stream` is `agent.stream` (graph state after each step).
 * The model itself does not stream: `ChatOpenAI` with `streaming: true` estimates token usage
 * with tiktoken after every call, fetching the encoding from the internet
 * (@langchain/openai chat_models/completions.js), which cannot be reached here.
 */
export async function runLangChain(opts: ScenarioOptions, mode: 'invoke' | 'stream' = 'invoke'): Promise<ScenarioRun> {
  const processor = new tracing.BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.otlpUrl}/v1/traces` }));
  const instrumentation = new LangChainInstrumentation();
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': 'langchain-agent' }),
    spanProcessors: [processor],
    instrumentations: [instrumentation],
  });
  sdk.start();
  instrumentation.manuallyInstrument(CallbackManagerModule);
  try {
    const agent = createAgent({
      name: 'support-agent',
      model: new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'not-a-real-key', configuration: { baseURL: opts.modelBaseUrl } }),
      tools: [
        tool(async (input: { city: string }) => getWeather(input), {
          name: 'get_weather',
          description: WEATHER_DESCRIPTION,
          schema: z.object({ city: z.string() }),
        }),
        tool(async (input: { order_id: string }) => lookupOrder(input), {
          name: 'lookup_order',
          description: ORDER_DESCRIPTION,
          schema: z.object({ order_id: z.string() }),
        }),
      ],
      systemPrompt: 'You answer weather and order questions with your tools.',
      checkpointer: new MemorySaver(),
    });
    const answers: string[] = [];
    for (const prompt of [TURN_1, TURN_2]) {
      if (answers.length > 0) await opts.betweenTurns?.();
      const input = { messages: [{ role: 'user', content: prompt }] };
      const config = { configurable: { thread_id: opts.sessionId } };
      let last: unknown;
      if (mode === 'invoke') last = (await agent.invoke(input, config)).messages.at(-1)?.content;
      else for await (const state of await agent.stream(input, { ...config, streamMode: 'values' })) last = state.messages.at(-1)?.content;
      answers.push(String(last ?? ''));
      await processor.forceFlush();
    }
    return { answers };
  } finally {
    instrumentation.disable();
    await sdk.shutdown();
  }
}
