/**
 * GenAI content events fill what a step's attributes lack, whichever convention read the span
 * and whether the events came as span events (Strands) or log records (OpenAI-v2). The event
 * shapes are the emitters' own: Strands' tracer.py (default and `gen_ai_latest_experimental`)
 * and opentelemetry-instrumentation-openai-v2's message_to_event / choice_to_event.
 */
import { describe, expect, it } from 'vitest';
import type { SpanEvent } from '../../src/ingest/span.ts';
import { jsonDigest } from '../../src/normalize/args-digest.ts';
import { applyContentEvents, logEventName, readContentEvent } from '../../src/normalize/content-events.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { exceptionEvent, makeSpan } from './make-span.ts';

const at = (name: string, attributes: SpanEvent['attributes']): SpanEvent => ({ name, timeUnixNano: 1_700_000_000_500_000_000n, attributes });

/** Strands default (`start_tool_call_span` / `end_tool_call_span` without the opt-in). */
function strandsDefaultTool() {
  return makeSpan({
    name: 'execute_tool get_weather',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.system': 'strands-agents',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'tooluse_1',
      'session.id': 's-1',
    },
    events: [
      at('gen_ai.tool.message', { role: 'tool', content: '{"city": "Paris"}', id: 'tooluse_1' }),
      at('gen_ai.choice', { message: '[{"text": "18C and sunny"}]', id: 'tooluse_1' }),
    ],
  });
}

