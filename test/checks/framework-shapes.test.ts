import { describe, expect, it } from 'vitest';
import { compareSteps } from '../../src/assemble/step-order.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { Attributes, Span } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { exceptionEvent, makeSpan } from '../normalize/make-span.ts';

/**
 * Spans in the shapes the frameworks' own instrumentation sends (attribute names and value
 * shapes as in the captures and the instrumentations' sources), through the real normalizer
 * and checks. Each run: a tool fails with ERROR, the agent works around it and answers
 * without the error text, so the history replayed to the model holds the error and the
 * answer does not.
 */
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const ERROR = 'order service timed out after 30s';
const ANSWER = 'It is sunny in Paris. Your order ships tomorrow.';

let n = 0;
function span(name: string, parent: string | undefined, atS: number, endS: number, attributes: Attributes, extra: Partial<Span> = {}): Span {
  n++;
  const spanId = n.toString(16).padStart(16, '0');
  return makeSpan({
    traceId: TRACE,
    spanId,
    ...(parent === undefined ? { parentSpanId: undefined } : { parentSpanId: parent }),
    name,
    startTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(atS) * 1_000_000_000n,
    endTimeUnixNano: 1_700_000_000_000_000_000n + BigInt(endS) * 1_000_000_000n,
    attributes,
    ...extra,
  });
}

const failedWith = (message: string): Partial<Span> => ({
  status: { code: 2, message },
  events: [exceptionEvent({ 'exception.type': 'OrderServiceUnavailable', 'exception.message': message })],
});

function trajectoryOf(spans: Span[]): Trajectory {
  return {
    key: 'session-1',
    traceIds: [TRACE],
    revision: 1,
    complete: true,
    incompleteReasons: [],
    steps: spans.map(normalizeSpan).sort(compareSteps),
    conflicts: [],
    refusedSpans: 0,
    closedBy: 'quiet-after-root',
  };
}

const passthrough = (spans: Span[]) =>
  runChecks(trajectoryOf(spans), defaultChecksConfig)
    .l0.filter((h) => h.pattern === 'fault-passthrough')
    .map((h) => h.detail);

