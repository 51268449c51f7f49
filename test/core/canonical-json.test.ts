import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical-json.ts';
import { argsDigest, jsonDigest, textDigest } from '../../src/normalize/args-digest.ts';

/** JSON values; `-0` included since canonical form must fold it into `0`. */
const jsonValue = fc.jsonValue({ maxDepth: 4 });

/** Re-serializes `value` with keys in a shuffled order and random insignificant whitespace. */
function reformat(value: unknown, order: (keys: string[]) => string[], space: string): string {
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return '[' + space + v.map(write).join(space + ',' + space) + space + ']';
    if (typeof v === 'object' && v !== null) {
      const record = v as Record<string, unknown>;
      const members = order(Object.keys(record)).map((key) => JSON.stringify(key) + space + ':' + space + write(record[key]));
      return '{' + space + members.join(',' + space) + space + '}';
    }
    return JSON.stringify(v);
  };
  return write(value);
}

describe('canonicalJson', () => {
  it('sorts keys, drops whitespace and normalizes numbers', () => {
    expect(canonicalJson({ b: 1.0, a: [true, -0, null, 'x'], c: { z: 1, y: 2.5e1 } })).toBe('{"a":[true,0,null,"x"],"b":1,"c":{"y":25,"z":1}}');
    expect(canonicalJson(JSON.parse('{ "n" : 1.000 , "m" : 1E0 , "k": 100e-2 }'))).toBe('{"k":1,"m":1,"n":1}');
  });

  it('escapes strings as JSON.stringify does, including control and lone-surrogate characters', () => {
    expect(canonicalJson('a"b\\c\n\u0001\ud800')).toBe(JSON.stringify('a"b\\c\n\u0001\ud800'));
  });

  it('sorts keys by UTF-16 code units, not by locale', () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, a: 4 })).toBe('{"B":2,"a":4,"b":1,"é":3}');
  });

  it('writes what JSON cannot hold as JSON.stringify would, and a bigint exactly', () => {
    expect(canonicalJson([Number.NaN, Infinity, undefined])).toBe('[null,null,null]');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson(12345678901234567890n)).toBe('12345678901234567890');
  });

  it('orders the members of small and large objects as Array#sort orders their keys', () => {
    // Keys that are not array indices, so Object.keys of the parsed text keeps the text's order.
    const key = fc.string({ maxLength: 4 }).map((k) => `k${k}`);
    fc.assert(
      fc.property(fc.dictionary(key, fc.integer(), { maxKeys: 40 }), (object) => {
        const keys = Object.keys(JSON.parse(canonicalJson(object)) as object);
        expect(keys).toEqual(Object.keys(object).sort());
      }),
    );
  });

  it('is idempotent: canonical text parses back to the same canonical text', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const canonical = canonicalJson(value);
        expect(canonicalJson(JSON.parse(canonical))).toBe(canonical);
      }),
    );
  });

  it('agrees with JSON.stringify on the parsed value, up to key order', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('argsDigest', () => {
  it('does not change with key order or whitespace', () => {
    fc.assert(
      fc.property(jsonValue, fc.boolean(), fc.constantFrom('', ' ', '\n  ', '\t'), (value, reverse, space) => {
        const plain = JSON.stringify(value);
        const shuffled = reformat(value, (keys) => (reverse ? [...keys].reverse() : keys), space);
        expect(argsDigest(shuffled)).toBe(argsDigest(plain));
      }),
    );
  });

  it('differs for different values', () => {
    fc.assert(
      fc.property(jsonValue, jsonValue, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(argsDigest(JSON.stringify(a))).not.toBe(argsDigest(JSON.stringify(b)));
      }),
    );
  });

  it('treats 1, 1.0 and 1e0 as the same number and -0 as 0', () => {
    expect(argsDigest('{"n": 1.0}')).toBe(argsDigest('{"n":1}'));
    expect(argsDigest('{"n":1e0}')).toBe(argsDigest('{"n":1}'));
    expect(argsDigest('[-0]')).toBe(argsDigest('[0]'));
    expect(argsDigest('{"n":1}')).not.toBe(argsDigest('{"n":"1"}'));
  });

  it('digests non-JSON as exact text, never colliding with a JSON digest', () => {
    expect(argsDigest('ls -la')).toBe(textDigest('ls -la'));
    expect(argsDigest('ls -la')).not.toBe(argsDigest('ls  -la'));
    // The text `"x"` parses as JSON; a text digest of it must not equal the JSON digest.
    expect(textDigest('"x"')).not.toBe(jsonDigest('x'));
    expect(argsDigest('"x"')).toBe(jsonDigest('x'));
    expect(argsDigest('{"a":1')).toBe(textDigest('{"a":1'));
  });

  it('is sha256 hex', () => {
    expect(argsDigest('{}')).toMatch(/^[0-9a-f]{64}$/);
  });
});
