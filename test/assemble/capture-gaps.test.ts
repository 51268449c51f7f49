/**
 * Capture gaps from real-shaped spans, read by the real mappers: what each instrumentation
 * records when an LLM output asks for tool calls, and what it leaves out of a tool span.
 */
import { describe, expect, it } from 'vitest';
import { captureGaps, hiddenToolCalls } from '../../src/assemble/capture-gaps.ts';
import { trajectoryToJson } from '../../src/assemble/trajectory-json.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { makeSpan } from '../normalize/make-span.ts';
import { makeTrajectory } from '../helpers/steps.ts';

let next = 0;
/** One span read by the real normalizer; `at` orders it (seconds). */
function read(at: number, attributes: Attributes, extra: { status?: 0 | 1 | 2 } = {}): Step {
  next++;
  return normalizeSpan(
    makeSpan({
      spanId: next.toString(16).padStart(16, '0'),
      startTimeUnixNano: BigInt(at) * 1_000_000_000n,
      endTimeUnixNano: BigInt(at) * 1_000_000_000n + 500_000_000n,
      status: { code: extra.status ?? 0 },
      attributes,
    }),
  );
}

const genaiTool = (at: number, name: string, callId?: string) =>
  read(at, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    ...(callId === undefined ? {} : { 'gen_ai.tool.call.id': callId }),
    'gen_ai.tool.call.arguments': '{"city":"Paris"}',
    'gen_ai.tool.call.result': 'sunny',
  });

