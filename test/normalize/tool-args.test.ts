import { describe, expect, it } from 'vitest';
import { jsonDigest, textDigest } from '../../src/normalize/canonical-json.ts';
import { toToolArgs } from '../../src/normalize/tool-args.ts';

describe('toToolArgs', () => {
  it('keeps a JSON string exactly and parses it', () => {
    const raw = '{"b": 2,  "a": [1]}';
    expect(toToolArgs(raw)).toEqual({ raw, parsed: { b: 2, a: [1] }, digest: jsonDigest({ a: [1], b: 2 }) });
  });

  it('leaves parsed absent for text that is not JSON', () => {
    const args = toToolArgs('find . -name "*.ts"');
    expect('parsed' in args).toBe(false);
    expect(args).toEqual({ raw: 'find . -name "*.ts"', digest: textDigest('find . -name "*.ts"') });
  });

  it('keeps a parsed JSON null as a present value', () => {
    const args = toToolArgs('null');
    expect('parsed' in args).toBe(true);
    expect(args.parsed).toBeNull();
  });

  it('serializes a structured value for raw and uses it as parsed', () => {
    const value = { query: 'x', filters: [{ k: 'v' }] };
    expect(toToolArgs(value)).toEqual({ raw: '{"query":"x","filters":[{"k":"v"}]}', parsed: value, digest: jsonDigest(value) });
  });

  it('gives a structured value and its JSON text the same digest', () => {
    expect(toToolArgs({ a: 1, b: 'two' }).digest).toBe(toToolArgs('{ "b": "two", "a": 1.0 }').digest);
  });

  it('keeps captured empty text as raw ""', () => {
    expect(toToolArgs('')).toEqual({ raw: '', digest: textDigest('') });
  });
});
