import { open, readFile, rename } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../errors.ts';
import { RangeSet, toRanges } from './range-set.ts';
import type { Segment } from './segment-files.ts';
import type { SegmentedLog } from './segmented-log.ts';
import { syncDir } from './sync-dir.ts';
import { writevAll } from './writev-all.ts';

/*
 * The outbox's files. A directory holds segment files `seg-<first seq, 16 digits>.jsonl` (on
 * the storage layer: `SegmentedLog`), one record per line as `{"seq", ...the record's fields}`
 * (the owner's `OutboxRecordShape` names them), and its own `acks.jsonl`, one line `{"acked": [[from, to], ...]}`
 * (inclusive ranges of sequence numbers) per acknowledgement. Sequence numbers are
 * consecutive within a segment.
 */

export const ACK_LOG = 'acks.jsonl';

/** What an outbox holds: any record with the id its consumers dedupe by (delivery is at-least-once). */
export interface OutboxRecord {
  id: string;
}

/**
 * How an owner's records are stored: `fields` gives the JSON object written beside `seq` (its
 * key order is the line's), `is` checks what a line read back holds.
 */
export interface OutboxRecordShape<R extends OutboxRecord> {
  fields(record: R): Record<string, unknown>;
  is(value: unknown): value is R;
}

/** A durable, unacknowledged record as handed to the delivery loop. */
export interface OutboxEntry<R> {
  seq: number;
  record: R;
}

export interface Location<R> {
  seq: number;
  segment: Segment;
  offset: number;
  length: number;
  /** The record itself while the outbox keeps a copy in memory (so sending it needs no read). */
  record?: R;
}

/** One segment line as JSON text. */
export function toLine<R extends OutboxRecord>(shape: OutboxRecordShape<R>, seq: number, record: R): string {
  return JSON.stringify({ seq, ...shape.fields(record) });
}

/** A segment line's value as an entry, or undefined when it is none. */
export function parseEntry<R extends OutboxRecord>(shape: OutboxRecordShape<R>, value: unknown): OutboxEntry<R> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { seq, ...record } = value as Record<string, unknown>;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || !shape.is(record)) return undefined;
  return { seq, record };
}

function parseAckLine(value: unknown): [number, number][] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ranges = (value as { acked?: unknown }).acked;
  if (!Array.isArray(ranges)) return undefined;
  const ok = ranges.every((r) => Array.isArray(r) && r.length === 2 && r.every((n) => Number.isSafeInteger(n)) && r[0] <= r[1]);
  return ok ? (ranges as [number, number][]) : undefined;
}

interface ParsedLine<T> {
  value: T;
  offset: number;
  length: number;
}

/**
 * Splits a JSON-lines file. With `tolerateTornTail`, the final line may be unterminated or
 * unparseable (a crash mid-write): it is returned as `tornAt` instead of failing.
 */
function parseLines<T>(
  buffer: Buffer,
  path: string,
  parse: (value: unknown) => T | undefined,
  tolerateTornTail: boolean,
): { lines: ParsedLine<T>[]; tornAt: number | undefined } {
  const lines: ParsedLine<T>[] = [];
  let offset = 0;
  let lineNo = 0;
  while (offset < buffer.length) {
    lineNo += 1;
    const end = buffer.indexOf(0x0a, offset);
    const isLast = end === -1 || end === buffer.length - 1;
    const length = (end === -1 ? buffer.length : end + 1) - offset;
    let parsed: T | undefined;
    if (end !== -1) {
      try {
        parsed = parse(JSON.parse(buffer.toString('utf8', offset, end)));
      } catch {
        parsed = undefined; // reported below, with the position
      }
    }
    if (parsed === undefined) {
      if (isLast && tolerateTornTail) return { lines, tornAt: offset };
      throw new StorageError(
        `damaged outbox data in ${path} at line ${lineNo} (byte ${offset}): ` + (end === -1 ? 'unterminated line' : 'not a valid record'),
        { context: { path, line: lineNo, offset } },
      );
    }
    lines.push({ value: parsed, offset, length });
    offset += length;
  }
  return { lines, tornAt: undefined };
}

