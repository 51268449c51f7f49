/**
 * Strings from protobuf bytes for the protobuf reader: short ones interned by their bytes, long
 * ones through the fastest native decoder that gives the same result as `toString('utf8')`.
 */
import { type Buffer, isAscii } from 'node:buffer';

/** Longest string, in bytes, that {@link InternCache} holds. */
export const internMaxBytes = 48;

/**
 * Attribute values at least this long stay `LongText`s (by reference) when the decoder has a
 * text source. Measured on TRAIL spans held open (docs/performance.md, fourth round): heap per
 * buffered span 71 KB with every value a string, 13.8 KB from 2 KiB, 3.2 KB from 512 B, 2.5 KB
 * from 128 B; below 512 B each reference (~50 B) saves little against the value it replaces.
 */
export const lazyTextMinBytes = 512;

/**
 * Strings at least this long take {@link decodeLongText}. Its ASCII check is one more native
 * call and a view of the bytes; measured when it was introduced, the latin1 path pays for them
 * from about 1.5 KiB of ASCII. Shorter strings go straight to V8's decoder.
 */
export const longTextMinBytes = 2048;

/**
 * Buffer's native slicers, called directly: `toString(encoding, start, end)` adds argument
 * checks and an encoding lookup that cost more than the decode of a short string. They are
 * present on every Node Buffer (protobufjs calls `utf8Slice` the same way) but not typed.
 */
export interface NativeSliceBuffer extends Buffer {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
}

/**
 * A direct-mapped cache of short strings by their UTF-8 bytes. Repeated attribute keys and
 * values (operation, model and provider names) then skip the UTF-8 decode, and every span
 * shares one string instead of holding its own copy. Bounded by construction: a fixed number
 * of slots, each holding at most {@link internMaxBytes}; distinct input only evicts.
 * Results never depend on its contents.
 */
export class InternCache {
  readonly slotCount: number;
  readonly #strings: (string | undefined)[];
  readonly #lengths: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;

  /** `slotCount` must be a power of two. */
  constructor(slotCount: number) {
    this.slotCount = slotCount;
    this.#strings = new Array<string | undefined>(slotCount).fill(undefined);
    this.#lengths = new Int32Array(slotCount);
    this.#bytes = new Uint8Array(slotCount * internMaxBytes);
    this.#view = new DataView(this.#bytes.buffer);
  }

  /**
   * The string for `buf[start, end)` (at most {@link internMaxBytes} long), decoded only on a
   * miss. `view` covers the same bytes as `buf`: hashing and comparing go four bytes at a time.
   */
  lookup(buf: NativeSliceBuffer, view: DataView, start: number, end: number): string {
    const length = end - start;
    const wordsEnd = start + (length & ~3);
    let hash = length;
    for (let i = start; i < wordsEnd; i += 4) hash = Math.imul(hash ^ view.getInt32(i, true), 0x0100_0193);
    for (let i = wordsEnd; i < end; i++) hash = Math.imul(hash ^ buf[i]!, 0x0100_0193);
    const slot = (hash ^ (hash >>> 15)) & (this.slotCount - 1);
    const base = slot * internMaxBytes;
    const cached = this.#strings[slot];
    if (cached !== undefined && this.#lengths[slot] === length && this.#holds(base, buf, view, start, end, wordsEnd)) return cached;
    const text = buf.utf8Slice(start, end);
    this.#strings[slot] = text;
    this.#lengths[slot] = length;
    const bytes = this.#bytes;
    for (let i = 0; i < length; i++) bytes[base + i] = buf[start + i]!;
    return text;
  }

  #holds(base: number, buf: NativeSliceBuffer, view: DataView, start: number, end: number, wordsEnd: number): boolean {
    const cachedView = this.#view;
    let at = base;
    for (let i = start; i < wordsEnd; i += 4, at += 4) if (cachedView.getInt32(at, true) !== view.getInt32(i, true)) return false;
    const bytes = this.#bytes;
    for (let i = wordsEnd; i < end; i++, at++) if (bytes[at] !== buf[i]) return false;
    return true;
  }

  /** How many slots hold a string (for tests: it never exceeds {@link slotCount}). */
  occupiedSlots(): number {
    return this.#strings.reduce((count, text) => (text === undefined ? count : count + 1), 0);
  }
}

/** Caches shared by every reader: keys and values apart, so unique values do not evict keys. */
export const keyCache = new InternCache(1024);
export const valueCache = new InternCache(1024);

/**
 * A long UTF-8 string, decoded the same as `toString('utf8')`: pure ASCII through latin1 (no
 * UTF-8 state machine), other text through V8's decoder, whose U+FFFD replacement of invalid
 * bytes is the reference. ICU's transcoder to UTF-16 decodes non-ASCII text ~25 % faster in
 * isolation, but its intermediate buffer is external memory V8 must collect, and `serve` on
 * TRAIL ran ~9 % slower with it (docs/performance.md, change 9).
 */
export function decodeLongText(buf: NativeSliceBuffer, start: number, end: number): string {
  return isAscii(buf.subarray(start, end)) ? buf.latin1Slice(start, end) : buf.utf8Slice(start, end);
}
