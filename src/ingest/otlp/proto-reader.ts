/**
 * A minimal protobuf wire-format reader for the OTLP decoders. Every read is bounds-checked
 * against the body; structural faults end decoding with a {@link DecodeError} naming the
 * byte offset. The reader throws, and only {@link decodeOtlpProto} catches: the throw
 * unwinds the recursive descent, callers outside this module get the error as a value.
 */
import { Buffer, isAscii } from 'node:buffer';
import { DecodeError } from '../../errors.ts';
import { LongText, type TextSource } from '../long-text.ts';
import {
  decodeLongText,
  type InternCache,
  internMaxBytes,
  keyCache,
  lazyTextMinBytes,
  longTextMinBytes,
  type NativeSliceBuffer,
  valueCache,
} from './proto-text.ts';

/** Protobuf wire types. */
export const wireVarint = 0;
export const wireFixed64 = 1;
export const wireLen = 2;
export const wireStartGroup = 3;
export const wireEndGroup = 4;
export const wireFixed32 = 5;

/** Deepest nesting of (deprecated) groups inside an unknown field that {@link ProtoReader.skip} walks. */
export const maxGroupDepth = 32;

/** The last id read through {@link ProtoReader.readRepeatedHex}: its place in the body and its hex. */
export interface HexMemo {
  start: number;
  length: number;
  hex: string;
}

/** A {@link HexMemo} that matches nothing yet; one per reader, since `start` is a place in its body. */
export function emptyHexMemo(): HexMemo {
  return { start: 0, length: -1, hex: '' };
}

const wireTypeNames = ['varint', 'fixed64', 'len', 'start-group', 'end-group', 'fixed32', '6', '7'];

export class ProtoReader {
  /** The body as a Buffer view (no copy): Node's native UTF-8 and base64 slicing are the fastest here. */
  readonly buf: NativeSliceBuffer;
  readonly view: DataView;
  readonly length: number;
  pos = 0;
  /** For {@link readRepeatedHex}: spans of one trace follow each other, siblings share a parent. */
  readonly traceIdMemo = emptyHexMemo();
  readonly parentIdMemo = emptyHexMemo();
  /** Halves of the last {@link readVarint64}, kept on the reader to avoid allocating a pair. */
  low = 0;
  high = 0;
  /** Where long values' bytes stay ({@link readValueText}); without one every value is a string. */
  readonly texts: TextSource | undefined;
  /** Set while reading a span's or span event's attributes: the values that may stay {@link LongText}s. */
  lazyText = false;