describe('fault-passthrough on framework-shaped spans', () => {
  it('LangGraph + OpenInference (Python): state-carrying nodes and the root state are not carriers', () => {
    const oi = (kind: string, input: unknown, output: unknown): Attributes => ({
      'openinference.span.kind': kind,
      'input.value': typeof input === 'string' ? input : JSON.stringify(input),
      'output.value': typeof output === 'string' ? output : JSON.stringify(output),
      'session.id': 'thread-1',
    });
    const human = { type: 'human', data: { content: 'Weather in Paris, and order 42?', type: 'human' } };
    const call = (id: string, name: string) => ({ type: 'ai', data: { content: '', type: 'ai', tool_calls: [{ name, args: {}, id, type: 'tool_call' }] } });
    const toolMsg = { type: 'tool', data: { content: `OrderServiceUnavailable: ${ERROR}\n Please fix your mistakes.`, type: 'tool', status: 'error' } };
    const okMsg = { type: 'tool', data: { content: 'shipped', type: 'tool' } };
    const final = { type: 'ai', data: { content: ANSWER, type: 'ai', tool_calls: [], invalid_tool_calls: [] } };
    const root = span(
      'LangGraph',
      undefined,
      0,
      30,
      oi('CHAIN', { messages: [human] }, { messages: [human, call('c1', 'lookup_order'), toolMsg, call('c2', 'lookup_order'), okMsg, final] }),
    );
    const r = root.spanId;
    const a1 = span('agent', r, 1, 2, oi('AGENT', { messages: [human] }, { messages: [call('c1', 'lookup_order')] }));
    const tools1 = span(
      'tools',
      r,
      3,
      5,
      oi('CHAIN', { __type: 'tool_call_with_context', tool_call: { name: 'lookup_order' }, state: { messages: [human] } }, { messages: [toolMsg] }),
    );
    const bad = span(
      'lookup_order',
      tools1.spanId,
      3,
      4,
      { 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup_order', 'input.value': '42' },
      failedWith(ERROR),
    );
    const a2 = span('agent', r, 6, 8, oi('AGENT', { messages: [human, call('c1', 'lookup_order'), toolMsg] }, { messages: [call('c2', 'lookup_order')] }));
    const model = span('call_model', a2.spanId, 6, 8, oi('CHAIN', { messages: [human, toolMsg] }, { messages: [call('c2', 'lookup_order')] }));
    const tools2 = span('tools', r, 9, 11, oi('CHAIN', { messages: [human, toolMsg] }, { messages: [okMsg] }));
    const good = span('lookup_order', tools2.spanId, 9, 10, {
      'openinference.span.kind': 'TOOL',
      'tool.name': 'lookup_order',
      'input.value': '42',
      'output.value': 'shipped',
    });
    const a3 = span('agent', r, 12, 14, oi('AGENT', { messages: [human, toolMsg, okMsg] }, { messages: [final] }));
    expect(passthrough([root, a1, tools1, bad, a2, model, tools2, good, a3])).toEqual([]);
  });

  it('Vercel AI SDK 7 (GenAI): the agent span aggregates every call of the run and finished with "stop"', () => {
    const agentOut = [
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: ANSWER },
          { type: 'tool_call', id: 'c1', name: 'lookup_order', arguments: { order_id: '42' } },
          { type: 'tool_call', id: 'c2', name: 'lookup_order', arguments: { order_id: '42' } },
          { type: 'tool_call_response', id: 'c2', response: 'shipped' },
        ],
        finish_reason: 'stop',
      },
    ];
    const root = span('invoke_agent support-agent', undefined, 0, 20, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support-agent',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'order 42?' }] }]),
      'gen_ai.output.messages': JSON.stringify(agentOut),
    });
    const tool = (at: number, extra: Partial<Span>, result?: string) =>
      span(
        'execute_tool lookup_order',
        root.spanId,
        at,
        at + 1,
        {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'lookup_order',
          'gen_ai.tool.call.arguments': '{"order_id":"42"}',
          ...(result === undefined ? {} : { 'gen_ai.tool.call.result': result }),
        },
        extra,
      );
    const bad = tool(2, failedWith(ERROR));
    const chat = span('chat gpt-4o-mini', root.spanId, 4, 5, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': JSON.stringify([{ role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: ERROR }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c2', name: 'lookup_order' }], finish_reason: 'tool_call' },
      ]),
    });
    const good = tool(6, {}, 'shipped');
    expect(passthrough([root, bad, chat, good])).toEqual([]);
    // Without the retry's tool span, the requested retry may have run uncaptured: no claim.
    expect(passthrough([root, bad, chat])).toEqual([]);
    // A model that gave up instead of retrying: the run reported success over a failure that was never retried.
    const gaveUp = span('chat gpt-4o-mini', root.spanId, 4, 5, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': JSON.stringify([{ role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: ERROR }] }]),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: ANSWER }], finish_reason: 'stop' }]),
    });
    expect(passthrough([root, bad, gaveUp])).toEqual([
      'tool "lookup_order" failed once with no later success, and its run ended reporting success (agent "support-agent")',
    ]);
  });

  it('Pydantic AI: the answer is final_result; the message history on the agent span is not a carrier', () => {
    const root = span('invoke_agent weather_agent', undefined, 0, 20, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'weather_agent',
      final_result: ANSWER,
      'pydantic_ai.all_messages': JSON.stringify([{ role: 'tool', parts: [{ type: 'tool_call_response', result: ERROR }] }]),
    });
    const bad = span(
      'execute_tool lookup_order',
      root.spanId,
      2,
      3,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order', 'gen_ai.tool.call.arguments': '{}' },
      failedWith(ERROR),
    );
    expect(passthrough([root, bad])).toEqual([
      'tool "lookup_order" failed once with no later success, and its run ended reporting success (agent "weather_agent")',
    ]);
  });

  it('OpenAI Agents SDK + OpenInference: an agent span with no output; the answer is the last model reply', () => {
    const root = span('Agent workflow', undefined, 0, 20, { 'openinference.span.kind': 'CHAIN' });
    const agentSpan = span('Assistant', root.spanId, 0, 20, { 'openinference.span.kind': 'AGENT', 'agent.name': 'Assistant' });
    const bad = span(
      'lookup_order',
      agentSpan.spanId,
      2,
      3,
      { 'openinference.span.kind': 'TOOL', 'tool.name': 'lookup_order', 'input.value': '{"order_id":"42"}' },
      failedWith(ERROR),
    );
    const reply = span('response', agentSpan.spanId, 4, 5, {
      'openinference.span.kind': 'LLM',
      // A span that made a request carries its usage (a preparing LLM-kind span does not).
      'llm.token_count.prompt': 120,
      'llm.token_count.completion': 12,
      'input.value': JSON.stringify([
        { role: 'user', content: 'order 42?' },
        { type: 'function_call_output', output: ERROR },
      ]),
      'output.value': JSON.stringify({
        id: 'resp_1',
        output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Sorry: ${ERROR}` }] }],
      }),
    });
    expect(passthrough([root, agentSpan, bad, reply])).toEqual([
      `error text of tool "lookup_order" ("${ERROR}") reappears in the answer of its run (llm step "response"); ` +
        'tool "lookup_order" failed once with no later success, and its run ended reporting success (llm step "response")',
    ]);
  });

  it('Strands with default settings: content only in span events, so the outcome is absent and nothing is claimed', () => {
    const root = span('invoke_agent Strands Agents', undefined, 0, 20, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Strands Agents',
      'session.id': 's1',
    });
    const cycle = span('execute_event_loop_cycle', root.spanId, 1, 10, { 'event_loop.cycle_id': 'x' });
    const bad = span(
      'execute_tool lookup_order',
      cycle.spanId,
      2,
      3,
      { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup_order' },
      failedWith(ERROR),
    );
    expect(passthrough([root, cycle, bad])).toEqual([]);
  });
});
