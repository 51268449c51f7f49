import { Buffer } from 'node:buffer';
import { StorageError } from '../errors.ts';
import type { NativeSliceBuffer } from './otlp/proto-text.ts';

/**
 * Long captured text kept as bytes where they already are, not as a JS string: the request
 * body while it is hot, the span write-ahead log once the request is durable there. Prompts,
 * messages and tool results are most of an agent's telemetry; held as strings through a
 * trajectory's quiet period they were most of the heap and of the garbage collector's work
 * (docs/performance.md, fourth round). Nothing decodes them unless a reader asks.
 */

/** Where a request's bytes can be read again once its body is let go: a WAL segment file. */
export interface TextFile {
  /** Reads `length` bytes at `position`, or throws a `StorageError` (the file is gone: a bug, see `SpanWal`). */
  read(position: number, length: number): Buffer;
  readonly path: string;
}

/**
 * The bytes one request's long texts live in: its body (`buffer`) until the body is durable
 * in the WAL, then the WAL segment (`file`, the body starting at `base`). Shared by every
 * {@link LongText} of the request, so moving them to the WAL is one assignment.
 */
export class TextSource {
  #buffer: Buffer | undefined;
  #file: TextFile | undefined;
  #base = 0;
  /** The WAL sequence of the request, once logged. */
  seq: number | undefined;

  constructor(body: Buffer) {
    // A body that is a view of a larger allocation (a pooled socket chunk) would pin all of it.
    this.#buffer = body.buffer.byteLength > 2 * body.length + 4096 ? Buffer.from(body) : body;
  }

  /** The body is durable in `file` from `base` on: the body buffer is let go. */
  moveTo(file: TextFile, base: number, seq: number): void {
    this.#file = file;
    this.#base = base;
    this.seq = seq;
    this.#buffer = undefined;
  }

  /** Whether the bytes are still in memory (the request is hot, or it was never logged). */
  get inMemory(): boolean {
    return this.#buffer !== undefined;
  }

  /** The text of the body's bytes `[start, start + length)` (latin1 when `ascii`), sliced without a view while in memory. */
  text(start: number, length: number, ascii: boolean): string {
    const buffer = (this.#buffer ?? this.bytes(start, length)) as NativeSliceBuffer;
    const from = this.#buffer === undefined ? 0 : start;
    return ascii ? buffer.latin1Slice(from, from + length) : buffer.utf8Slice(from, from + length);
  }

  /** The body's bytes `[start, start + length)`: a view while in memory, else read from the file. */
  bytes(start: number, length: number): Buffer {
    const buffer = this.#buffer;
    if (buffer !== undefined) return buffer.subarray(start, start + length);
    const file = this.#file;
    if (file === undefined) throw new StorageError('long text has neither its request body nor a write-ahead log file', { retriable: false });
    return file.read(this.#base + start, length);
  }
}

/** A long UTF-8 attribute value by reference: `AttrValue`'s lazy string. */
export class LongText {
  readonly source: TextSource;
  readonly start: number;
  /** Bytes of UTF-8. */
  readonly byteLength: number;
  /** Every byte below 0x80: UTF-16 length = byte length, and latin1 decodes it. */
  readonly ascii: boolean;
  /** Its decoded text's length and ends, once taken ({@link summarize}): what a span fingerprint reads. */
  summary: TextSummary | undefined;

  constructor(source: TextSource, start: number, byteLength: number, ascii: boolean) {
    this.source = source;
    this.start = start;
    this.byteLength = byteLength;
    this.ascii = ascii;
  }

  /** The UTF-8 bytes (a view of the body, or a fresh read of the WAL). */
  bytes(): Buffer {
    return this.source.bytes(this.start, this.byteLength);
  }

  /** The text, decoded now (as `toString('utf8')` would: invalid bytes become U+FFFD). */
  toString(): string {
    return this.source.text(this.start, this.byteLength, this.ascii);
  }

  /** `JSON.stringify` writes the text. */
  toJSON(): string {
    return this.toString();
  }

  /** Keeps `text`'s (its decoded string's) length and ends, so a fingerprint never decodes it again. */
  summarize(text: string): void {
    this.summary ??= textSummary(text);
  }
}

/** How many UTF-16 code units of each end a {@link TextSummary} keeps. */
export const SUMMARY_END_CHARS = 32;

/** A text's UTF-16 length and its first and last {@link SUMMARY_END_CHARS} code units (the whole text when short). */
export interface TextSummary {
  length: number;
  head: string;
  tail: string;
}

/** The summary of a string; its ends are fresh strings, never slices holding the whole text alive. */
export function textSummary(text: string): TextSummary {
  const n = SUMMARY_END_CHARS;
  if (text.length <= 2 * n) return { length: text.length, head: text, tail: '' };
  return { length: text.length, head: copyOf(text, 0, n), tail: copyOf(text, text.length - n, text.length) };
}

/** The summary of a {@link Text}: a long one's as taken at normalization, else decoded now. */
export function summaryOf(text: Text): TextSummary {
  if (typeof text === 'string') return textSummary(text);
  return text.summary ?? textSummary(text.toString());
}

function copyOf(text: string, from: number, to: number): string {
  const codes: number[] = [];
  for (let i = from; i < to; i++) codes.push(text.charCodeAt(i));
  return String.fromCharCode(...codes);
}

/** Captured text: a string, or a long one by reference. */
export type Text = string | LongText;

/** The string of a {@link Text}; `undefined` stays `undefined`. */
export function textOf(text: Text): string;
export function textOf(text: Text | undefined): string | undefined;
export function textOf(text: Text | undefined): string | undefined {
  return text === undefined || typeof text === 'string' ? text : text.toString();
}

/** Whether `value` is text (a string or a {@link LongText}). */
export function isText(value: unknown): value is Text {
  return typeof value === 'string' || value instanceof LongText;
}
