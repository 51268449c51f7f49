import { open, readFile, rename } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../../errors.ts';
import { isSinkRecord } from '../record.ts';
import type { SinkRecord } from '../record.ts';
import type { Segment } from '../../storage/segment-files.ts';
import { syncDir } from '../../storage/sync-dir.ts';
import { writevAll } from '../../storage/writev-all.ts';

/*
 * The outbox's files. A directory holds segment files `seg-<first seq, 16 digits>.jsonl` (on
 * the storage layer: `SegmentedLog`), one record per line as `{"seq", "topic", "key", "id",
 * "value", "headers"}`, and its own `acks.jsonl`, one line `{"acked": [[from, to], ...]}`
 * (inclusive ranges of sequence numbers) per acknowledgement. Sequence numbers are
 * consecutive within a segment.
 */

export const ACK_LOG = 'acks.jsonl';

/** A durable, unacknowledged record as handed to the delivery loop. */
export interface OutboxEntry {
  seq: number;
  record: SinkRecord;
}

export interface Location {
  seq: number;
  segment: Segment;
  offset: number;
  length: number;
  /** The record itself while the outbox keeps a copy in memory (so sending it needs no read). */
  record?: SinkRecord;
}

export interface EntryLine {
  seq: number;
  topic: SinkRecord['topic'];
  key: string;
  id: string;
  value: string;
  headers: Record<string, string>;
}

export function toLine(seq: number, r: SinkRecord): EntryLine {
  return { seq, topic: r.topic, key: r.key, id: r.id, value: r.value, headers: r.headers };
}

export function parseEntry(value: unknown): EntryLine | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { seq, ...record } = value as Record<string, unknown>;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0 || !isSinkRecord(record)) return undefined;
  return { seq, ...record };
}

function parseAckLine(value: unknown): [number, number][] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const ranges = (value as { acked?: unknown }).acked;
  if (!Array.isArray(ranges)) return undefined;
  const ok = ranges.every(
    (r) => Array.isArray(r) && r.length === 2 && r.every((n) => Number.isSafeInteger(n)) && r[0] <= r[1],
  );
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
        `damaged outbox data in ${path} at line ${lineNo} (byte ${offset}): ` +
          (end === -1 ? 'unterminated line' : 'not a valid record'),
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
export async function rewriteAckLog(dir: string, segments: readonly Segment[], unacked: readonly Location[]): Promise<FileHandle> {
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

export async function readEntries(locations: readonly Location[]): Promise<OutboxEntry[]> {
  const out: OutboxEntry[] = [];
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
      let entry: EntryLine | undefined;
      try {
        entry = parseEntry(JSON.parse(buffer.toString('utf8', loc.offset - start, loc.offset - start + loc.length)));
      } catch {
        entry = undefined; // reported below
      }
      if (entry?.seq !== loc.seq) {
        throw new StorageError(`damaged outbox data in ${segment.path} at byte ${loc.offset}`, {
          context: { path: segment.path, offset: loc.offset, seq: loc.seq },
        });
      }
      const { seq, ...record } = entry;
      out.push({ seq, record });
    }
    i = j + 1;
  }
  return out;
}

/** Sorted, distinct integers as inclusive ranges: [1,2,3,7] → [[1,3],[7,7]]. */
export function toRanges(sorted: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const n of sorted) {
    const last = ranges.at(-1);
    if (last !== undefined && n === last[1] + 1) last[1] = n;
    else ranges.push([n, n]);
  }
  return ranges;
}

/** Inclusive integer ranges with membership tests (ack logs are mostly contiguous runs). */
export class RangeSet {
  #ranges: [number, number][] = [];
  #normalized = true;

  add(from: number, to: number): void {
    this.#ranges.push([from, to]);
    this.#normalized = false;
  }

  has(n: number): boolean {
    if (!this.#normalized) this.#normalize();
    let lo = 0;
    let hi = this.#ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [from, to] = this.#ranges[mid]!;
      if (n < from) hi = mid - 1;
      else if (n > to) lo = mid + 1;
      else return true;
    }
    return false;
  }

  /** Sorts and merges overlapping or adjacent ranges, so one binary search answers `has`. */
  #normalize(): void {
    const sorted = this.#ranges.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const [from, to] of sorted) {
      const last = merged.at(-1);
      if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
      else merged.push([from, to]);
    }
    this.#ranges = merged;
    this.#normalized = true;
  }
}
