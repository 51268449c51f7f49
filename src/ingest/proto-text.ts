/**
 * Strings from protobuf bytes for the protobuf reader: short ones interned by their bytes, long
 * ones through the fastest native decoder that gives the same result as `toString('utf8')`.
 */
import { type Buffer, isAscii, isUtf8, transcode } from 'node:buffer';

/** Longest string, in bytes, that {@link InternCache} holds. */
export const internMaxBytes = 48;

/**
 * Strings at least this long take {@link decodeLongText}. Its extra native calls (the ASCII and
 * UTF-8 checks, the transcoder's setup) have a fixed cost; measured, they pay off from about
 * 1.5 KiB of ASCII and 2.5 KiB of other text.
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
  ucs2Slice(start: number, end: number): string;
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

/** `undefined` in a Node built without ICU. */
const utf8ToUtf16 = typeof transcode === 'function' ? transcode : undefined;

/**
 * A long UTF-8 string, decoded the same as `toString('utf8')` but faster: pure ASCII through
 * latin1 (no UTF-8 state machine), other valid UTF-8 through ICU's transcoder to UTF-16, about
 * twice V8's decoder on LLM text with a few non-ASCII characters. Invalid UTF-8 keeps V8's
 * decoder, whose U+FFFD replacement is the reference.
 */
export function decodeLongText(buf: NativeSliceBuffer, start: number, end: number): string {
  const bytes = buf.subarray(start, end);
  if (isAscii(bytes)) return buf.latin1Slice(start, end);
  if (utf8ToUtf16 !== undefined && isUtf8(bytes)) {
    const utf16 = utf8ToUtf16(bytes, 'utf8', 'utf16le') as NativeSliceBuffer;
    return utf16.ucs2Slice(0, utf16.length);
  }
  return buf.utf8Slice(start, end);
}