async function readOrEmpty(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw new StorageError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Reads the ack log: the inclusive ranges of acknowledged sequence numbers. A torn final line
 * (a crash mid-write) is ignored and counted.
 */
export async function loadAcks(dir: string): Promise<{ acked: RangeSet; maxSeq: number; tornLines: number }> {
  const ackPath = join(dir, ACK_LOG);
  const parsed = parseLines(await readOrEmpty(ackPath), ackPath, parseAckLine, true);
  const acked = new RangeSet();
  let maxSeq = -1;
  for (const line of parsed.lines) {
    for (const [from, to] of line.value) {
      acked.add(from, to);
      maxSeq = Math.max(maxSeq, to);
    }
  }
  return { acked, maxSeq, tornLines: parsed.tornAt === undefined ? 0 : 1 };
}

/**
 * Rewrites the ack log to the acknowledgements of records still in live segments (an atomic
 * replace), and returns it open for appending. Acks of deleted segments are dropped here, so
 * they can never match a record appended later.
 */
export async function rewriteAckLog(dir: string, segments: readonly Segment[], unacked: readonly Location<unknown>[]): Promise<FileHandle> {
  const path = join(dir, ACK_LOG);
  const tmp = `${path}.tmp`;
  const open_ = new Set(unacked.map((l) => l.seq));
  const ranges: [number, number][] = [];
  for (const s of segments) {
    let runStart: number | undefined;
    for (let seq = s.firstNo; seq <= s.lastNo + 1; seq += 1) {
      const isAcked = seq <= s.lastNo && !open_.has(seq);
      if (isAcked && runStart === undefined) runStart = seq;
      if (!isAcked && runStart !== undefined) {
        ranges.push([runStart, seq - 1]);
        runStart = undefined;
      }
    }
  }
  try {
    const text = ranges.length === 0 ? '' : JSON.stringify({ acked: ranges }) + '\n';
    const handle = await open(tmp, 'w');
    try {
      await writevAll(handle, [Buffer.from(text)]);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
    await syncDir(dir);
    return await open(path, 'a');
  } catch (err) {
    throw new StorageError(`cannot rewrite outbox ack log ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export async function readEntries<R extends OutboxRecord>(shape: OutboxRecordShape<R>, locations: readonly Location<R>[]): Promise<OutboxEntry<R>[]> {
  const out: OutboxEntry<R>[] = [];
  let i = 0;
  while (i < locations.length) {
    // One read per run of locations in the same segment.
    const segment = locations[i]!.segment;
    let j = i;
    while (j + 1 < locations.length && locations[j + 1]!.segment === segment) j += 1;
    const start = locations[i]!.offset;
    const end = locations[j]!.offset + locations[j]!.length;
    const buffer = Buffer.alloc(end - start);
    let handle: FileHandle | undefined;
    try {
      handle = await open(segment.path, 'r');
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      if (bytesRead !== buffer.length) throw new Error(`short read: ${bytesRead} of ${buffer.length} bytes`);
    } catch (err) {
      throw new StorageError(`cannot read outbox segment ${segment.path}: ${(err as Error).message}`, {
        cause: err,
        retriable: true,
      });
    } finally {
      await handle?.close();
    }
    for (let k = i; k <= j; k += 1) {
      const loc = locations[k]!;
      let entry: OutboxEntry<R> | undefined;
      try {
        entry = parseEntry(shape, JSON.parse(buffer.toString('utf8', loc.offset - start, loc.offset - start + loc.length)));
      } catch {
        entry = undefined; // reported below
      }
      if (entry?.seq !== loc.seq) {
        throw new StorageError(`damaged outbox data in ${segment.path} at byte ${loc.offset}`, {
          context: { path: segment.path, offset: loc.offset, seq: loc.seq },
        });
      }
      out.push(entry);
    }
    i = j + 1;
  }
  return out;
}

/** Where each record of the log read at open is, checking that sequence numbers run on (each segment's `lastNo` set). */
export async function scanLocations<R>(log: SegmentedLog<OutboxEntry<R>>): Promise<{ entries: Location<R>[]; maxSeq: number }> {
  const entries: Location<R>[] = [];
  let maxSeq = -1;
  for await (const { value, segment, offset, bytes } of log.records()) {
    if (value.seq !== segment.lastNo + 1 || value.seq <= maxSeq) {
      throw new StorageError(`damaged outbox data in ${segment.path} at byte ${offset}: sequence ${value.seq} out of order`, {
        context: { path: segment.path, offset },
      });
    }
    segment.lastNo = value.seq;
    maxSeq = value.seq;
    entries.push({ seq: value.seq, segment, offset, length: bytes });
  }
  return { entries, maxSeq };
}

/** Records acknowledged sequence numbers (sorted, distinct) in the ack log, fsync'd; returns the bytes written. */
export async function appendAcks(ackLog: FileHandle, dir: string, sorted: readonly number[]): Promise<number> {
  const line = JSON.stringify({ acked: toRanges(sorted) }) + '\n';
  try {
    await writevAll(ackLog, [Buffer.from(line)]);
    await ackLog.datasync();
  } catch (err) {
    throw new StorageError(`cannot record acknowledgements in ${join(dir, ACK_LOG)}`, {
      cause: err,
      retriable: true,
    });
  }
  return Buffer.byteLength(line);
}
