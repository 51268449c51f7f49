/**
 * OpenInference (Arize) JS: `@arizeai/openinference-instrumentation-openai` around the real
 * `openai` client, with the agent and its tools traced by `@arizeai/openinference-core`
 * helpers and the session set by `setSession`, exported by NodeSDK over OTLP/gRPC.
 * A local HTTP server stands in for the OpenAI API (which cannot be reached here): it answers
 * `POST /v1/chat/completions` with scripted tool calls, then a final answer.
 */
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { setSession, traceAgent, traceTool } from '@arizeai/openinference-core';
import { SemanticConventions } from '@arizeai/openinference-semantic-conventions';
import { context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientTarget, startClientTarget, toolSteps } from './harness.ts';

/** What the stand-in model asks for, by how many tool results the conversation already has. */
const SCRIPT = [
  { id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris"}' },
  { id: 'call_book', name: 'book_table', arguments: '{"restaurant":"Chez Nous","time":"19:30"}' },
];

function completion(body: { model: string; messages: { role: string }[] }) {
  const toolResults = body.messages.filter((m) => m.role === 'tool').length;
  const next = SCRIPT[toolResults];
  const message =
    next === undefined
      ? { role: 'assistant', content: 'Sunny in Paris; Chez Nous is full tonight.' }
      : { role: 'assistant', content: null, tool_calls: [{ id: next.id, type: 'function', function: { name: next.name, arguments: next.arguments } }] };
  return {
    id: `chatcmpl-${toolResults}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: next === undefined ? 'stop' : 'tool_calls', logprobs: null }],
    usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
  };
}

function startStandIn(): Promise<Server> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(JSON.parse(text))));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const TOOLS = [
  { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  {
    type: 'function' as const,
    function: { name: 'book_table', parameters: { type: 'object', properties: { restaurant: { type: 'string' }, time: { type: 'string' } } } },
  },
];

// The app's tools, traced as OpenInference TOOL spans.
const getWeather = traceTool(async (args: { city: string }) => ({ city: args.city, condition: 'sunny' }), {
  name: 'get_weather',
  attributes: { [SemanticConventions.TOOL_NAME]: 'get_weather' },
});
const bookTable = traceTool(
  async (_args: { restaurant: string; time: string }): Promise<{ bookingId: string }> => {
    throw new Error('no tables available at 19:30');
  },
  { name: 'book_table', attributes: { [SemanticConventions.TOOL_NAME]: 'book_table' } },
);
const TOOL_FUNCTIONS: Record<string, (args: never) => Promise<unknown>> = { get_weather: getWeather, book_table: bookTable };

let target: ClientTarget;
let standIn: Server;
let sdk: NodeSDK;
let processor: tracing.BatchSpanProcessor;
beforeAll(async () => {
  target = await startClientTarget();
  standIn = await startStandIn();
  const instrumentation = new OpenAIInstrumentation();
  processor = new tracing.BatchSpanProcessor(new OTLPTraceExporter({ url: target.grpcUrl }));
  sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': 'openinference-agent' }),
    spanProcessors: [processor],
    instrumentations: [instrumentation],
  });
  sdk.start();
  // ESM imports bypass require hooks: OpenInference documents patching the module by hand.
  instrumentation.manuallyInstrument(OpenAI);
});
afterAll(async () => {
  await sdk.shutdown();
  standIn.close();
  await target.stop();
});

describe('OpenInference instrumentation of the openai client, into a running serve', () => {
  it('assembles the LLM, agent and tool steps with args, result, thrown error and session', async () => {
    const sessionId = 'openinference-session-1';
    const client = new OpenAI({
      apiKey: 'not-a-real-key',
      baseURL: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`,
    });
    const agent = traceAgent(
      async (question: string) => {
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: question }];
        for (;;) {
          const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: TOOLS });
          const message = answer.choices[0]!.message;
          messages.push(message);
          if (message.tool_calls === undefined || message.tool_calls.length === 0) return message.content;
          for (const call of message.tool_calls) {
            if (call.type !== 'function') continue;
            const content = await TOOL_FUNCTIONS[call.function.name]!(JSON.parse(call.function.arguments) as never).then(
              (value) => JSON.stringify(value),
              (err: Error) => `Error: ${err.message}`,
            );
            messages.push({ role: 'tool', tool_call_id: call.id, content });
          }
        }
      },
      { name: 'dinner-agent', attributes: { [SemanticConventions.AGENT_NAME]: 'dinner-agent' } },
    );

    const final = await context.with(setSession(context.active(), { sessionId }), () => agent('Weather in Paris, and a table at Chez Nous at 19:30?'));
    expect(final).toBe('Sunny in Paris; Chez Nous is full tonight.');
    await processor.forceFlush();

    const t = await target.trajectory(sessionId);
    expect(t.complete).toBe(true);
    expect(t.steps.every((s) => s.convention === 'openinference' && s.sessionId === sessionId)).toBe(true);
    expect(t.steps.filter((s) => s.kind === 'agent').map((s) => s.agentName)).toEqual(['dinner-agent']);
    const llm = t.steps.filter((s) => s.kind === 'llm');
    expect(llm).toHaveLength(3);
    expect(llm.every((s) => s.model === 'gpt-4o-mini' && s.name === 'OpenAI Chat Completions')).toBe(true);

    const [weather, booking, ...rest] = toolSteps(t);
    expect(rest).toEqual([]);
    expect(weather!.toolName).toBe('get_weather');
    expect(weather!.args?.parsed).toEqual({ city: 'Paris' });
    expect(JSON.parse(weather!.result!)).toEqual({ city: 'Paris', condition: 'sunny' });
    expect(weather!.error).toBeUndefined();
    expect(booking!.toolName).toBe('book_table');
    expect(booking!.args?.parsed).toEqual({ restaurant: 'Chez Nous', time: '19:30' });
    expect(booking!.error?.message).toBe('no tables available at 19:30');
    expect(booking!.result).toBeUndefined();
  });
});