describe('requested tool calls, as each convention records them', () => {
  it('GenAI output messages (AI SDK 7, Mastra): matched by tool call id', () => {
    const chat = read(1, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages':
        '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_paris_1","name":"get_weather","arguments":{"city":"Paris"}},{"type":"tool_call","id":"call_order_1","name":"lookup_order","arguments":{}}],"finish_reason":"tool_call"}]',
    });
    expect(chat.requestedToolCalls).toEqual([
      { id: 'call_paris_1', name: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_order_1', name: 'lookup_order', arguments: {} },
    ]);
    // the second call's tool span is not there; a tool span with another id does not answer it
    const steps = [chat, genaiTool(2, 'get_weather', 'call_paris_1'), genaiTool(3, 'lookup_order', 'call_other')];
    expect(captureGaps(steps)).toEqual([{ reason: 'tool-call-not-captured', spanIds: [chat.id], toolNames: ['lookup_order'] }]);
    expect(hiddenToolCalls(steps)).toEqual({ unnamed: false, names: new Set(['lookup_order']) });
    expect(captureGaps([chat, genaiTool(2, 'get_weather', 'call_paris_1'), genaiTool(3, 'lookup_order', 'call_order_1')])).toEqual([]);
  });

  it('OpenInference output messages (LangChain.js, no call id on the tool span): matched by name, in order', () => {
    const llm = read(1, {
      'openinference.span.kind': 'LLM',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments': '{"city":"Rome"}',
    });
    expect(llm.requestedToolCalls).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
    const tool = (at: number) => read(at, { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.value': 'Paris', 'output.value': 'sunny' });
    expect(captureGaps([llm, tool(2), tool(3)])).toEqual([]);
    // a tool span that started before the llm step does not answer it
    const early = tool(0);
    expect(captureGaps([early, llm, tool(2)])).toEqual([{ reason: 'tool-call-not-captured', spanIds: [llm.id], toolNames: ['get_weather'] }]);
  });

  it('OpenLLMetry completions: gen_ai.completion.{i}.tool_calls.{k}', () => {
    const llm = read(1, {
      'llm.request.type': 'chat',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.id': 'call_1',
      'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"city":"Paris"}',
    });
    expect(llm.requestedToolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const tool = read(2, {
      'traceloop.span.kind': 'tool',
      'traceloop.entity.name': 'get_weather',
      'traceloop.entity.input': '{"args": [], "kwargs": {"city": "Paris"}}',
      'traceloop.entity.output': '"sunny"',
    });
    expect(captureGaps([llm, tool])).toEqual([]);
    expect(captureGaps([llm])).toEqual([{ reason: 'tool-call-not-captured', spanIds: [llm.id], toolNames: ['get_weather'] }]);
  });

  it('AI SDK ai.response.toolCalls', () => {
    const llm = read(1, {
      'ai.operationId': 'ai.generateText.doGenerate',
      'ai.response.toolCalls': '[{"toolCallId":"call_paris_1","toolName":"get_weather","input":"{\\"city\\":\\"Paris\\"}"}]',
    });
    expect(llm.requestedToolCalls).toEqual([{ id: 'call_paris_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const tool = read(2, {
      'ai.operationId': 'ai.toolCall',
      'ai.toolCall.name': 'get_weather',
      'ai.toolCall.id': 'call_paris_1',
      'ai.toolCall.args': '{"city":"Paris"}',
      'ai.toolCall.result': '"sunny"',
    });
    expect(captureGaps([llm, tool])).toEqual([]);
  });

  it("a tool span with a placeholder call id (Google ADK's `<not specified>`) answers its request by name", () => {
    const chat = read(1, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages':
        '[{"role":"assistant","parts":[{"type":"tool_call","id":"call_paris_1","name":"get_weather","arguments":{"city":"Paris"}}],"finish_reason":"tool_call"}]',
    });
    // read as an id, the placeholder is another call's id: the request would be a false gap
    expect(captureGaps([chat, genaiTool(2, 'get_weather', '<not specified>')])).toEqual([]);
  });

  it('an llm output that asks for no tool call requests nothing', () => {
    const chat = read(1, { 'gen_ai.operation.name': 'chat', 'gen_ai.output.messages': '[{"role":"assistant","parts":[{"type":"text","content":"sunny"}]}]' });
    expect('requestedToolCalls' in chat).toBe(false);
    expect(captureGaps([chat])).toEqual([]);
  });
});

describe('what a tool span leaves out', () => {
  it('names each gap with the spans concerned; a failed tool with no result is not missing one', () => {
    const nameless = read(1, { 'openinference.span.kind': 'TOOL', 'input.value': '{}', 'output.value': 'ok' });
    const noContent = read(2, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' });
    const failed = read(3, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.arguments': '{}' }, { status: 2 });
    const steps = [nameless, noContent, failed];
    expect(captureGaps(steps)).toEqual([
      { reason: 'tool-name-not-captured', spanIds: [nameless.id] },
      { reason: 'tool-args-not-captured', spanIds: [noContent.id] },
      { reason: 'tool-result-not-captured', spanIds: [noContent.id] },
    ]);
    expect(hiddenToolCalls(steps)).toEqual({ unnamed: true, names: new Set() });
    expect(hiddenToolCalls([noContent, failed])).toEqual({ unnamed: false, names: new Set() });
  });

  it('is written on the trajectory line, and absent when there is none', () => {
    const noContent = read(1, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' });
    expect(trajectoryToJson(makeTrajectory([noContent]))['captureGaps']).toEqual([
      { reason: 'tool-args-not-captured', spanIds: [noContent.id] },
      { reason: 'tool-result-not-captured', spanIds: [noContent.id] },
    ]);
    expect('captureGaps' in trajectoryToJson(makeTrajectory([genaiTool(1, 'get_weather')]))).toBe(false);
  });
});

describe('a span in a convention trajwatch does not read', () => {
  it('is an unread-convention gap naming the hint, and a hidden call of any tool', () => {
    // Hand-built steps: the hint is the normalizer's (test/normalize/unread-convention.test.ts).
    const unread: Step = { ...read(1, { 'mlflow.spanType': 'TOOL' }), unreadConvention: 'mlflow.spanType=TOOL' };
    const second: Step = { ...read(2, { 'mlflow.spanType': 'CHAT_MODEL' }), unreadConvention: 'mlflow.spanType=CHAT_MODEL' };
    const third: Step = { ...read(3, { 'mlflow.spanType': 'TOOL' }), unreadConvention: 'mlflow.spanType=TOOL' };
    const steps = [unread, genaiTool(2, 'get_weather'), second, third];
    expect(captureGaps(steps)).toEqual([
      { reason: 'unread-convention', spanIds: [unread.id, second.id, third.id], conventions: ['mlflow.spanType=TOOL', 'mlflow.spanType=CHAT_MODEL'] },
    ]);
    // What it did could have been any tool call: claims about a tool of any name are not made.
    expect(hiddenToolCalls(steps)).toEqual({ unnamed: true, names: new Set() });
    expect(trajectoryToJson(makeTrajectory([unread]))['captureGaps']).toEqual([
      { reason: 'unread-convention', spanIds: [unread.id], conventions: ['mlflow.spanType=TOOL'] },
    ]);
    // The gap follows the hint, not the attributes: the same step without it is no gap.
    expect(captureGaps([{ ...unread, unreadConvention: undefined }])).toEqual([]);
  });
});