describe('span events (Strands)', () => {
  it('a Strands default execute_tool span gets its args and result from its events', () => {
    const step = normalizeSpan(strandsDefaultTool());
    expect(step.kind).toBe('tool');
    expect(step.toolName).toBe('get_weather');
    expect(step.args?.parsed).toEqual({ city: 'Paris' });
    expect(step.args?.digest).toBe(jsonDigest({ city: 'Paris' }));
    expect(step.result).toBe('[{"text": "18C and sunny"}]');
  });

  it('with gen_ai_latest_experimental the tool_call and tool_call_response parts carry them', () => {
    const step = normalizeSpan(
      makeSpan({
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.provider.name': 'strands-agents' },
        events: [
          at('gen_ai.client.inference.operation.details', {
            'gen_ai.input.messages': JSON.stringify([
              { role: 'tool', parts: [{ type: 'tool_call', name: 'get_weather', id: 'tooluse_2', arguments: { city: 'Rome' } }] },
            ]),
          }),
          at('gen_ai.client.inference.operation.details', {
            'gen_ai.output.messages': JSON.stringify([
              { role: 'tool', parts: [{ type: 'tool_call_response', id: 'tooluse_2', response: [{ text: 'rain' }] }] },
            ]),
          }),
        ],
      }),
    );
    expect(step.toolName).toBe('get_weather');
    expect(step.toolCallId).toBe('tooluse_2');
    expect(step.args?.parsed).toEqual({ city: 'Rome' });
    expect(step.result).toBe('[{"text":"rain"}]');
  });

  it('a chat span gets its input messages in order and its choice as the result', () => {
    const step = normalizeSpan(
      makeSpan({
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm' },
        events: [
          at('gen_ai.user.message', { content: '[{"text": "weather in Paris?"}]' }),
          exceptionEvent({ 'exception.type': 'X' }),
          at('gen_ai.tool.message', { content: '[{"toolResult": {"toolUseId": "t1"}}]' }),
          at('gen_ai.choice', { finish_reason: 'tool_use', message: '[{"toolUse": {"name": "get_weather"}}]' }),
        ],
      }),
    );
    expect(step.kind).toBe('llm');
    expect(JSON.parse(String(step.input))).toEqual([
      { role: 'user', content: '[{"text": "weather in Paris?"}]' },
      { role: 'tool', content: '[{"toolResult": {"toolUseId": "t1"}}]' },
    ]);
    expect(step.result).toBe('[{"toolUse": {"name": "get_weather"}}]');
  });

  it('attributes win: an event never overwrites a captured fact', () => {
    const span = strandsDefaultTool();
    span.attributes['gen_ai.tool.call.arguments'] = '{"city":"Oslo"}';
    span.attributes['gen_ai.tool.call.result'] = 'snow';
    const step = normalizeSpan(span);
    expect(step.args?.parsed).toEqual({ city: 'Oslo' });
    expect(step.result).toBe('snow');
  });

  it('works for every convention: an OpenInference tool span without input.value reads its events', () => {
    const span = strandsDefaultTool();
    span.attributes = { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather' };
    const step = normalizeSpan(span);
    expect(step.convention).toBe('openinference');
    expect(step.args?.parsed).toEqual({ city: 'Paris' });
  });

  it('steps of other kinds take nothing (a cycle span replays history, not one act)', () => {
    const span = strandsDefaultTool();
    span.attributes = { 'event_loop.cycle_id': 'c1' };
    const step = normalizeSpan(span);
    expect(step.kind).toBe('other');
    expect(step.args).toBeUndefined();
    expect(step.result).toBeUndefined();
  });
});

describe('log-record bodies (OpenAI-v2 instrumentation)', () => {
  it('gen_ai.choice with tool_calls becomes the llm result; assistant/tool messages the input', () => {
    const step = normalizeSpan(makeSpan({ attributes: { 'gen_ai.operation.name': 'chat' } }));
    applyContentEvents(step, [
      { name: 'gen_ai.user.message', attributes: { 'gen_ai.system': 'openai' }, body: { content: 'hi' } },
      {
        name: 'gen_ai.assistant.message',
        attributes: {},
        body: { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      },
      { name: 'gen_ai.tool.message', attributes: {}, body: { content: 'ok', id: 'c1' } },
      {
        name: 'gen_ai.choice',
        attributes: {},
        body: { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'done' } },
      },
    ]);
    expect(JSON.parse(String(step.input))).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
      { role: 'tool', content: 'ok', id: 'c1' },
    ]);
    expect(JSON.parse(String(step.result))).toEqual({ role: 'assistant', content: 'done' });
  });

  it("the tool calls a choice asks for become the llm step's requested calls (capture gaps read them)", () => {
    const step = normalizeSpan(makeSpan({ attributes: { 'gen_ai.operation.name': 'chat' } }));
    expect(step.requestedToolCalls).toBeUndefined();
    applyContentEvents(step, [
      {
        name: 'gen_ai.choice',
        attributes: {},
        body: {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        },
      },
    ]);
    expect(step.requestedToolCalls).toEqual([{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });

  it("so do the tool_call parts of the details event's output messages", () => {
    const step = normalizeSpan(makeSpan({ attributes: { 'gen_ai.operation.name': 'chat' } }));
    const output = [{ role: 'assistant', parts: [{ type: 'tool_call', id: 'c2', name: 'lookup_order', arguments: { order_id: '42' } }] }];
    applyContentEvents(step, [{ name: 'gen_ai.client.inference.operation.details', attributes: { 'gen_ai.output.messages': JSON.stringify(output) } }]);
    expect(step.requestedToolCalls).toEqual([{ id: 'c2', name: 'lookup_order', arguments: { order_id: '42' } }]);
  });

  it('a choice without message (content capture off) carries nothing', () => {
    expect(readContentEvent({ name: 'gen_ai.choice', attributes: {}, body: { index: 0, finish_reason: 'stop' } }, 'llm')).toBeUndefined();
  });

  it('the event name comes from event_name, else the event.name attribute', () => {
    expect(logEventName('gen_ai.choice', {})).toBe('gen_ai.choice');
    expect(logEventName('', { 'event.name': 'gen_ai.user.message' })).toBe('gen_ai.user.message');
    expect(logEventName('', {})).toBe('');
  });
});

describe('the details event on GenAI operations of other kinds', () => {
  it('a GenAI operation of kind other (e.g. agent_step) takes the details messages, as from attributes', () => {
    const step = normalizeSpan(
      makeSpan({
        attributes: { 'gen_ai.operation.name': 'agent_step' },
        events: [at('gen_ai.client.inference.operation.details', { 'gen_ai.input.messages': '[{"role":"user"}]' })],
      }),
    );
    expect(step.kind).toBe('other');
    expect(step.input).toBe('[{"role":"user"}]');
  });

  it('a span of no GenAI operation (Strands execute_event_loop_cycle) takes nothing from it', () => {
    const step = normalizeSpan(
      makeSpan({
        name: 'execute_event_loop_cycle',
        attributes: { 'event_loop.cycle_id': 'c' },
        events: [at('gen_ai.client.inference.operation.details', { 'gen_ai.input.messages': '[{"role":"user"}]' })],
      }),
    );
    expect(step.input).toBeUndefined();
  });
});
