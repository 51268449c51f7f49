import { describe, expect, it } from 'vitest';
import { isApplicableSchema, parameterSchemaOf, validateJsonSubset } from '../../src/checks/json-schema-subset.ts';

describe('validateJsonSubset', () => {
  it('checks type, integer vs number, type lists and nested items', () => {
    expect(validateJsonSubset(1.5, { type: 'integer' })).toEqual(['$: expected integer, got number']);
    expect(validateJsonSubset(null, { type: ['string', 'null'] })).toEqual([]);
    expect(validateJsonSubset(null, { type: 'string', nullable: true })).toEqual([]);
    expect(validateJsonSubset(null, { type: 'string' })).toEqual(['$: expected string, got null']);
    expect(validateJsonSubset([[1], ['x']], { type: 'array', items: { type: 'array', items: { type: 'number' } } })).toEqual([
      '$[1][0]: expected number, got string',
    ]);
  });

  it('compares enum members structurally', () => {
    expect(validateJsonSubset({ a: [1] }, { enum: [{ a: [1] }] })).toEqual([]);
    expect(validateJsonSubset({ a: [2] }, { enum: [{ a: [1] }] })).toHaveLength(1);
  });

  it('applies additionalProperties as a schema, and ignores unknown keywords and types', () => {
    expect(validateJsonSubset({ x: 1 }, { type: 'object', additionalProperties: { type: 'string' } })).toEqual(['$.x: expected string, got integer']);
    expect(validateJsonSubset('abc', { type: 'any', minLength: 10 })).toEqual([]);
  });

  it('recognizes only schemas it can apply, inside the usual tool wrappers', () => {
    const params = { type: 'object', properties: {} };
    expect(parameterSchemaOf({ type: 'function', function: { name: 'f', parameters: params } })).toBe(params);
    expect(parameterSchemaOf({ name: 'f', inputSchema: params })).toBe(params);
    expect(parameterSchemaOf(params)).toBe(params);
    expect(parameterSchemaOf({ query: { type: 'string' } })).toBeUndefined();
    expect(isApplicableSchema({})).toBe(false);
  });
});
