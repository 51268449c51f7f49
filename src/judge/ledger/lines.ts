import { open, type FileHandle } from 'node:fs/promises';
import { StorageError } from '../../errors.ts';
import { LedgerRecordSchema, type LedgerRecord } from './record.ts';

/** Bytes read at a time: opening holds one chunk and the index, never the whole file. */
export const READ_CHUNK_BYTES = 1 << 20;

/** One line of a ledger file: its text (no newline), 1-based number, byte offset and length with its newline. */
export interface RawLine {
  text: string;
  line: number;
  offset: number;
  bytes: number;
}

export interface LedgerLine extends RawLine {
  record: LedgerRecord;
}

const corrupt = (path: string, line: number, why: string) =>
  new StorageError(
    `ledger ${path} is corrupt at line ${line}: ${why}. trajwatch will not reset it; move it aside deliberately (keeping it for audit) to start a new ledger`,
    { context: { path, line } },
  );

/** Opens for reading; null for a missing file (an empty ledger). */
async function openForRead(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StorageError(`ledger ${path} could not be read`, { cause: err });
  }
}

/**
 * Every line of a ledger file, streamed one chunk at a time. A file whose last line has no
 * newline (a torn write) is refused before any line is yielded, naming that line.
 */
export async function* rawLines(path: string): AsyncGenerator<RawLine> {
  const fh = await openForRead(path);
  if (fh === null) return;
  try {
    const size = (await fh.stat()).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      await fh.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) throw corrupt(path, (await countNewlines(fh, size)) + 1, 'the last line is incomplete (torn write)');
    }
    const buf = Buffer.alloc(READ_CHUNK_BYTES);
    let carry = Buffer.alloc(0);
    let position = 0;
    let line = 0;
    let offset = 0;
    while (position < size) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      let chunk = carry.length === 0 ? buf.subarray(0, bytesRead) : Buffer.concat([carry, buf.subarray(0, bytesRead)]);
      let nl: number;
      while ((nl = chunk.indexOf(0x0a)) >= 0) {
        line++;
        yield { text: chunk.toString('utf8', 0, nl), line, offset, bytes: nl + 1 };
        offset += nl + 1;
        chunk = chunk.subarray(nl + 1);
      }
      // A line longer than a chunk is carried over (copied: `buf` is reused).
      carry = Buffer.from(chunk);
    }
  } finally {
    await fh.close();
  }
}

async function countNewlines(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.alloc(READ_CHUNK_BYTES);
  let n = 0;
  for (let position = 0; position < size; ) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    for (let i = buf.indexOf(0x0a); i >= 0 && i < bytesRead; i = buf.indexOf(0x0a, i + 1)) n++;
  }
  return n;
}

/** Every line of a ledger file, validated; a corrupt line refuses with its number and the problem. */
export async function* ledgerLines(path: string): AsyncGenerator<LedgerLine> {
  for await (const raw of rawLines(path)) {
    let json: unknown;
    try {
      json = JSON.parse(raw.text);
    } catch {
      throw corrupt(path, raw.line, 'not JSON');
    }
    const r = LedgerRecordSchema.safeParse(json);
    if (!r.success) throw corrupt(path, raw.line, r.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; '));
    yield { ...raw, record: r.data };
  }
}

/**
 * Every record of a ledger file, validated; a missing file is an empty ledger. Read-only (no
 * lock): `trajwatch calibrate` reads a live ledger this way.
 */
export async function readLedger(path: string): Promise<LedgerRecord[]> {
  const records: LedgerRecord[] = [];
  for await (const l of ledgerLines(path)) records.push(l.record);
  return records;
}
