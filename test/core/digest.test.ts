import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalDigest, sha256Bytes, sha256Hex } from '../../src/core/digest.ts';

describe('core digests', () => {
  it('hash the UTF-8 bytes of a text, as bytes and as hex, like node:crypto', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const expected = createHash('sha256').update(text, 'utf8').digest();
        expect(sha256Bytes(text).equals(expected)).toBe(true);
        expect(sha256Hex(text)).toBe(expected.toString('hex'));
      }),
    );
  });

  it('digest a value by its canonical JSON, so key order does not change it', () => {
    expect(canonicalDigest({ b: 1.0, a: [true, -0] })).toBe(sha256Hex('{"a":[true,0],"b":1}'));
    expect(canonicalDigest({ a: 1, b: 2 })).toBe(canonicalDigest({ b: 2, a: 1 }));
  });
});
