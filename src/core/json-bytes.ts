import { Buffer, isUtf8 } from 'node:buffer';

/**
 * JSON string literals written straight from UTF-8 bytes, so a long text kept as a byte range
 * (of a request body, of a WAL segment) can be spliced into a JSON line without being decoded
 * to a JavaScript string and encoded again.
 *
 * The output is always the bytes of `JSON.stringify(text)` where `text` is the bytes decoded
 * as `Buffer#toString('utf8')` decodes them. Valid UTF-8 takes the fast path: it is copied in
 * runs, and only `"`, `\` and bytes below 0x20 are escaped (`\b \t \n \f \r`, otherwise
 * `\u00xx` in lower-case hex), exactly as `JSON.stringify` escapes them; it leaves 0x7f,
 * U+2028 and U+2029 alone, and valid UTF-8 holds no lone surrogate for it to escape. Invalid
 * UTF-8 (rare: a truncated or foreign-encoded text) takes the slow path, decode + stringify +
 * encode, because the reference is V8's decoder with its U+FFFD replacements and reproducing
 * its rules byte by byte is a second implementation to keep in step for no gain.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;
const ZERO = 0x30;
const HEX_DIGITS = new TextEncoder().encode('0123456789abcdef');

/** Below this many bytes a run is copied in a loop: `subarray` + `set` cost more for it. */
const SHORT_RUN_BYTES = 16;

/** Per byte: its escaped length in a JSON string (1: copied as it is). */
const ESCAPED_LENGTH = new Uint8Array(256).fill(1);
/** Per byte needing a two-byte escape: the letter after the backslash (0: a `\u00xx` byte). */
const SHORT_ESCAPE = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) ESCAPED_LENGTH[b] = 6;
for (const [byte, letter] of [
  [0x08, 'b'],
  [0x09, 't'],
  [0x0a, 'n'],
  [0x0c, 'f'],
  [0x0d, 'r'],
  [QUOTE, '"'],
  [BACKSLASH, '\\'],
] as const) {
  ESCAPED_LENGTH[byte] = 2;
  SHORT_ESCAPE[byte] = letter.charCodeAt(0);
}

/**
 * The exact byte length of the JSON string literal, quotes included, of the UTF-8 bytes
 * `src[start, end)`: what {@link writeJsonString} will write.
 *
 * @example jsonStringLength(Buffer.from('a"b\n'), 0, 4) === 8 // "a\"b\n"
 */
export function jsonStringLength(src: Uint8Array, start: number, end: number): number {
  checkRange(src, start, end);
  const bytes = src.subarray(start, end);
  return isUtf8(bytes) ? validLength(src, start, end) : Buffer.byteLength(slowJson(bytes), 'utf8');
}

/**
 * Writes the JSON string literal, quotes included, of the UTF-8 bytes `src[start, end)` at
 * `dst[at..]` and returns the position after it. `dst` needs {@link jsonStringLength} bytes
 * from `at`; a `dst` too short is a caller's bug and throws a `RangeError`, with part of the
 * literal possibly written.
 *
 * @example
 * const dst = Buffer.alloc(jsonStringLength(src, 0, src.length));
 * writeJsonString(src, 0, src.length, dst, 0) === dst.length;
 */
export function writeJsonString(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  checkRange(src, start, end);
  if (!Number.isInteger(at) || at < 0 || at > dst.length) throw new RangeError(`json-bytes: write position ${at} outside dst[0, ${dst.length}]`);
  const bytes = src.subarray(start, end);
  return isUtf8(bytes) ? writeValid(src, start, end, dst, at) : writeSlow(bytes, dst, at);
}

/**
 * The JSON string literal of the UTF-8 bytes `src[start, end)` in a new buffer of its exact
 * length.
 *
 * @example jsonStringBytes(Buffer.from('tab\there'), 0, 8).toString() === '"tab\\there"'
 */
export function jsonStringBytes(src: Uint8Array, start: number, end: number): Buffer {
  checkRange(src, start, end);
  const bytes = src.subarray(start, end);
  if (!isUtf8(bytes)) return Buffer.from(slowJson(bytes), 'utf8');
  const out = Buffer.allocUnsafe(validLength(src, start, end));
  writeValid(src, start, end, out, 0);
  return out;
}

function validLength(src: Uint8Array, start: number, end: number): number {
  const scan = new EscapeScan(src, start, end);
  let length = 2 + end - start;
  for (let i = scan.next(start); i < end; i = scan.next(i + 1)) length += ESCAPED_LENGTH[src[i]!]! - 1;
  return length;
}

