/**
 * Mastra (`@mastra/core` agent with `@mastra/memory`), traced by Mastra's own observability
 * (`@mastra/observability`) and exported by `@mastra/otel-exporter` to a custom OTLP/HTTP
 * protobuf endpoint, the configuration Mastra's upgrade guide shows. The model is Mastra's
 * OpenAI-compatible model config (`{ id, url, apiKey }`) pointed at the stand-in.
 *
 * The session is Mastra's memory thread: both turns are `agent.generate(..., { memory:
 * { thread, resource } })` on one thread, and the exporter writes the thread id as
 * `gen_ai.conversation.id`. Run with `agent.generate` and, as a second row, `agent.stream`.
 */
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';
import { TURN_1, TURN_2 } from '../stand-in-model.ts';
import type { ScenarioOptions, ScenarioRun } from './scenario.ts';
import { getWeather, lookupOrder, ORDER_DESCRIPTION, WEATHER_DESCRIPTION } from './tools.ts';

/** `generate` answers each turn at once; `stream` is `agent.stream`, the model streaming too. */
export async function runMastra(opts: ScenarioOptions, mode: 'generate' | 'stream' = 'generate'): Promise<ScenarioRun> {
  const weather = createTool({
    id: 'get_weather',
    description: WEATHER_DESCRIPTION,
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => getWeather(input),
  });
  const order = createTool({
    id: 'lookup_order',
    description: ORDER_DESCRIPTION,
    inputSchema: z.object({ order_id: z.string() }),
    execute: async (input) => lookupOrder(input),
  });
  const agent = new Agent({
    id: 'support-agent',
    name: 'support-agent',
    instructions: 'You answer weather and order questions with your tools.',
    model: { id: 'openai/gpt-4o-mini', url: opts.modelBaseUrl, apiKey: 'not-a-real-key' },
    tools: { get_weather: weather, lookup_order: order },
    memory: new Memory({ options: { lastMessages: 20 } }),
  });
  const observability = new Observability({
    configs: {
      otel: {
        serviceName: 'mastra-agent',
        exporters: [
          new OtelExporter({
            provider: { custom: { endpoint: `${opts.otlpUrl}/v1/traces`, protocol: 'http/protobuf' } },
            // trajwatch receives traces only (docs/clients.md).
            signals: { traces: true, logs: false },
          }),
        ],
      },
    },
  });
  const mastra = new Mastra({ agents: { supportAgent: agent }, storage: new InMemoryStore(), observability, logger: false });
  const support = mastra.getAgent('supportAgent');
  const memory = { thread: opts.sessionId, resource: 'user-1' };
  const answers: string[] = [];
  for (const prompt of [TURN_1, TURN_2]) {
    if (answers.length > 0) await opts.betweenTurns?.();
    if (mode === 'generate') answers.push((await support.generate(prompt, { memory, maxSteps: 8 })).text);
    else answers.push(await (await support.stream(prompt, { memory, maxSteps: 8 })).text);
    await observability.flush();
  }
  await observability.shutdown();
  return { answers };
}