  constructor(body: Uint8Array, texts?: TextSource) {
    this.texts = texts;
    this.buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength) as NativeSliceBuffer;
    this.view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    this.length = body.byteLength;
  }

  fail(message: string, byteOffset = this.pos): never {
    throw new DecodeError(message, { context: { byteOffset } });
  }

  /** An unsigned varint of up to 10 bytes; exact below 2^53, which covers every tag, length and enum that can be valid. */
  readVarint(): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    if (pos >= this.length) this.fail(`truncated varint at byte ${start}`, start);
    let byte = buf[pos++]!;
    if (byte < 0x80) {
      this.pos = pos;
      return byte;
    }
    let value = byte & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 10; i++) {
      if (pos >= this.length) this.fail(`truncated varint at byte ${start}`, start);
      byte = buf[pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        this.pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    return this.fail(`varint longer than 10 bytes at byte ${start}`, start);
  }

  /** A 64-bit varint into {@link low} and {@link high} (unsigned 32-bit halves, two's complement). */
  readVarint64(): void {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    let low = 0;
    let high = 0;
    let byte = 0;
    // bytes 0..3 fill bits 0..27 of low
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= this.length) this.fail(`truncated varint at byte ${start}`, start);
      byte = buf[pos++]!;
      low |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.#setHalves(pos, low >>> 0, 0);
    }
    // byte 4 holds bits 28..31 of low and bits 0..2 of high
    if (pos >= this.length) this.fail(`truncated varint at byte ${start}`, start);
    byte = buf[pos++]!;
    low |= (byte & 0x0f) << 28;
    high = (byte & 0x7f) >> 4;
    if (byte < 0x80) return this.#setHalves(pos, low >>> 0, high);
    // bytes 5..9 fill bits 3..34 of high (bits beyond 63 are discarded, as protobuf does)
    for (let shift = 3; shift < 38; shift += 7) {
      if (pos >= this.length) this.fail(`truncated varint at byte ${start}`, start);
      byte = buf[pos++]!;
      high |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.#setHalves(pos, low >>> 0, high >>> 0);
    }
    return this.fail(`varint longer than 10 bytes at byte ${start}`, start);
  }

  #setHalves(pos: number, low: number, high: number): void {
    this.pos = pos;
    this.low = low;
    this.high = high;
  }

  /** Reads a length prefix and returns the end offset of the field it announces. */
  readLengthEnd(): number {
    const start = this.pos;
    const length = this.readVarint();
    const end = this.pos + length;
    if (end > this.length) {
      this.fail(`truncated field: length ${length} at byte ${start} runs past the end of the body (${this.length} bytes)`, start);
    }
    return end;
  }

  /** A length-delimited string; invalid UTF-8 becomes U+FFFD. Short ones come from {@link valueCache}. */
  readString(): string {
    return this.#readText(valueCache);
  }

  /**
   * An attribute's string value: with {@link lazyText} set, one of at least `lazyTextMinBytes`
   * stays a {@link LongText} over the body's bytes (decoded only when read); else a string.
   */
  readValueText(): string | LongText {
    const texts = this.texts;
    if (texts === undefined || !this.lazyText) return this.#readText(valueCache);
    const end = this.readLengthEnd();
    const start = this.pos;
    if (end - start < lazyTextMinBytes) {
      return this.#textAt(valueCache, start, end);
    }
    this.pos = end;
    return new LongText(texts, start, end - start, isAscii(this.buf.subarray(start, end)));
  }

  /** A length-delimited attribute key: like {@link readString}, with keys' own cache so values cannot evict them. */
  readKey(): string {
    return this.#readText(keyCache);
  }

  #readText(cache: InternCache): string {
    const end = this.readLengthEnd();
    return this.#textAt(cache, this.pos, end);
  }

  #textAt(cache: InternCache, start: number, end: number): string {
    this.pos = end;
    const length = end - start;
    if (length <= internMaxBytes) return cache.lookup(this.buf, this.view, start, end);
    if (length < longTextMinBytes) return this.buf.utf8Slice(start, end);
    return decodeLongText(this.buf, start, end);
  }

  /** Length-delimited bytes as lower-case hex (span and trace ids). */
  readHex(): string {
    const end = this.readLengthEnd();
    const start = this.pos;
    this.pos = end;
    return this.buf.hexSlice(start, end);
  }

  /**
   * Like {@link readHex}, for ids that usually equal the previous one read through the same
   * `memo` (the trace id, the parent id of sibling spans): then the previous string is
   * returned, sparing the hex conversion and sharing one string among the spans.
   */
  readRepeatedHex(memo: HexMemo): string {
    const end = this.readLengthEnd();
    const start = this.pos;
    this.pos = end;
    const length = end - start;
    if (length === memo.length && this.#sameBytes(memo.start, start, length)) return memo.hex;
    const hex = this.buf.hexSlice(start, end);
    memo.start = start;
    memo.length = length;
    memo.hex = hex;
    return hex;
  }

  #sameBytes(a: number, b: number, length: number): boolean {
    const view = this.view;
    const wordsLength = length & ~3;
    let i = 0;
    for (; i < wordsLength; i += 4) if (view.getInt32(a + i, true) !== view.getInt32(b + i, true)) return false;
    const buf = this.buf;
    for (; i < length; i++) if (buf[a + i] !== buf[b + i]) return false;
    return true;
  }

  readFixed64(): bigint {
    const start = this.#claim(8);
    return this.view.getBigUint64(start, true);
  }

  readDouble(): number {
    const start = this.#claim(8);
    return this.view.getFloat64(start, true);
  }

  #claim(byteCount: number): number {
    const start = this.pos;
    if (start + byteCount > this.length) this.fail(`truncated ${byteCount}-byte fixed field at byte ${start}`, start);
    this.pos = start + byteCount;
    return start;
  }

  /** Skips the value of an unknown field, including (deprecated) groups. */
  skip(wireType: number, field: number): void {
    switch (wireType) {
      case wireVarint:
        this.readVarint();
        return;
      case wireFixed64:
        this.#claim(8);
        return;
      case wireLen:
        this.pos = this.readLengthEnd();
        return;
      case wireFixed32:
        this.#claim(4);
        return;
      case wireStartGroup:
        this.#skipGroup(field);
        return;
      case wireEndGroup:
        this.fail(`end-group for field ${field} at byte ${this.pos} without a matching start-group`);
      default:
        this.fail(`invalid wire type ${wireType} for field ${field} before byte ${this.pos}`);
    }
  }

  /** Iterative so that hostile nesting cannot exhaust the stack. */
  #skipGroup(outerField: number): void {
    const openFields = [outerField];
    while (openFields.length > 0) {
      const tagStart = this.pos;
      const tag = this.readTag();
      const field = tag >>> 3;
      const wireType = tag & 7;
      if (wireType === wireEndGroup) {
        const open = openFields.pop();
        if (open !== field) this.fail(`end-group for field ${field} at byte ${tagStart} closes group ${open}`, tagStart);
      } else if (wireType === wireStartGroup) {
        if (openFields.length >= maxGroupDepth) this.fail(`groups nested deeper than ${maxGroupDepth} at byte ${tagStart}`, tagStart);
        openFields.push(field);
      } else {
        this.skip(wireType, field);
      }
    }
  }

  /** A field tag; field number 0 and numbers above 2^29 - 1 are invalid. */
  readTag(): number {
    const start = this.pos;
    const tag = this.readVarint();
    if (tag < 8 || tag > 0xffff_ffff) this.fail(`invalid field tag ${tag} at byte ${start}`, start);
    return tag >>> 0;
  }

  /** Fails unless `wireType` is what the schema declares for this field. */
  expectWireType(message: string, field: number, wireType: number, expected: number): void {
    if (wireType !== expected) {
      this.fail(
        `field ${field} of ${message} has wire type ${wireType} (${wireTypeNames[wireType]}), expected ${expected} (${wireTypeNames[expected]}) (before byte ${this.pos})`,
      );
    }
  }

  /** Fails unless a nested message ended exactly at its announced length. */
  expectEnd(message: string, end: number): void {
    if (this.pos !== end) this.fail(`${message} ending at byte ${end} has a field that overruns it (to byte ${this.pos})`, end);
  }
}
