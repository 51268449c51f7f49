/**
 * The Vercel AI SDK 7 (`ai` 7, installed here as `ai-v7` beside `ai` 6) with its
 * OpenTelemetry integration `@ai-sdk/otel`, which emits OTel GenAI semantic-convention spans
 * (`invoke_agent`, `chat`, `execute_tool`) instead of 6's `ai.*` spans. AI SDK 7 has no
 * session option: the documented `enrichSpan` hook puts the app's `runtimeContext.sessionId`
 * on every span as `gen_ai.conversation.id`. Exported by NodeSDK over OTLP/HTTP JSON; the
 * model is the SDK's own `MockLanguageModelV4` (`ai/test`), standing in for a provider.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { OpenTelemetry } from '@ai-sdk/otel';
import { generateText, registerTelemetry, stepCountIs, tool } from 'ai-v7';
import { MockLanguageModelV4 } from 'ai-v7/test';
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
const model = new MockLanguageModelV4({
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
  sdk = new NodeSDK({ resource: resourceFromAttributes({ 'service.name': 'vercel-ai-7-agent' }), spanProcessors: [processor] });
  sdk.start();
  registerTelemetry(
    new OpenTelemetry({
      agentSpanName: 'functionId',
      enrichSpan: ({ runtimeContext }) => (typeof runtimeContext?.sessionId === 'string' ? { 'gen_ai.conversation.id': runtimeContext.sessionId } : undefined),
    }),
  );
});
afterAll(async () => {
  await sdk.shutdown();
  await target.stop();
});

describe('Vercel AI SDK 7 tool loop with @ai-sdk/otel, into a running serve', () => {
  it("assembles generateText's steps: the tool calls, their args, result and thrown error", async () => {
    const sessionId = 'vercel-ai-7-session-1';
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
      runtimeContext: { sessionId },
      telemetry: { isEnabled: true, functionId: 'dinner-agent', includeRuntimeContext: { sessionId: true } },
    });
    expect(result.text).toMatch(/Chez Nous is full/);
    await processor.forceFlush();

    const t = await target.trajectory(sessionId);
    expect(t.complete).toBe(true);
    expect(t.steps.every((s) => s.convention === 'genai' && s.sessionId === sessionId)).toBe(true);
    expect(t.steps.filter((s) => s.kind === 'agent').map((s) => [s.name, s.agentName])).toEqual([['invoke_agent dinner-agent', 'dinner-agent']]);
    // Each loop iteration is a `step N` span (AI SDK 7's own operation): no GenAI kind, so `other`.
    expect(
      t.steps
        .filter((s) => s.kind === 'other')
        .map((s) => s.name)
        .sort(),
    ).toEqual(['step 1', 'step 2', 'step 3']);
    expect(t.steps.filter((s) => s.kind === 'llm').map((s) => s.model)).toEqual(['mock-gpt', 'mock-gpt', 'mock-gpt']);

    const [weather, booking, ...rest] = toolSteps(t);
    expect(rest).toEqual([]);
    expect(weather).toMatchObject({ name: 'execute_tool get_weather', toolName: 'get_weather', toolCallId: 'call_weather' });
    expect(weather!.args?.parsed).toEqual({ city: 'Paris' });
    expect(JSON.parse(weather!.result!)).toEqual({ city: 'Paris', condition: 'sunny', celsius: 21 });
    expect(weather!.error).toBeUndefined();
    expect(booking).toMatchObject({ toolName: 'book_table', toolCallId: 'call_book' });
    expect(booking!.args?.parsed).toEqual({ restaurant: 'Chez Nous', time: '19:30', people: 2 });
    expect(booking!.error).toMatchObject({ source: 'exception', message: 'no tables available at 19:30' });
    expect(booking!.result).toBeUndefined();
  });
});
