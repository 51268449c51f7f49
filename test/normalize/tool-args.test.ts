import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDigest, textDigest } from '../../src/normalize/args-digest.ts';
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

describe('toToolArgs reads a recorded call f(*args, **kwargs) as the call it records', () => {
  // Shapes as the instrumentations wrote them in the issue-19 captures.
  const wrapped = {
    openllmetry: '{"args": [], "kwargs": {"city": "Paris"}}',
    llamaindex: '{"kwargs": {"city": "Paris"}}',
    smolagents: '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"city": "Paris"}}',
  };

  it.each(Object.entries(wrapped))('%s: parsed is the keyword arguments, raw exactly as captured', (_name, raw) => {
    expect(toToolArgs(raw, 'json')).toEqual({ raw, parsed: { city: 'Paris' }, recorded: 'kwargs', digest: jsonDigest({ city: 'Paris' }), declared: 'json' });
  });

  it('gives one call one digest however it was wrapped, and the same as the plain arguments', () => {
    const digests = new Set([...Object.values(wrapped), '{"city":"Paris"}', { kwargs: { city: 'Paris' } }].map((v) => toToolArgs(v).digest));
    expect(digests.size).toBe(1);
    expect(toToolArgs(wrapped.openllmetry).digest).not.toBe(toToolArgs('{"args": [], "kwargs": {"city": "Rome"}}').digest);
  });

  it('reads a call with no arguments at all as {}', () => {
    expect(toToolArgs('{"args": []}')).toMatchObject({ parsed: {}, recorded: 'kwargs' });
  });

  it('leaves a call with positional arguments as captured: positions cannot be named', () => {
    const raw = '{"args": ["Paris"], "kwargs": {}}';
    expect(toToolArgs(raw)).toEqual({ raw, parsed: { args: ['Paris'], kwargs: {} }, digest: jsonDigest({ args: ['Paris'], kwargs: {} }) });
  });

  it('leaves shapes not known to be a call as they are', () => {
    for (const raw of [
      '{"kwargs": {"color": "green"}, "metadata": {"thread_id": "t1"}}', // structured member beside them
      '{"args": "Paris"}', // args not an array
      '{"kwargs": ["Paris"]}', // kwargs not an object
      '[{"kwargs": {}}]',
    ]) {
      const args = toToolArgs(raw);
      expect(args.parsed, raw).toEqual(JSON.parse(raw));
      expect('recorded' in args, raw).toBe(false);
    }
  });
});

describe('toToolArgs digest of recorded calls (property)', () => {
  const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  const kwargs = fc.dictionary(
    fc.string().filter((k) => k !== '__proto__'),
    json,
  );

  it('a call with no positional arguments has the digest of its keyword arguments, however wrapped', () => {
    fc.assert(
      fc.property(kwargs, fc.boolean(), fc.option(fc.boolean(), { nil: undefined }), (kw, withArgs, flag) => {
        const record: Record<string, unknown> = { kwargs: kw };
        if (withArgs) record['args'] = [];
        if (flag !== undefined) record['sanitize_inputs_outputs'] = flag;
        const args = toToolArgs(JSON.stringify(record));
        expect(args.recorded).toBe('kwargs');
        expect(args.parsed).toEqual(kw);
        expect(args.digest).toBe(jsonDigest(kw));
        expect(args.raw).toBe(JSON.stringify(record));
      }),
    );
  });
});
