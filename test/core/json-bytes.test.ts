import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonStringBytes, jsonStringLength, writeJsonString } from '../../src/core/json-bytes.ts';

/** The contract's reference: decode as Buffer does, stringify, encode. */
function reference(src: Uint8Array, start: number, end: number): Buffer {
  return Buffer.from(JSON.stringify(Buffer.from(src.subarray(start, end)).toString('utf8')), 'utf8');
}

/** Checks all three functions on `src[start, end)` against the reference, writing at `at` into a larger dst. */
function expectLikeReference(src: Uint8Array, start = 0, end = src.length, at = 0, slack = 0): void {
  const expected = reference(src, start, end);
  expect(jsonStringLength(src, start, end)).toBe(expected.length);
  expect(jsonStringBytes(src, start, end)).toEqual(expected);
  const dst = new Uint8Array(at + expected.length + slack).fill(0xaa);
  expect(writeJsonString(src, start, end, dst, at)).toBe(at + expected.length);
  expect(Buffer.from(dst.subarray(at, at + expected.length))).toEqual(expected);
  // nothing written outside the literal
  expect(dst.subarray(0, at).every((b) => b === 0xaa)).toBe(true);
  expect(dst.subarray(at + expected.length).every((b) => b === 0xaa)).toBe(true);
}

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

/** Bytes that stress the escaper: controls, quotes, backslashes, 0x7f, multi-byte leads and continuations. */
const trickyByte = fc.oneof(
  fc.integer({ min: 0, max: 0x20 }),
  fc.constantFrom(0x22, 0x5c, 0x7f, 0x41, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff),
  fc.integer({ min: 0, max: 255 }),
);

/** Fragments of valid and invalid UTF-8 that arbitrary bytes rarely hit. */
const fragment = fc.oneof(
  fc.constantFrom(
    [0xed, 0xa0, 0x80], // U+D800 encoded: a surrogate, invalid in UTF-8
    [0xed, 0xbf, 0xbf], // U+DFFF encoded
    [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80], // a surrogate pair encoded as two (CESU-8)
    [0xc0, 0x80], // overlong NUL
    [0xc1, 0xbf], // overlong 0x7f
    [0xe0, 0x80, 0xaf], // overlong '/'
    [0xf0, 0x80, 0x80, 0xaf], // overlong '/' in four bytes
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xe2, 0x82], // truncated €
    [0xf0, 0x9f, 0x98], // truncated emoji
    [0xe2, 0x80, 0xa8], // U+2028, which JSON.stringify leaves alone
    [0xe2, 0x80, 0xa9], // U+2029
    [0xef, 0xbb, 0xbf], // BOM, kept by the decoder
    [0xef, 0xbf, 0xbd], // U+FFFD itself
  ),
  fc.array(trickyByte, { maxLength: 4 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => [...Buffer.from(s, 'utf8')]),
);
const trickyBytes = fc.array(fragment, { maxLength: 40 }).map((parts) => new Uint8Array(parts.flat()));

/** A buffer with a range inside it, and a write offset and slack for the dst. */
const withRange = (bytes: fc.Arbitrary<Uint8Array>) =>
  bytes.chain((src) =>
    fc.record({
      src: fc.constant(src),
      start: fc.nat({ max: src.length }),
      width: fc.nat({ max: src.length }),
      at: fc.nat({ max: 40 }),
      slack: fc.nat({ max: 8 }),
    }),
  );

