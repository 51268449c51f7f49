/**
 * The Vercel AI SDK (`ai` 6) running a tool-using agent loop (`generateText` with tools and
 * `experimental_telemetry`), exported by the OpenTelemetry Node SDK over OTLP/HTTP protobuf.
 * The model is the SDK's own `MockLanguageModelV3` (`ai/test`): it stands in for a provider,
 * which cannot be reached here; everything between it and trajwatch is the real SDK.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ClientTarget, startClientTarget, toolSteps } from './harness.ts';

const usage = {
  inputTokens: { total: 120, noCache: 120, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: undefined },
};

function toolCall(toolCallId: string, toolName: string, input: unknown) {
  return {
    content: [{ type: 'tool-call' as const, toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** The scripted model: look up the weather, try to book, then answer. */
const model = new MockLanguageModelV3({
  modelId: 'mock-gpt',
  doGenerate: [
    toolCall('call_weather', 'get_weather', { city: 'Paris' }),
    toolCall('call_book', 'book_table', { restaurant: 'Chez Nous', time: '19:30', people: 2 }),
    {
      content: [{ type: 'text' as const, text: 'It is sunny in Paris, but Chez Nous is full tonight.' }],
      finishReason: { unified: 'stop' as const, raw: 'stop' },
      usage,
      warnings: [],
    },
  ],
});

let target: ClientTarget;
let sdk: NodeSDK;
let processor: tracing.BatchSpanProcessor;
beforeAll(async () => {
  target = await startClientTarget();
  processor = new tracing.BatchSpanProcessor(new OTLPTraceExporter({ url: `${target.httpUrl}/v1/traces` }));
  sdk = new NodeSDK({ resource: resourceFromAttributes({ 'service.name': 'vercel-ai-agent' }), spanProcessors: [processor] });
  sdk.start();
});
afterAll(async () => {
  await sdk.shutdown();
  await target.stop();
});

describe('Vercel AI SDK tool loop with telemetry on, into a running serve', () => {
  it("assembles generateText's steps: the tool calls, their args, result and thrown error", async () => {
    const sessionId = 'vercel-ai-session-1';
    const result = await generateText({
      model,
      prompt: 'What is the weather in Paris, and book me a table at Chez Nous at 19:30 for 2.',
      tools: {
        get_weather: tool({
          description: 'Current weather for a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, condition: 'sunny', celsius: 21 }),
        }),
        book_table: tool({
          description: 'Book a restaurant table',
          inputSchema: z.object({ restaurant: z.string(), time: z.string(), people: z.number() }),
          execute: async (): Promise<{ bookingId: string }> => {
            throw new Error('no tables available at 19:30');
          },
        }),
      },
      stopWhen: stepCountIs(5),
      experimental_telemetry: { isEnabled: true, functionId: 'dinner-agent', metadata: { sessionId } },
    });
    expect(result.text).toMatch(/Chez Nous is full/);
    await processor.forceFlush();

    const t = await target.trajectory(sessionId);
    expect(t.complete).toBe(true);
    expect(t.steps.every((s) => s.convention === 'vercel-ai' && s.sessionId === sessionId)).toBe(true);
    expect(t.steps.filter((s) => s.kind === 'agent').map((s) => s.name)).toEqual(['ai.generateText']);
    expect(t.steps.filter((s) => s.kind === 'llm')).toHaveLength(3);
    expect(t.steps.filter((s) => s.kind === 'llm').every((s) => s.model === 'mock-gpt')).toBe(true);
    expect(t.steps.every((s) => s.agentName === 'dinner-agent')).toBe(true);

    const [weather, booking, ...rest] = toolSteps(t);
    expect(rest).toEqual([]);
    expect(weather).toMatchObject({ name: 'ai.toolCall', toolName: 'get_weather', toolCallId: 'call_weather' });
    expect(weather!.args?.parsed).toEqual({ city: 'Paris' });
    expect(JSON.parse(weather!.result!)).toEqual({ city: 'Paris', condition: 'sunny', celsius: 21 });
    expect(weather!.error).toBeUndefined();
    expect(booking).toMatchObject({ toolName: 'book_table', toolCallId: 'call_book' });
    expect(booking!.args?.parsed).toEqual({ restaurant: 'Chez Nous', time: '19:30', people: 2 });
    expect(booking!.error).toMatchObject({ source: 'exception', message: 'no tables available at 19:30' });
    expect(booking!.result).toBeUndefined();
  });
});
