/**
 * Normalizes the 26 real TRAIL traces (smolagents + OpenInference, all attribute values
 * strings, every span kind INTERNAL), decoded by the real OTLP/JSON decoder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeOtlpJson } from '../../src/ingest/otlp-json-decode.ts';
import type { Span } from '../../src/ingest/span.ts';
import { jsonDigest } from '../../src/normalize/canonical-json.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';

const FIXTURES = new URL('../../../shared/fixtures/trail-dev/', import.meta.url).pathname;

function loadTraces(): { file: string; spans: Span[] }[] {
  return readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.otlp.json.gz'))
    .sort()
    .map((file) => {
      const decoded = decodeOtlpJson(gunzipSync(readFileSync(`${FIXTURES}/${file}`)).toString('utf8'));
      if (decoded instanceof Error) throw decoded;
      return { file, spans: decoded.spans };
    });
}

describe('TRAIL dev traces', () => {
  const traces = loadTraces();
  const spans = traces.flatMap((trace) => trace.spans);
  const steps = spans.map((span) => ({ span, step: normalizeSpan(span) }));

  it('has all 26 traces', () => {
    expect(traces).toHaveLength(26);
    expect(spans.length).toBeGreaterThan(500);
  });

  it('turns every OpenInference TOOL span into a tool step with tool.name and parsed args', () => {
    const tools = steps.filter(({ span }) => span.attributes['openinference.span.kind'] === 'TOOL');
    expect(tools.length).toBe(62);
    for (const { span, step } of tools) {
      expect(step.kind).toBe('tool');
      expect(step.convention).toBe('openinference');
      expect(step.toolName).toBe(span.attributes['tool.name']);
      expect(step.args?.raw).toBe(span.attributes['input.value']);
      // smolagents records the call `{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`:
      // with no positional arguments the step's arguments are its keyword arguments, digest
      // included; with some, the recorded call stays as it is (positions cannot be named).
      const captured = JSON.parse(span.attributes['input.value'] as string) as { args: unknown[]; kwargs: object };
      expect(captured).toMatchObject({ args: expect.any(Array), kwargs: expect.any(Object) });
      const call = captured.args.length === 0 ? captured.kwargs : captured;
      expect(step.args?.parsed).toEqual(call);
      expect(step.args?.recorded).toBe(captured.args.length === 0 ? 'kwargs' : undefined);
      expect(step.args?.digest).toBe(jsonDigest(call));
      expect(Object.keys(step.toolSchemas ?? {})).toEqual([span.attributes['tool.name']]);
    }
  });

  it('carries an error on exactly the spans with status 2 or an exception event', () => {
    let failed = 0;
    for (const { span, step } of steps) {
      const showsError = span.status.code === 2 || span.events.some((event) => event.name === 'exception');
      expect(step.error !== undefined, `${span.spanId} ${span.name}`).toBe(showsError);
      if (showsError) {
        failed++;
        expect(step.error?.source).toBe('exception');
        expect(step.error?.message).toBeTruthy();
      }
    }
    expect(failed).toBe(49);
  });

  it('maps span kinds: LLM to llm with a model, AGENT to agent, CHAIN to other, wrappers to generic', () => {
    const counts: Record<string, number> = {};
    for (const { span, step } of steps) {
      const spanKind = String(span.attributes['openinference.span.kind'] ?? 'none');
      const key = `${spanKind}->${step.convention}:${step.kind}`;
      counts[key] = (counts[key] ?? 0) + 1;
      if (step.kind === 'llm') expect(step.model).toBe(span.attributes['llm.model_name']);
    }
    expect(counts).toEqual({
      'LLM->openinference:llm': 259,
      'CHAIN->openinference:other': 168,
      'TOOL->openinference:tool': 62,
      'AGENT->openinference:agent': 30,
      'none->generic:other': 93,
    });
  });

  it('leaves uncaptured content absent: tools that returned nothing have no result', () => {
    const silent = steps.filter(({ span, step }) => step.kind === 'tool' && !('output.value' in span.attributes));
    expect(silent.length).toBeGreaterThan(0);
    for (const { step } of silent) expect('result' in step).toBe(false);
  });

  it('reads the LLM tool schemas from llm.tools', () => {
    const withTools = steps.filter(({ span }) => 'llm.tools.0.tool.json_schema' in span.attributes);
    expect(withTools.length).toBe(37);
    for (const { step } of withTools) {
      expect(Object.keys(step.toolSchemas ?? {})).toHaveLength(9);
      expect(step.toolSchemas?.['final_answer']).toMatchObject({ type: 'object' });
    }
  });
});
