import { describe, expect, it } from 'vitest';
import { defaultChecksConfig } from '../../src/checks/config.ts';
import { malformedStructure } from '../../src/checks/malformed-structure.ts';
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

  it('fires on a tool step with no tool name, and on capture conflicts', () => {
    const nameless = step('tool', { name: 'execute_tool', args: '{}' });
    const conflicted = tool('search', { args: '{"query": "x"}' });
    const hits = malformedStructure(trajectory([nameless, conflicted], { conflicts: [conflictOn(conflicted)] }), cfg);
    expect(hits.map((h) => [h.anchor, h.detail])).toEqual([
      [nameless.id, 'tool step "execute_tool" has no tool name'],
      [conflicted.id, `two different payloads under span id ${conflicted.id}: kept sha256 aaaaaaaaaaaa, refused sha256 bbbbbbbbbbbb`],
    ]);
  });

  it('gathers several reasons at one anchor into one hit', () => {
    const s = step('tool', { name: 'execute_tool', args: 'not json' });
    const hits = malformedStructure(trajectory([s], { conflicts: [conflictOn(s)] }), cfg);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.detail.split('; ')).toHaveLength(3);
  });
});