describe('json-bytes', () => {
  it('escapes quotes, backslashes and controls as JSON.stringify does', () => {
    expect(jsonStringBytes(utf8('a"b\\c'), 0, 5).toString()).toBe('"a\\"b\\\\c"');
    expect(jsonStringBytes(utf8('\b\t\n\f\r'), 0, 5).toString()).toBe('"\\b\\t\\n\\f\\r"');
    expect(jsonStringBytes(new Uint8Array([0x00, 0x1f, 0x0b, 0x7f]), 0, 4).toString()).toBe('"\\u0000\\u001f\\u000b\u007f"');
    expect(jsonStringBytes(new Uint8Array(), 0, 0).toString()).toBe('""');
  });

  it('copies valid multi-byte text, U+2028 and U+2029 byte for byte', () => {
    const text = 'héllo € 😀 \u2028\u2029 日本';
    const src = utf8(text);
    expect(jsonStringBytes(src, 0, src.length)).toEqual(Buffer.from(`"${text}"`, 'utf8'));
  });

  it('replaces invalid UTF-8 with U+FFFD as the decoder does', () => {
    // a lone surrogate's encoding: three replacements, as V8 decodes it
    expect(jsonStringBytes(new Uint8Array([0x61, 0xed, 0xa0, 0x80, 0x62]), 0, 5).toString()).toBe('"a\ufffd\ufffd\ufffdb"');
    // a truncated sequence followed by a quote: one replacement, and the quote still escaped
    expect(jsonStringBytes(new Uint8Array([0xe2, 0x82, 0x22]), 0, 3).toString()).toBe('"\ufffd\\""');
    expectLikeReference(new Uint8Array([0xc0, 0x80, 0xff, 0x0a]));
  });

  it('reads only its range and writes only its literal', () => {
    const src = utf8('xx"a\nb"yy');
    expect(jsonStringBytes(src, 2, 7).toString()).toBe('"\\"a\\nb\\""');
    expectLikeReference(src, 2, 7, 5, 3);
    // the range cuts a multi-byte character: invalid inside the range even though the buffer is valid
    const euro = utf8('a€b');
    expect(jsonStringBytes(euro, 0, 3).toString()).toBe('"a\ufffd"');
    expectLikeReference(euro, 2, 5, 1, 1);
  });

  it('refuses a bad range and a dst too short', () => {
    const src = utf8('abc');
    expect(() => jsonStringLength(src, 2, 1)).toThrow(RangeError);
    expect(() => jsonStringLength(src, 0, 4)).toThrow(RangeError);
    expect(() => writeJsonString(src, 0, 3, new Uint8Array(10), 11)).toThrow(RangeError);
    for (const text of ['abc', 'a\n', 'a\u0001', 'x'.repeat(40)]) {
      const bytes = utf8(text);
      const length = jsonStringLength(bytes, 0, bytes.length);
      expect(() => writeJsonString(bytes, 0, bytes.length, new Uint8Array(length - 1), 0)).toThrow(RangeError);
      expect(() => writeJsonString(bytes, 0, bytes.length, new Uint8Array(length + 2), 3)).toThrow(RangeError);
    }
    expect(() => writeJsonString(new Uint8Array([0xff]), 0, 1, new Uint8Array(4), 0)).toThrow(RangeError);
  });

  it('equals the reference on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (src) => expectLikeReference(src)),
      { numRuns: 500 },
    );
  });

  it('equals the reference on bytes dense in escapes, invalid sequences, surrogates and overlongs', () => {
    fc.assert(
      fc.property(trickyBytes, (src) => expectLikeReference(src)),
      { numRuns: 1000 },
    );
  });

  it('equals the reference on any Unicode text encoded as UTF-8', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => expectLikeReference(utf8(text))),
      { numRuns: 500 },
    );
  });

  it('equals the reference on text dense in quotes, backslashes and controls, with long plain runs', () => {
    const piece = fc.oneof(
      fc.constantFrom('"', '\\', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '😀'),
      fc.string({ unit: 'grapheme-ascii', minLength: 10, maxLength: 60 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => expectLikeReference(utf8(pieces.join('')))),
      { numRuns: 500 },
    );
  });

  it('equals the reference on sub-ranges written at an offset into a larger dst', () => {
    const anyBytes = fc.oneof(trickyBytes, fc.string({ unit: 'binary', maxLength: 100 }).map(utf8));
    fc.assert(
      fc.property(withRange(anyBytes), ({ src, start, width, at, slack }) => {
        const end = Math.min(src.length, start + width);
        expectLikeReference(src, start, end, at, slack);
      }),
      { numRuns: 1000 },
    );
  });

  it('equals the reference on views at any byte offset into their buffer (word alignment)', () => {
    const text = fc
      .string({ unit: 'binary', minLength: 60, maxLength: 300 })
      .map((t) => t.replace(/[aeiou]/g, (c) => ({ a: '"', e: '\\', i: '\n' })[c as 'a'] ?? c));
    fc.assert(
      fc.property(text, fc.nat({ max: 7 }), (t, offset) => {
        const bytes = utf8(t);
        const backing = new Uint8Array(offset + bytes.length + 3);
        backing.set(bytes, offset);
        expectLikeReference(new Uint8Array(backing.buffer, offset, bytes.length));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a range of a Uint8Array view with a byte offset into its buffer', () => {
    const backing = utf8('----"quoted\ttext é"----');
    const view = new Uint8Array(backing.buffer, 4, backing.length - 8);
    expectLikeReference(view, 1, view.length - 1, 2, 2);
  });
});
