/**
 * A tool span that names its tool only in its span name is a named tool step exactly where
 * the convention defines the span name as the tool's: GenAI's `execute_tool {gen_ai.tool.name}`
 * (the execute-tool span's name rule) and OpenLLMetry's `{entity name}.tool` (traceloop-sdk's
 * decorators and its MCP instrumentation name spans `f"{entity_name}.{kind}"`). OpenInference
 * defines no span name: its smolagents instrumentation names a tool span by the tool's Python
 * class (`SimpleTool`, `FinalAnswerTool`) and a model span `{Class}.__call__`, so a name read
 * from an OpenInference span name could be a class, not the tool the model asked for.
 */
import { describe, expect, it } from 'vitest';
import { captureGaps } from '../../src/assemble/capture-gaps.ts';
import type { Attributes } from '../../src/ingest/span.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { makeSpan } from './make-span.ts';

const step = (name: string, attributes: Attributes) => normalizeSpan(makeSpan({ name, attributes }));

describe('tool names from span names, where the convention defines them', () => {
  it('GenAI: "execute_tool get_weather" without gen_ai.tool.name is the tool get_weather', () => {
    const s = step('execute_tool get_weather', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.arguments': '{"city":"Paris"}' });
    expect(s).toMatchObject({ kind: 'tool', convention: 'genai', toolName: 'get_weather' });
    expect(captureGaps([s]).map((g) => g.reason)).not.toContain('tool-name-not-captured');
  });

  it('GenAI: the attribute wins over the span name; a bare "execute_tool" names nothing', () => {
    expect(step('execute_tool other', { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather' }).toolName).toBe('get_weather');
    expect(step('execute_tool', { 'gen_ai.operation.name': 'execute_tool' }).toolName).toBeUndefined();
    expect(step('execute_tool ', { 'gen_ai.operation.name': 'execute_tool' }).toolName).toBeUndefined();
    // another operation's span name is not a tool's
    expect(step('chat get_weather', { 'gen_ai.operation.name': 'chat' }).toolName).toBeUndefined();
  });

  it('OpenLLMetry: "get_weather.tool" without traceloop.entity.name is the tool get_weather', () => {
    const s = step('get_weather.tool', { 'traceloop.span.kind': 'tool', 'traceloop.entity.input': '{"args": [], "kwargs": {"city": "Paris"}}' });
    expect(s).toMatchObject({ kind: 'tool', convention: 'openllmetry', toolName: 'get_weather' });
    expect(step('.tool', { 'traceloop.span.kind': 'tool' }).toolName).toBeUndefined();
    expect(step('get_weather', { 'traceloop.span.kind': 'tool' }).toolName).toBeUndefined();
  });

  it('OpenInference: "get_weather.__call__" stays a nameless tool step, a capture gap (no convention says it is the tool name)', () => {
    const s = step('get_weather.__call__', { 'openinference.span.kind': 'TOOL', 'input.value': '{"city": "Paris"}' });
    expect(s.kind).toBe('tool');
    expect(s.toolName).toBeUndefined();
    expect(captureGaps([s]).map((g) => g.reason)).toContain('tool-name-not-captured');
  });
});
