import type { Decoded, RecordCodec } from './record-codec.ts';

/** Bytes a line may wait for before its newline: beyond, the reader asks for this much more at a time. */
const LINE_READ_STEP_BYTES = 1024 * 1024;

/**
 * JSON lines: a record is the bytes up to a newline (the value is the line without it, a view
 * into the reader's buffer). A final line without its newline is the torn tail. What a line
 * means is the owner's to check (the outbox parses and validates its entries).
 */
export function lineCodec(name: string): RecordCodec<Buffer> {
  return codecOfLines(name, (buffer, start, end) => ({ kind: 'record', value: buffer.subarray(start, end), bytes: end + 1 - start }));
}

/**
 * JSON lines whose every line `parse` accepts (it returns undefined for a line that is no valid
 * record). A final line that does not parse, terminated or not, is the torn tail; one before
 * the end is damage.
 */
export function jsonLinesCodec<T>(name: string, parse: (value: unknown) => T | undefined): RecordCodec<T> {
  return codecOfLines(name, (buffer, start, end) => {
    let value: T | undefined;
    try {
      value = parse(JSON.parse(buffer.toString('utf8', start, end)));
    } catch (err) {
      return { kind: 'damage', reason: `not JSON (${(err as Error).message})`, bytes: end + 1 - start };
    }
    if (value === undefined) return { kind: 'damage', reason: 'not a valid record', bytes: end + 1 - start };
    return { kind: 'record', value, bytes: end + 1 - start };
  });
}

/**
 * A codec of newline-terminated records: finds the line at `offset` (asking the reader for more
 * while its newline has not come) and lets `readLine` say what the bytes `start`..`end` hold.
 */
function codecOfLines<T>(name: string, readLine: (buffer: Buffer, start: number, end: number) => Decoded<T>): RecordCodec<T> {
  return {
    name,
    recordName: 'line',
    decode(buffer: Buffer, offset: number): Decoded<T> {
      const end = buffer.indexOf(0x0a, offset);
      if (end === -1) return { kind: 'more', need: buffer.length - offset + LINE_READ_STEP_BYTES };
      return readLine(buffer, offset, end);
    },
  };
}

/** The lines as UTF-8, each followed by a newline, encoded straight into one buffer. */
export function encodeLines(lines: readonly string[]): Buffer {
  let size = 0;
  for (const line of lines) size += Buffer.byteLength(line) + 1;
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    at += bytes.write(line, at);
    bytes[at++] = 0x0a;
  }
  return bytes;
}
