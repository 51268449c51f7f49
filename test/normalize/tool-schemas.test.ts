import { describe, expect, it } from 'vitest';
import { addToolDefinition, maxCachedToolDefinitions, toolSchemasFromIndexed, toolSchemasFromList } from '../../src/normalize/tool-schemas.ts';

const schema = { type: 'object', properties: { q: { type: 'string' } } };

describe('tool definitions to schemas by name', () => {
  it('reads the OpenAI/OpenInference, GenAI, AI SDK and Anthropic shapes', () => {
    expect(addToolDefinition(undefined, { type: 'function', function: { name: 'a', parameters: schema } })).toEqual({ a: schema });
    expect(addToolDefinition(undefined, { type: 'function', name: 'b', parameters: schema })).toEqual({ b: schema });
    expect(addToolDefinition(undefined, { type: 'function', name: 'c', inputSchema: schema })).toEqual({ c: schema });
    expect(addToolDefinition(undefined, { name: 'd', input_schema: schema })).toEqual({ d: schema });
  });

  it('adds nothing for a definition without a name or a schema', () => {
    expect(addToolDefinition(undefined, { name: 'no_schema' })).toBeUndefined();
    expect(addToolDefinition(undefined, { parameters: schema })).toBeUndefined();
    expect(addToolDefinition(undefined, 'not an object')).toBeUndefined();
  });

  it('stores a tool named __proto__ as data, leaving the prototype alone', () => {
    const schemas = addToolDefinition(undefined, { name: '__proto__', parameters: schema });
    expect(Object.getPrototypeOf(schemas)).toBe(Object.prototype);
    expect(Object.keys(schemas ?? {})).toEqual(['__proto__']);
  });

  it('reads a list given as JSON text, as a structured array, or as an array of JSON texts', () => {
    const definition = { name: 'a', parameters: schema };
    expect(toolSchemasFromList(JSON.stringify([definition]))).toEqual({ a: schema });
    expect(toolSchemasFromList([{ name: 'a', parameters: { type: 'object' } }])).toEqual({ a: { type: 'object' } });
    expect(toolSchemasFromList([JSON.stringify(definition)])).toEqual({ a: schema });
    expect(toolSchemasFromList('not json')).toBeUndefined();
    expect(toolSchemasFromList(undefined)).toBeUndefined();
  });

  it('reads indexed attributes up to the first missing index', () => {
    const attributes = {
      'llm.tools.0.tool.json_schema': JSON.stringify({ function: { name: 'a', parameters: schema } }),
      'llm.tools.1.tool.json_schema': JSON.stringify({ function: { name: 'b', parameters: schema } }),
      'llm.tools.3.tool.json_schema': JSON.stringify({ function: { name: 'after_gap', parameters: schema } }),
    };
    expect(toolSchemasFromIndexed(attributes, 'llm.tools', '.tool.json_schema')).toEqual({ a: schema, b: schema });
  });

  it('stays correct past the parse cache bound', () => {
    const count = maxCachedToolDefinitions + 10;
    for (let i = 0; i < count; i++) {
      const definition = JSON.stringify({ name: `tool_${i}`, parameters: { type: 'object', title: `t${i}` } });
      expect(toolSchemasFromList([definition])).toEqual({ [`tool_${i}`]: { type: 'object', title: `t${i}` } });
    }
    // the first definitions were evicted and are parsed again
    expect(toolSchemasFromList([JSON.stringify({ name: 'tool_0', parameters: { type: 'object', title: 't0' } })])).toEqual({
      tool_0: { type: 'object', title: 't0' },
    });
  });
});
