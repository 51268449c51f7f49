/**
 * Normalizes the real TRAIL traces (smolagents + OpenInference, all attribute values
 * strings, every span kind INTERNAL), decoded by the real OTLP/JSON decoder: the 26 with
 * ../shared beside the checkout, the five in-repo ones without (test/helpers/trail-corpus.ts).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeOtlpJson } from '../../src/ingest/otlp/json-decode.ts';
import type { Span } from '../../src/ingest/span.ts';
import { jsonDigest } from '../../src/normalize/args-digest.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import type { Step } from '../../src/normalize/step.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';

type SpanKind = 'LLM' | 'CHAIN' | 'TOOL' | 'AGENT' | 'none';

/**
 * Per trace: spans by `openinference.span.kind` (`none`: the smolagents wrappers without one),
 * spans with status 2 or an exception event, and LLM spans that carry `llm.tools`. Read off
 * the raw files; a run asserts the rows of the traces it has, and a trace without a row fails.
 */
const EXPECTED: Record<string, { spans: Partial<Record<SpanKind, number>>; errored: number; llmWithTools: number }> = {
  '0035f455b3ff2295167a844f04d85d34': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '0ebe673d64647ec44c370638b82d3c78': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '1427b326e21963a1228647ad8dff2bf4': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '25c8275651013fe8398ef0f735eb0912': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '272cdc645b731837366576b37d40fb65': { spans: { LLM: 27, CHAIN: 27, TOOL: 1, AGENT: 1, none: 2 }, errored: 2, llmWithTools: 0 },
  '27a6c5ebc3311542156fdde857a0035f': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '3205fa0cb2135fe671bf7cd0e5a26151': { spans: { LLM: 19, CHAIN: 10, TOOL: 4, AGENT: 3, none: 4 }, errored: 8, llmWithTools: 4 },
  '3215fc75e81bdb73706a4fb37b66427f': { spans: { LLM: 9, CHAIN: 4, TOOL: 2, AGENT: 2, none: 4 }, errored: 0, llmWithTools: 2 },
  '3e65ac7e09b0edd2a5f6b0b18df20f65': { spans: { LLM: 23, CHAIN: 23, TOOL: 1, AGENT: 1, none: 2 }, errored: 5, llmWithTools: 0 },
  '3f05ba33cd4ae18ccba6db9a5749c16f': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '4a8d094e92433f1ba1da21f602c417d9': { spans: { LLM: 5, CHAIN: 2, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '4ae16319f0de44a7d1e84595b41ae08d': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '53dba4241b22d5039c9c119871c7c8b4': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '72822db6e120878d916b515c2501246b': { spans: { LLM: 7, CHAIN: 6, none: 1 }, errored: 0, llmWithTools: 0 },
  '75121379e11c550f3ca58e17c972266b': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '7ee8e8df6e8cd101d9af8a4a4f6ceedb': { spans: { LLM: 6, CHAIN: 3, TOOL: 1, AGENT: 1, none: 4 }, errored: 1, llmWithTools: 0 },
  '876eb108c8650d4ada63a8d39aa1e96c': { spans: { LLM: 6, CHAIN: 3, TOOL: 2, AGENT: 1, none: 4 }, errored: 3, llmWithTools: 0 },
  '88c63c780aba1f23c3c5345aa340d7e2': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  '9ec7d4a8ab8c74ab56361ef29d1b1660': { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  a99faf782e8ad4d5f1ccdfcb7e143b9a: { spans: { LLM: 36, CHAIN: 22, TOOL: 21, AGENT: 2, none: 4 }, errored: 16, llmWithTools: 20 },
  af1931b778d7a82ca6a1f7dfdb9aa8bb: { spans: { LLM: 19, CHAIN: 19, TOOL: 1, AGENT: 1, none: 2 }, errored: 2, llmWithTools: 0 },
  d9a8dff7edce2d1b15ed4769886d9a2a: { spans: { LLM: 7, CHAIN: 4, TOOL: 1, AGENT: 1, none: 4 }, errored: 1, llmWithTools: 0 },
  ef0207e4427fe22aeb1c2105932b74d7: { spans: { LLM: 22, CHAIN: 13, TOOL: 11, AGENT: 2, none: 4 }, errored: 6, llmWithTools: 11 },
  f04b425c107f7b972209528a46c407d9: { spans: { LLM: 12, CHAIN: 7, TOOL: 3, AGENT: 1, none: 4 }, errored: 4, llmWithTools: 0 },
  f39aec9b8a61fd2aaed5849cc00bc165: { spans: { LLM: 4, CHAIN: 1, TOOL: 1, AGENT: 1, none: 4 }, errored: 0, llmWithTools: 0 },
  fdaf88f3c0437bf27438b60ba4102c8a: { spans: { LLM: 13, CHAIN: 13, TOOL: 1, AGENT: 1, none: 2 }, errored: 1, llmWithTools: 0 },
};

/** The step convention and kind each OpenInference span kind maps to. */
const MAPPING: Record<SpanKind, string> = {
  LLM: 'openinference:llm',
  CHAIN: 'openinference:other',
  TOOL: 'openinference:tool',
  AGENT: 'openinference:agent',
  none: 'generic:other',
};

interface Trace {
  traceId: string;
  steps: { span: Span; step: Step }[];
}

const corpus = trailCorpus();
const traces: Trace[] = corpus.files.map((file) => {
  const decoded = decodeOtlpJson(gunzipSync(readFileSync(file.otlpPath)).toString('utf8'));
  if (decoded instanceof Error) throw decoded;
  return { traceId: file.traceId, steps: decoded.spans.map((span) => ({ span, step: normalizeSpan(span) })) };
});
const eachTrace = traces.map((t) => [t.traceId, t] as const);

function expected(traceId: string) {
  const row = EXPECTED[traceId];
  if (row === undefined) throw new Error(`${traceId}: no expectations for this TRAIL trace; add its row`);
  return row;
}

const spanKind = (span: Span): SpanKind => (span.attributes['openinference.span.kind'] as SpanKind | undefined) ?? 'none';

describe(`normalizing the TRAIL dev traces (${corpus.description})`, () => {
  it(`reads every trace of the corpus (${corpus.files.length}), each with its row of expectations`, () => {
    expect(traces.map((t) => t.traceId)).toEqual(corpus.files.map((f) => basename(f.otlpPath, '.otlp.json.gz')));
    for (const t of traces) expect(EXPECTED[t.traceId], t.traceId).toBeDefined();
  });

  it.each(eachTrace)('%s: maps span kinds (LLM to llm with a model, AGENT to agent, CHAIN to other, wrappers to generic)', (traceId, trace) => {
    const counts: Partial<Record<SpanKind, number>> = {};
    for (const { span, step } of trace.steps) {
      const kind = spanKind(span);
      counts[kind] = (counts[kind] ?? 0) + 1;
      expect(`${step.convention}:${step.kind}`, span.spanId).toBe(MAPPING[kind]);
      if (step.kind === 'llm') expect(step.model).toBe(span.attributes['llm.model_name']);
    }
    expect(counts).toEqual(expected(traceId).spans);
  });

  it.each(eachTrace)('%s: turns every OpenInference TOOL span into a tool step with tool.name and parsed args', (traceId, trace) => {
    const tools = trace.steps.filter(({ span }) => spanKind(span) === 'TOOL');
    expect(tools).toHaveLength(expected(traceId).spans.TOOL ?? 0);
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

  it.each(eachTrace)('%s: carries an error on exactly the spans with status 2 or an exception event', (traceId, trace) => {
    let failed = 0;
    for (const { span, step } of trace.steps) {
      const showsError = span.status.code === 2 || span.events.some((event) => event.name === 'exception');
      expect(step.error !== undefined, `${span.spanId} ${span.name}`).toBe(showsError);
      if (showsError) {
        failed++;
        expect(step.error?.source).toBe('exception');
        expect(step.error?.message).toBeTruthy();
      }
    }
    expect(failed).toBe(expected(traceId).errored);
  });

  it.each(eachTrace)('%s: leaves uncaptured content absent: a tool step has a result exactly when its span has output.value', (_, trace) => {
    for (const { span, step } of trace.steps.filter(({ step }) => step.kind === 'tool')) {
      expect('result' in step, span.spanId).toBe('output.value' in span.attributes);
    }
  });

  it('has tools that returned nothing, so the absent-result rule above is exercised', () => {
    const silent = traces.flatMap((t) => t.steps).filter(({ span, step }) => step.kind === 'tool' && !('output.value' in span.attributes));
    expect(silent.length).toBeGreaterThan(0);
  });

  it.each(eachTrace)('%s: reads the LLM tool schemas from llm.tools', (traceId, trace) => {
    const withTools = trace.steps.filter(({ span }) => 'llm.tools.0.tool.json_schema' in span.attributes);
    expect(withTools).toHaveLength(expected(traceId).llmWithTools);
    for (const { step } of withTools) {
      expect(Object.keys(step.toolSchemas ?? {})).toHaveLength(9);
      expect(step.toolSchemas?.['final_answer']).toMatchObject({ type: 'object' });
    }
  });
});
