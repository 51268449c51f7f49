/**
 * Tool content from a vendor's own attributes beside the GenAI ones, and placeholder ids, on
 * spans shaped as Google ADK 2.13 writes them (`google/adk/telemetry/tracing.py`,
 * `trace_tool_call`; the legacy schema `ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1` is the one that
 * puts tool content in `gcp.vertex.agent.*`).
 */
import { describe, expect, it } from 'vitest';
import type { Attributes } from '../../src/ingest/span.ts';
import { jsonDigest } from '../../src/normalize/args-digest.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { makeSpan } from './make-span.ts';

/** An ADK legacy-schema `execute_tool` span, as captured from ADK 2.13 (framework matrix row `adk-legacy`). */
function adkLegacyTool(overrides: Attributes = {}): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.description': 'Get the current weather in a city.',
    'gen_ai.tool.name': 'get_weather',
    'gen_ai.tool.type': 'FunctionTool',
    'gen_ai.agent.name': 'assistant',
    'gcp.vertex.agent.llm_request': '{}',
    'gcp.vertex.agent.llm_response': '{}',
    'gcp.vertex.agent.tool_call_args': '{"city": "Paris"}',
    'gen_ai.tool.call.id': 'call_paris_1',
    'gcp.vertex.agent.event_id': '96690148-f2e3-4994-9e15-fafc0bc7618c',
    'gcp.vertex.agent.tool_response': '{"result": "Sunny, 22 degrees Celsius"}',
    ...overrides,
  };
}

const read = (attributes: Attributes) => normalizeSpan(makeSpan({ name: 'execute_tool get_weather', attributes }));

describe('vendor tool content (Google ADK legacy schema)', () => {
  it('reads the arguments and the result from gcp.vertex.agent.* when the GenAI attributes are not there', () => {
    const step = read(adkLegacyTool());
    expect(step.kind).toBe('tool');
    expect(step.args).toEqual({ raw: '{"city": "Paris"}', parsed: { city: 'Paris' }, digest: jsonDigest({ city: 'Paris' }), declared: 'json' });
    expect(step.result).toBe('{"result": "Sunny, 22 degrees Celsius"}');
  });

  it('prefers gen_ai.tool.call.arguments / .result where both are written', () => {
    const step = read(adkLegacyTool({ 'gen_ai.tool.call.arguments': '{"city":"Rome"}', 'gen_ai.tool.call.result': '{"result":"rain"}' }));
    expect(step.args?.parsed).toEqual({ city: 'Rome' });
    expect(step.result).toBe('{"result":"rain"}');
  });

  it('reads neither when both are the capture-off marker {}: two such calls are not a repetition', () => {
    const off = { 'gcp.vertex.agent.tool_call_args': '{}', 'gcp.vertex.agent.tool_response': '{}' };
    const a = read(adkLegacyTool(off));
    const b = read(adkLegacyTool({ ...off, 'gen_ai.tool.call.id': 'call_paris_2' }));
    expect('args' in a || 'args' in b).toBe(false);
    expect('result' in a).toBe(false);
  });

  it('reads {} as arguments when the result beside them was captured (a tool without parameters)', () => {
    const step = read(adkLegacyTool({ 'gcp.vertex.agent.tool_call_args': '{}', 'gcp.vertex.agent.tool_response': '{"result": "ok"}' }));
    expect(step.args?.parsed).toEqual({});
    expect(step.result).toBe('{"result": "ok"}');
  });

  it("reads no arguments from a value that is not a JSON object (the merged span's N/A)", () => {
    const step = read(adkLegacyTool({ 'gen_ai.tool.name': '(merged tools)', 'gcp.vertex.agent.tool_call_args': 'N/A' }));
    expect('args' in step).toBe(false);
  });

  it('reads no result from the placeholder written when the call had no response event', () => {
    const step = read(adkLegacyTool({ 'gcp.vertex.agent.tool_response': '{"result": "<not specified>"}', 'gen_ai.tool.call.id': '<not specified>' }));
    expect('result' in step).toBe(false);
    expect(step.args?.parsed).toEqual({ city: 'Paris' });
  });

  it('reads vendor attributes on tool steps only', () => {
    const step = normalizeSpan(
      makeSpan({
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gcp.vertex.agent.tool_call_args': '{"city": "Paris"}',
          'gcp.vertex.agent.tool_response': '{"result": "x"}',
        },
      }),
    );
    expect(step.kind).toBe('llm');
    expect('args' in step || 'result' in step).toBe(false);
  });
});

describe('placeholder ids, in every convention', () => {
  it('GenAI: `<not specified>` as gen_ai.tool.call.id is no call id', () => {
    const step = read(adkLegacyTool({ 'gen_ai.tool.call.id': '<not specified>' }));
    expect(step.toolName).toBe('get_weather');
    expect('toolCallId' in step).toBe(false);
  });

  it('OpenInference: `<not specified>` as tool_call.id is no call id', () => {
    const step = normalizeSpan(
      makeSpan({
        attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'tool_call.id': '<not specified>', 'input.value': '{"city":"Paris"}' },
      }),
    );
    expect(step.kind).toBe('tool');
    expect('toolCallId' in step).toBe(false);
  });

  it('a placeholder session id keys no session', () => {
    const step = read(adkLegacyTool({ 'gen_ai.conversation.id': '<not specified>' }));
    expect('sessionId' in step).toBe(false);
  });
});
