import { describe, expect, it } from 'vitest';
import { defaultChecksConfig, parseChecksConfig } from '../../src/checks/config.ts';
import { malformedStructure } from '../../src/checks/malformed-structure.ts';
import { normalizeSpan } from '../../src/normalize/normalize.ts';
import { makeSpan } from '../normalize/make-span.ts';
import { conflictOn, step, tool, trajectory } from './builders.ts';

const cfg = defaultChecksConfig;
const searchSchema = {
  type: 'object',
  properties: { query: { type: 'string' }, mode: { enum: ['fast', 'deep'] }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['query'],
  additionalProperties: false,
};
const declaring = (at: number) => step('llm', { at, toolSchemas: { search: { type: 'function', function: { name: 'search', parameters: searchSchema } } } });

describe('malformed-structure', () => {
  it('fires on args that are not JSON where the convention promises JSON', () => {
    const broken = tool('search', { args: '{"query": "x"', convention: 'genai' });
    const hits = malformedStructure(trajectory([broken]), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([[broken.id, 'tool "search" arguments are not JSON (genai): "{"query": "x""']]);
  });

  it('stays silent on plain-text args from conventions that do not promise JSON', () => {
    const steps = [
      tool('shell', { args: 'ls -la', convention: 'openllmetry' }),
      tool('shell', { args: 'ls -la', convention: 'openinference', attributes: { 'input.mime_type': 'text/plain' } }),
    ];
    expect(malformedStructure(trajectory(steps), cfg)).toEqual([]);
  });

  it('fires on args violating the declared schema, with every problem named', () => {
    const bad = tool('search', { at: 2, args: '{"mode": "slow", "tags": ["a", 3], "limit": 5}' });
    const hits = malformedStructure(trajectory([declaring(1), bad]), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.anchor).toBe(bad.id);
    expect(hits[0]!.detail).toBe(
      'tool "search" arguments violate its declared schema: $: missing required property "query"; $: unexpected property "limit"; $.mode: "slow" is not one of the allowed values; $.tags[1]: expected string, got integer',
    );
  });

  it('stays silent on args that fit the schema in another key order, and on undeclared tools', () => {
    const steps = [
      declaring(1),
      tool('search', { at: 2, args: '{"tags": [], "mode": "deep", "query": "q"}' }),
      tool('fetch', { at: 3, args: '{"anything": true}' }),
    ];
    expect(malformedStructure(trajectory(steps), cfg)).toEqual([]);
  });

  it('validates the keyword arguments of a smolagents call, and skips positional ones', () => {
    const wrap = (args: unknown[], kwargs: object) => JSON.stringify({ args, sanitize_inputs_outputs: true, kwargs });
    const oi = { convention: 'openinference' };
    const ok = tool('search', { at: 2, ...oi, args: wrap([], { query: 'q' }) });
    const positional = tool('search', { at: 3, ...oi, args: wrap(['q'], {}) });
    const bad = tool('search', { at: 4, ...oi, args: wrap([], { q: 'x' }) });
    const hits = malformedStructure(trajectory([declaring(1), ok, positional, bad]), cfg);
    expect(hits.map((h) => h.anchor)).toEqual([bad.id]);
  });

  it('ignores declarations that are not JSON Schemas (smolagents tool.parameters maps)', () => {
    const own = { search: { query: { type: 'string', description: 'q' } } };
    const call = tool('search', { args: '{"other": 1}', toolSchemas: own });
    expect(malformedStructure(trajectory([call]), cfg)).toEqual([]);
  });

  it('fires on capture conflicts, and not on a tool step with no tool name (a capture gap, not the agent)', () => {
    const nameless = step('tool', { name: 'execute_tool', args: '{}' });
    const conflicted = tool('search', { args: '{"query": "x"}' });
    const hits = malformedStructure(trajectory([nameless, conflicted], { conflicts: [conflictOn(conflicted)] }), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([
      [conflicted.id, `two different payloads under span id ${conflicted.id}: kept sha256 aaaaaaaaaaaa, refused sha256 bbbbbbbbbbbb`],
    ]);
  });

  it('gathers several reasons at one anchor into one hit', () => {
    const s = tool('search', { args: 'not json' });
    const hits = malformedStructure(trajectory([s], { conflicts: [conflictOn(s)] }), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.detail.split('; ')).toHaveLength(2);
  });
});

/** Real-shaped spans, read by the real mappers: what each instrumentation records for one call. */
describe('malformed-structure on what real instrumentations record', () => {
  const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const llm = normalizeSpan(
    makeSpan({
      spanId: '0000000000000001',
      startTimeUnixNano: 1n,
      endTimeUnixNano: 2n,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.token_count.total': 10,
        'llm.tools.0.tool.json_schema': JSON.stringify({ type: 'function', function: { name: 'get_weather', parameters: weather } }),
      },
    }),
  );
  const toolSpan = (attributes: Record<string, string>) =>
    normalizeSpan(makeSpan({ spanId: '0000000000000002', startTimeUnixNano: 3n, endTimeUnixNano: 4n, attributes }));
  const hitsFor = (attributes: Record<string, string>, config = cfg) => malformedStructure(trajectory([llm, toolSpan(attributes)]), config);

  it('a LangGraph tool input recorded as text with no mime type is not checked as JSON', () => {
    for (const value of ['Paris', '3', 'true', '"Paris"']) {
      expect(hitsFor({ 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.value': value }), value).toEqual([]);
    }
  });

  it('arguments declared JSON by their mime type must be JSON and fit the schema', () => {
    const declared = { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.mime_type': 'application/json' };
    expect(hitsFor({ ...declared, 'input.value': 'Paris' }).map((h) => h.detail)).toEqual([
      'tool "get_weather" arguments are not JSON (openinference): "Paris"',
    ]);
    expect(hitsFor({ ...declared, 'input.value': '{"town": "Paris"}' }).map((h) => h.detail)).toEqual([
      'tool "get_weather" arguments violate its declared schema: $: missing required property "city"',
    ]);
  });

  it('a bare value declared JSON is one argument collapsed by the instrumentation, not a call: not validated', () => {
    // LangChain.js OpenInference: lookup_order({"order_id": "42"}) is recorded as input.value "42", mime json.
    const declared = { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.mime_type': 'application/json' };
    for (const value of ['42', '"Paris"', '["Paris"]']) expect(hitsFor({ ...declared, 'input.value': value }), value).toEqual([]);
  });

  it('a text input that is a JSON object is still checked against the schema', () => {
    expect(hitsFor({ 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.value': '{"town": "Paris"}' })).toHaveLength(1);
  });

  it('unwraps recorded calls by shape, whatever the convention: OpenLLMetry, LlamaIndex, smolagents', () => {
    const traceloop = (input: string) => ({ 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'get_weather', 'traceloop.entity.input': input });
    const oi = (input: string) => ({
      'openinference.span.kind': 'TOOL',
      'tool.name': 'get_weather',
      'input.mime_type': 'application/json',
      'input.value': input,
    });
    for (const attributes of [
      traceloop('{"args": [], "kwargs": {"city": "Paris"}}'),
      oi('{"kwargs": {"city": "Paris"}}'),
      oi('{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"city": "Paris"}}'),
      // positional arguments cannot be matched to parameter names: not validated
      traceloop('{"args": ["Paris"], "kwargs": {}}'),
      // `args`/`kwargs` beside structured members: not a known call shape, not validated
      oi('{"kwargs": {"color": "green"}, "metadata": {"thread_id": "t1"}, "inputs": {"city": "Paris"}}'),
    ]) {
      expect(hitsFor(attributes), JSON.stringify(attributes)).toEqual([]);
    }
    expect(hitsFor(traceloop('{"args": [], "kwargs": {"town": "Paris"}}')).map((h) => h.detail)).toEqual([
      'tool "get_weather" arguments violate its declared schema: $: missing required property "city"',
    ]);
  });

  it('does not unwrap when the declared schema itself has a kwargs or args property', () => {
    const own = { type: 'object', properties: { kwargs: { type: 'object' } }, required: ['kwargs', 'city'] };
    const step = toolSpan({
      'openinference.span.kind': 'TOOL',
      'tool.name': 'get_weather',
      'input.mime_type': 'application/json',
      'input.value': '{"kwargs": {"city": "Paris"}}',
    });
    step.toolSchemas = { get_weather: own };
    expect(malformedStructure(trajectory([step]), cfg).map((h) => h.detail)).toEqual([
      'tool "get_weather" arguments violate its declared schema: $: missing required property "city"',
    ]);
    // normalize read this value as a recorded call (`kwargs` beside a scalar); the schema says
    // it is not one, so the value as captured is what must fit, and does
    const fits = toolSpan({
      'openinference.span.kind': 'TOOL',
      'tool.name': 'get_weather',
      'input.mime_type': 'application/json',
      'input.value': '{"kwargs": {}, "city": "Paris"}',
    });
    expect(fits.args?.recorded).toBe('kwargs');
    fits.toolSchemas = { get_weather: own };
    expect(malformedStructure(trajectory([fits]), cfg)).toEqual([]);
  });

  it('jsonArgsConventions still makes undeclared arguments of a listed convention JSON; declared text never is', () => {
    const listed = parseChecksConfig({ options: { jsonArgsConventions: ['openllmetry', 'openinference'] } }, 'test');
    const traceloop = { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'get_weather', 'traceloop.entity.input': 'Paris' };
    expect(hitsFor(traceloop)).toEqual([]);
    expect(hitsFor(traceloop, listed)).toHaveLength(1);
    expect(hitsFor({ 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'input.value': 'Paris' }, listed)).toEqual([]);
  });
});
