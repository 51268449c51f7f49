import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProtoReader } from '../../../src/ingest/otlp/proto-reader.ts';
import { decodeLongText, InternCache, internMaxBytes, longTextMinBytes, type NativeSliceBuffer } from '../../../src/ingest/otlp/proto-text.ts';
import { varint } from '../../fixtures/otlp/proto-bytes.ts';

function lengthDelimited(...payloads: Uint8Array[]): Uint8Array {
  return Buffer.concat(payloads.flatMap((payload) => [Buffer.from(varint(payload.length)), payload]));
}

function lookupAll(cache: InternCache, texts: readonly string[]): string[] {
  const body = lengthDelimited(...texts.map((text) => Buffer.from(text)));
  const reader = new ProtoReader(body);
  return texts.map(() => {
    const end = reader.readLengthEnd();
    const text = cache.lookup(reader.buf, reader.view, reader.pos, end);
    reader.pos = end;
    return text;
  });
}

const shortText = fc.string({ unit: 'binary', maxLength: 16 }).filter((text) => Buffer.byteLength(text) <= internMaxBytes);

describe('InternCache', () => {
  it('gives the very string it decoded before for the same bytes at another place', () => {
    const cache = new InternCache(64);
    const [first, again] = lookupAll(cache, ['gen_ai.operation.name', 'gen_ai.operation.name']);
    expect(first).toBe('gen_ai.operation.name');
    expect(again).toBe(first);
  });

  it('decodes every string as toString("utf8") would, even when all share one slot', () => {
    fc.assert(
      fc.property(fc.array(shortText, { maxLength: 40 }), fc.constantFrom(1, 2, 1024), (texts, slotCount) => {
        const cache = new InternCache(slotCount);
        const decoded = [...lookupAll(cache, texts), ...lookupAll(cache, texts)];
        expect(decoded).toEqual([...texts, ...texts].map((text) => Buffer.from(text).toString('utf8')));
      }),
    );
  });

  it('tells apart keys that differ only in the middle or the tail', () => {
    const keys = ['llm.input_messages.0.message.content', 'llm.input_messages.1.message.content', 'ab', 'ac', 'abcde', 'abcdf'];
    const cache = new InternCache(1); // every key collides in the one slot
    expect(lookupAll(cache, [...keys, ...keys.toReversed()])).toEqual([...keys, ...keys.toReversed()]);
  });

  it('stays within its slots however many distinct keys arrive', () => {
    const cache = new InternCache(16);
    const keys = Array.from({ length: 5000 }, (_, i) => `attacker.key.${i}`);
    expect(lookupAll(cache, keys)).toEqual(keys);
    expect(cache.occupiedSlots()).toBeLessThanOrEqual(16);
    expect(cache.occupiedSlots()).toBeGreaterThan(0);
  });
});

describe('decodeLongText', () => {
  const longBytes = fc
    .tuple(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
      fc.boolean(),
    )
    .map(([piece, corruptions, corrupt]) => {
      const bytes = Buffer.from('x'.repeat(longTextMinBytes) + piece.repeat(Math.ceil(longTextMinBytes / piece.length)));
      if (corrupt) for (const [at, byte] of corruptions) bytes[at % bytes.length] = byte;
      return bytes;
    });

  it('gives the same string as toString("utf8") for ASCII, other valid UTF-8 and invalid UTF-8', () => {
    fc.assert(
      fc.property(longBytes, fc.nat(7), (bytes, offset) => {
        const padded = Buffer.concat([Buffer.alloc(offset, 0x41), bytes]) as NativeSliceBuffer;
        expect(decodeLongText(padded, offset, padded.length)).toBe(bytes.toString('utf8'));
      }),
    );
  });

  it('keeps a byte-order mark, surrogate pairs and U+FFFF as they are', () => {
    const text = `\ufeff${'a'.repeat(longTextMinBytes)}😀\uffff\u{10ffff}é`;
    const bytes = Buffer.from(text) as NativeSliceBuffer;
    expect(decodeLongText(bytes, 0, bytes.length)).toBe(text);
  });
});

describe('ProtoReader strings and ids', () => {
  it('reads strings of every size class as toString("utf8") would', () => {
    const sizes = [0, 1, internMaxBytes, internMaxBytes + 1, longTextMinBytes - 1, longTextMinBytes, 3 * longTextMinBytes];
    fc.assert(
      fc.property(fc.constantFrom(...sizes), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }), (size, piece) => {
        const bytes = Buffer.from(piece.repeat(size)).subarray(0, size);
        const reader = new ProtoReader(lengthDelimited(bytes, bytes));
        const expected = bytes.toString('utf8');
        expect([reader.readString(), reader.readKey()]).toEqual([expected, expected]);
      }),
    );
  });

  it('reads repeated ids as the hex of their own bytes, whatever came before', () => {
    const id = fc.uint8Array({ minLength: 0, maxLength: 16 });
    fc.assert(
      fc.property(fc.array(fc.oneof(id, fc.constant(new Uint8Array(16).fill(7))), { maxLength: 20 }), (ids) => {
        const reader = new ProtoReader(lengthDelimited(...ids));
        const read = ids.map(() => reader.readRepeatedHex(reader.traceIdMemo));
        expect(read).toEqual(ids.map((bytes) => Buffer.from(bytes).toString('hex')));
      }),
    );
  });
});