function writeValid(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  const scan = new EscapeScan(src, start, end);
  let o = room(dst, at, 1);
  dst[o++] = QUOTE;
  let run = start;
  for (let i = scan.next(start); i < end; i = scan.next(i + 1)) {
    o = copyRun(src, run, i, dst, o);
    o = writeEscape(src[i]!, dst, o);
    run = i + 1;
  }
  o = copyRun(src, run, end, dst, o);
  room(dst, o, 1);
  dst[o++] = QUOTE;
  return o;
}

/** Below this many bytes a range is scanned byte by byte: the word view costs more than it saves. */
const WORD_SCAN_MIN_BYTES = 64;

/**
 * Finds the next byte needing an escape in `src[start, end)`, four bytes at a time over the
 * aligned middle (a SWAR test: is any byte below 0x20, `"` or `\`), then byte by byte inside
 * a word that may hold one; prose has few such bytes, so most words pass in one test.
 */
class EscapeScan {
  readonly #src: Uint8Array;
  readonly #end: number;
  readonly #words: Uint32Array | undefined;
  /** The src index of `#words[0]` and the one after its last word. */
  readonly #wordStart: number;
  readonly #wordEnd: number;

  constructor(src: Uint8Array, start: number, end: number) {
    this.#src = src;
    this.#end = end;
    const first = start + ((4 - ((src.byteOffset + start) & 3)) & 3);
    const count = Math.max(0, (end - first) >> 2);
    this.#wordStart = first;
    this.#wordEnd = first + 4 * count;
    this.#words = end - start >= WORD_SCAN_MIN_BYTES ? new Uint32Array(src.buffer, src.byteOffset + first, count) : undefined;
  }

  /** The index of the first byte from `from` that needs an escape, or `end`. */
  next(from: number): number {
    const src = this.#src;
    const words = this.#words;
    let i = from;
    while (i < this.#end) {
      if (words !== undefined && i >= this.#wordStart && i < this.#wordEnd && ((i - this.#wordStart) & 3) === 0) {
        let w = (i - this.#wordStart) >> 2;
        while (w < words.length && !mayNeedEscape(words[w]!)) w++;
        i = this.#wordStart + 4 * w;
        if (i >= this.#end) break;
        // the flagged word (or the tail after the last word) is read byte by byte
        const stop = Math.min(i + 4, this.#end);
        for (; i < stop; i++) if (ESCAPED_LENGTH[src[i]!] !== 1) return i;
        continue;
      }
      if (ESCAPED_LENGTH[src[i]!] !== 1) return i;
      i++;
    }
    return this.#end;
  }
}

/**
 * Whether any byte of `v` is below 0x20, 0x22 or 0x5c: the classic "has a byte less than n"
 * and "has a zero byte" tests. Exact as to whether; the caller finds which byte by reading the
 * word's four.
 */
function mayNeedEscape(v: number): boolean {
  const quote = v ^ 0x22222222;
  const backslash = v ^ 0x5c5c5c5c;
  return ((((v - 0x20202020) & ~v) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) !== 0;
}

function checkRange(src: Uint8Array, start: number, end: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || start > end || end > src.length) {
    throw new RangeError(`json-bytes: range [${start}, ${end}) outside src[0, ${src.length})`);
  }
}

/** `at` if `dst` has `length` bytes from it; indexed writes past the end would be dropped silently. */
function room(dst: Uint8Array, at: number, length: number): number {
  if (at + length > dst.length) throw new RangeError(`json-bytes: dst of ${dst.length} bytes too short to write ${length} at ${at}`);
  return at;
}

function copyRun(src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number): number {
  const length = to - from;
  if (length === 0) return at;
  if (length >= SHORT_RUN_BYTES) {
    dst.set(src.subarray(from, to), at); // throws a RangeError itself when dst is short
    return at + length;
  }
  room(dst, at, length);
  for (let i = from; i < to; i++) dst[at++] = src[i]!;
  return at;
}

function writeEscape(b: number, dst: Uint8Array, at: number): number {
  const letter = SHORT_ESCAPE[b]!;
  if (letter !== 0) {
    room(dst, at, 2);
    dst[at] = BACKSLASH;
    dst[at + 1] = letter;
    return at + 2;
  }
  room(dst, at, 6);
  dst[at] = BACKSLASH;
  dst[at + 1] = LOWER_U;
  dst[at + 2] = ZERO;
  dst[at + 3] = ZERO;
  dst[at + 4] = HEX_DIGITS[b >> 4]!;
  dst[at + 5] = HEX_DIGITS[b & 0xf]!;
  return at + 6;
}

/** The reference itself, for invalid UTF-8: V8's decoder replaces each bad sequence with U+FFFD. */
function slowJson(bytes: Uint8Array): string {
  return JSON.stringify(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
}

function writeSlow(bytes: Uint8Array, dst: Uint8Array, at: number): number {
  const encoded = Buffer.from(slowJson(bytes), 'utf8');
  dst.set(encoded, room(dst, at, encoded.length));
  return at + encoded.length;
}
