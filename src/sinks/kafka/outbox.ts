import { mkdir, open, readdir, readFile, rename, rm, truncate } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../../errors.ts';
import { isSinkRecord } from '../record.ts';
import type { SinkRecord } from '../record.ts';

/**
 * Named bounds of the outbox. Counts cover records appended and not yet acknowledged,
 * including those still being written.
 */
export interface OutboxLimits {
  /** Unacknowledged serialized bytes at which `append` answers `full`. */
  maxOutboxBytes: number;
  /** Unacknowledged records at which `append` answers `full`. */
  maxOutboxRecords: number;
  /** A single serialized record above this is refused as `too-large` (a broker would reject it). */
  maxRecordBytes: number;
  /** A segment file that has reached this size is closed and the next write starts a new one. */
  segmentBytes: number;
}

export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = {
  maxOutboxBytes: 256 * 1024 * 1024,
  maxOutboxRecords: 200_000,
  maxRecordBytes: 900 * 1024,
  segmentBytes: 16 * 1024 * 1024,
};

/** What `append` answers. Refusals accept nothing of the call: the caller keeps the records. */
export type AppendResult =
  | { ok: true; firstSeq: number; lastSeq: number }
  | { ok: false; reason: 'full'; pendingRecords: number; pendingBytes: number }
  | { ok: false; reason: 'too-large'; id: string; bytes: number }
  | { ok: false; reason: 'unwritable'; error: StorageError }
  | { ok: false; reason: 'closed' };

/** A durable, unacknowledged record as handed to the delivery loop. */
export interface OutboxEntry {
  seq: number;
  record: SinkRecord;
}

export interface OutboxStats {
  /** Appended and not yet acknowledged (written or still being written). */
  pendingRecords: number;
  pendingBytes: number;
  /** Appended but not yet durable. */
  queuedRecords: number;
  segments: number;
  appendedRecords: number;
  ackedRecords: number;
  refusedFull: number;
  refusedTooLarge: number;
  /** Torn final lines (a crash mid-write) found at open and ignored. */
  tornLinesIgnored: number;
  /** The last write failure while it lasts. */
  failure: StorageError | undefined;
}

interface Segment {
  firstSeq: number;
  lastSeq: number;
  path: string;
  sizeBytes: number;
  unacked: number;
}

interface Location {
  seq: number;
  segment: Segment;
  offset: number;
  length: number;
}

interface Queued {
  seq: number;
  line: string;
  bytes: number;
}

const SEGMENT_NAME = /^seg-(\d{16})\.jsonl$/;
const ACK_LOG = 'acks.jsonl';
/** The ack log is rewritten to the acks that still matter once it passes this size. */
const ACK_LOG_COMPACT_BYTES = 1024 * 1024;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * The Kafka sink's durable outbox: records are appended to segment files of JSON lines in
 * one directory and stay there until the broker has acknowledged them.
 *
 * - `append` is synchronous: it checks the bounds, assigns sequence numbers and queues the
 *   lines; everything queued in one turn of the event loop is written and fsync'd together.
 *   `durable()` resolves once it is on disk. Only durable records are handed out by `peek`.
 * - `ack` records acknowledged sequence numbers in `acks.jsonl` (fsync'd) before forgetting
 *   them; a segment whose records are all acknowledged is deleted.
 * - `open` re-reads undelivered records after a restart. A torn final line (a crash mid-write)
 *   is ignored, counted and cut off; damage anywhere else is a {@link StorageError}.
 */
export class Outbox {
  readonly dir: string;
  readonly limits: OutboxLimits;
  #segments: Segment[];
  /** Durable, unacknowledged records in sequence order (Map keeps insertion order). */
  readonly #unacked = new Map<number, Location>();
  #queue: Queued[] = [];
  #nextSeq: number;
  #durableSeq: number;
  #pendingBytes = 0;
  #active: FileHandle | undefined;
  #ackLog: FileHandle;
  #ackLogBytes: number;
  #lock: Promise<unknown> = Promise.resolve();
  #draining: Promise<void> | undefined;
  #failure: StorageError | undefined;
  #closing = false;
  #closed = false;
  #durableWaiters: { seq: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  #stats = { appendedRecords: 0, ackedRecords: 0, refusedFull: 0, refusedTooLarge: 0, tornLinesIgnored: 0 };

  private constructor(dir: string, limits: OutboxLimits, loaded: LoadedState, ackLog: FileHandle) {
    this.dir = dir;
    this.limits = limits;
    this.#segments = loaded.segments;
    for (const loc of loaded.unacked) {
      this.#unacked.set(loc.seq, loc);
      this.#pendingBytes += loc.length;
    }
    this.#nextSeq = loaded.nextSeq;
    this.#durableSeq = loaded.nextSeq - 1;
    this.#ackLog = ackLog;
    this.#ackLogBytes = loaded.ackLogBytes;
    this.#stats.tornLinesIgnored = loaded.tornLines;
  }

  /**
   * Opens (or creates) the outbox in `dir` and loads what was not yet acknowledged.
   * @throws StorageError when the directory cannot be used or holds damaged data.
   */
  static async open(dir: string, limits: OutboxLimits = DEFAULT_OUTBOX_LIMITS): Promise<Outbox> {
    try {
      await mkdir(dir, { recursive: true });
    } catch (err) {
      throw new StorageError(`cannot create outbox directory ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const loaded = await loadState(dir);
    const ackLog = await rewriteAckLog(dir, loaded.segments, loaded.unacked);
    const outbox = new Outbox(dir, limits, { ...loaded, ackLogBytes: (await ackLog.stat()).size }, ackLog);
    await outbox.#deleteAckedSegments();
    return outbox;
  }

  /** Appended and not yet acknowledged. */
  get pendingRecords(): number {
    return this.#unacked.size + this.#queue.length;
  }

  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The lowest sequence number appended and not yet acknowledged, if any. */
  get oldestPendingSeq(): number | undefined {
    const first = this.#unacked.keys().next();
    return first.done === true ? this.#queue[0]?.seq : first.value;
  }

  /** The sequence number the next appended record gets. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** The current write failure (cleared by the next successful write), if any. */
  get failure(): StorageError | undefined {
    return this.#failure;
  }

  /** True when a record of `bytes` serialized bytes would be accepted now. */
  hasRoomFor(bytes: number = this.limits.maxRecordBytes): boolean {
    return (
      this.pendingRecords + 1 <= this.limits.maxOutboxRecords &&
      this.#pendingBytes + bytes <= this.limits.maxOutboxBytes
    );
  }

  /**
   * Queues `records` for durable storage, all or none. Never throws: a refusal comes back as
   * a value and the caller keeps the records (`full` means: apply backpressure, try later).
   */
  append(records: readonly SinkRecord[]): AppendResult {
    if (this.#closing) return { ok: false, reason: 'closed' };
    if (this.#failure !== undefined && this.#failure.retriable === false) {
      return { ok: false, reason: 'unwritable', error: this.#failure };
    }
    const lines: Queued[] = [];
    let bytes = 0;
    for (const [i, record] of records.entries()) {
      const line = JSON.stringify(toLine(this.#nextSeq + i, record)) + '\n';
      const size = Buffer.byteLength(line);
      if (size > this.limits.maxRecordBytes) {
        this.#stats.refusedTooLarge += 1;
        return { ok: false, reason: 'too-large', id: record.id, bytes: size };
      }
      lines.push({ seq: this.#nextSeq + i, line, bytes: size });
      bytes += size;
    }
    if (lines.length === 0) return { ok: true, firstSeq: this.#nextSeq, lastSeq: this.#nextSeq - 1 };
    if (
      this.pendingRecords + lines.length > this.limits.maxOutboxRecords ||
      this.#pendingBytes + bytes > this.limits.maxOutboxBytes
    ) {
      this.#stats.refusedFull += 1;
      return { ok: false, reason: 'full', pendingRecords: this.pendingRecords, pendingBytes: this.#pendingBytes };
    }
    const firstSeq = this.#nextSeq;
    this.#nextSeq += lines.length;
    this.#pendingBytes += bytes;
    this.#stats.appendedRecords += lines.length;
    for (const q of lines) this.#queue.push(q);
    this.#draining ??= this.#drain();
    return { ok: true, firstSeq, lastSeq: this.#nextSeq - 1 };
  }

  /** Resolves once everything appended before the call is on disk; rejects if the outbox closes first. */
  durable(): Promise<void> {
    const seq = this.#nextSeq - 1;
    if (seq <= this.#durableSeq) return Promise.resolve();
    if (this.#closing || this.#failure?.retriable === false) {
      return Promise.reject(new StorageError('outbox closed or unwritable before the records were written'));
    }
    return new Promise((resolve, reject) => this.#durableWaiters.push({ seq, resolve, reject }));
  }

  /** The oldest durable unacknowledged records, at most `maxRecords` and (beyond the first) `maxBytes`. */
  peek(maxRecords: number, maxBytes: number): Promise<OutboxEntry[]> {
    return this.#exclusive(async () => {
      const picked: Location[] = [];
      let bytes = 0;
      for (const loc of this.#unacked.values()) {
        if (picked.length >= maxRecords || (picked.length > 0 && bytes + loc.length > maxBytes)) break;
        picked.push(loc);
        bytes += loc.length;
      }
      return readEntries(picked);
    });
  }

  /**
   * Marks records as delivered, durably, then forgets them and deletes segments that hold
   * nothing unacknowledged. Unknown or already acknowledged numbers are ignored. After
   * `close` it does nothing: the records are then delivered again after the next open.
   */
  ack(seqs: readonly number[]): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#closed) return;
      const fresh = [...new Set(seqs)].filter((s) => this.#unacked.has(s)).sort((a, b) => a - b);
      if (fresh.length === 0) return;
      const line = JSON.stringify({ acked: toRanges(fresh) }) + '\n';
      try {
        await writeAll(this.#ackLog, Buffer.from(line));
        await this.#ackLog.datasync();
      } catch (err) {
        throw new StorageError(`cannot record acknowledgements in ${join(this.dir, ACK_LOG)}`, {
          cause: err,
          retriable: true,
        });
      }
      this.#ackLogBytes += Buffer.byteLength(line);
      for (const seq of fresh) {
        const loc = this.#unacked.get(seq)!;
        this.#unacked.delete(seq);
        loc.segment.unacked -= 1;
        this.#pendingBytes -= loc.length;
      }
      this.#stats.ackedRecords += fresh.length;
      await this.#deleteAckedSegments();
      if (this.#ackLogBytes > ACK_LOG_COMPACT_BYTES) {
        await this.#ackLog.close();
        this.#ackLog = await rewriteAckLog(this.dir, this.#segments, [...this.#unacked.values()]);
        this.#ackLogBytes = (await this.#ackLog.stat()).size;
      }
    });
  }

  stats(): OutboxStats {
    return {
      pendingRecords: this.pendingRecords,
      pendingBytes: this.#pendingBytes,
      queuedRecords: this.#queue.length,
      segments: this.#segments.length,
      ...this.#stats,
      failure: this.#failure,
    };
  }

  /**
   * Refuses further appends, waits for queued records to be written (one more attempt when
   * writing is failing), then closes the files. Records still queued then were never durable,
   * which `durable()` reports by rejecting.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#draining !== undefined) await this.#draining;
    this.#closed = true;
    await this.#exclusive(async () => {
      await this.#active?.close();
      this.#active = undefined;
      await this.#ackLog.close();
    });
    for (const w of this.#durableWaiters.splice(0)) {
      w.reject(new StorageError('outbox closed before the records were written', { cause: this.#failure }));
    }
  }

  async #drain(): Promise<void> {
    // Let the rest of this turn's appends join the same write and fsync.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let delayMs = RETRY_INITIAL_MS;
    while (this.#queue.length > 0) {
      const batch = this.#queue.slice();
      try {
        await this.#exclusive(() => this.#write(batch));
        this.#queue.splice(0, batch.length);
        this.#failure = undefined;
        delayMs = RETRY_INITIAL_MS;
        this.#durableSeq = batch.at(-1)!.seq;
        this.#durableWaiters = this.#durableWaiters.filter((w) => {
          if (w.seq > this.#durableSeq) return true;
          w.resolve();
          return false;
        });
      } catch (err) {
        this.#failure = err instanceof StorageError ? err : new StorageError(String(err), { cause: err });
        if (!this.#failure.retriable || this.#closing) break;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
      }
    }
    this.#draining = undefined;
    if (this.#failure?.retriable === false) {
      for (const w of this.#durableWaiters.splice(0)) w.reject(this.#failure);
    }
  }

  async #write(batch: readonly Queued[]): Promise<void> {
    let segment = this.#segments.at(-1);
    if (this.#active === undefined || segment === undefined || segment.sizeBytes >= this.limits.segmentBytes) {
      segment = await this.#startSegment(batch[0]!.seq);
    }
    const handle = this.#active!;
    const before = segment.sizeBytes;
    const buffer = Buffer.from(batch.map((q) => q.line).join(''));
    try {
      await writeAll(handle, buffer);
      await handle.datasync();
    } catch (err) {
      // Cut a partial write off, so no torn line ends up in the middle of the segment.
      try {
        await handle.truncate(before);
      } catch (truncateErr) {
        throw new StorageError(`cannot write or repair outbox segment ${segment.path}`, {
          cause: new AggregateError([err, truncateErr]),
          retriable: false,
        });
      }
      throw new StorageError(`cannot write outbox segment ${segment.path}: ${(err as Error).message}`, {
        cause: err,
        retriable: true,
      });
    }
    let offset = before;
    for (const q of batch) {
      this.#unacked.set(q.seq, { seq: q.seq, segment, offset, length: q.bytes });
      offset += q.bytes;
    }
    segment.sizeBytes = offset;
    segment.lastSeq = batch.at(-1)!.seq;
    segment.unacked += batch.length;
  }

  async #startSegment(firstSeq: number): Promise<Segment> {
    await this.#active?.close();
    this.#active = undefined;
    const path = join(this.dir, segmentName(firstSeq));
    try {
      this.#active = await open(path, 'a');
      await syncDir(this.dir);
    } catch (err) {
      throw new StorageError(`cannot create outbox segment ${path}: ${(err as Error).message}`, {
        cause: err,
        retriable: true,
      });
    }
    const segment: Segment = { firstSeq, lastSeq: firstSeq - 1, path, sizeBytes: 0, unacked: 0 };
    this.#segments.push(segment);
    return segment;
  }

  async #deleteAckedSegments(): Promise<void> {
    const done = this.#segments.filter((s) => s.unacked === 0);
    if (done.length === 0) return;
    if (done.includes(this.#segments.at(-1)!)) {
      await this.#active?.close();
      this.#active = undefined;
    }
    this.#segments = this.#segments.filter((s) => s.unacked > 0);
    for (const s of done) await rm(s.path, { force: true });
    if (this.#segments.length === 0 && this.#ackLogBytes > 0) {
      // Nothing left that an ack could refer to.
      await this.#ackLog.truncate(0);
      await this.#ackLog.datasync();
      this.#ackLogBytes = 0;
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => undefined);
    return run;
  }
}

interface LoadedState {
  segments: Segment[];
  unacked: Location[];
  nextSeq: number;
  tornLines: number;
  ackLogBytes: number;
}

interface EntryLine {
  seq: number;
  topic: SinkRecord['topic'];
  key: string;
  id: string;
  value: string;
  headers: Record<string, string>;
}

function toLine(seq: number, r: SinkRecord): EntryLine {
  return { seq, topic: r.topic, key: r.key, id: r.id, value: r.value, headers: r.headers };
}

function parseEntry(value: unknown): EntryLine | undefined {
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

function segmentName(firstSeq: number): string {
  return `seg-${String(firstSeq).padStart(16, '0')}.jsonl`;
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

async function loadState(dir: string): Promise<LoadedState> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new StorageError(`cannot list outbox directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const segmentFiles = names
    .map((name) => ({ name, m: SEGMENT_NAME.exec(name) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ path: join(dir, x.name), firstSeq: Number(x.m![1]) }))
    .sort((a, b) => a.firstSeq - b.firstSeq);

  let tornLines = 0;
  let maxSeq = -1;
  const segments: Segment[] = [];
  const entries: Location[] = [];
  for (const [i, file] of segmentFiles.entries()) {
    const isLastFile = i === segmentFiles.length - 1;
    const buffer = await readOrEmpty(file.path);
    const { lines, tornAt } = parseLines(buffer, file.path, parseEntry, isLastFile);
    if (tornAt !== undefined) {
      tornLines += 1;
      await truncateTo(file.path, tornAt);
    }
    const segment: Segment = {
      firstSeq: file.firstSeq,
      lastSeq: file.firstSeq - 1,
      path: file.path,
      sizeBytes: tornAt ?? buffer.length,
      unacked: 0,
    };
    for (const line of lines) {
      if (line.value.seq !== segment.lastSeq + 1 || line.value.seq <= maxSeq) {
        throw new StorageError(
          `damaged outbox data in ${file.path} at byte ${line.offset}: sequence ${line.value.seq} out of order`,
          { context: { path: file.path, offset: line.offset } },
        );
      }
      segment.lastSeq = line.value.seq;
      maxSeq = line.value.seq;
      entries.push({ seq: line.value.seq, segment, offset: line.offset, length: line.length });
    }
    segments.push(segment);
  }

  const ackPath = join(dir, ACK_LOG);
  const ackBuffer = await readOrEmpty(ackPath);
  const ackParsed = parseLines(ackBuffer, ackPath, parseAckLine, true);
  if (ackParsed.tornAt !== undefined) tornLines += 1;
  const acked = new RangeSet();
  for (const line of ackParsed.lines) {
    for (const [from, to] of line.value) {
      acked.add(from, to);
      maxSeq = Math.max(maxSeq, to);
    }
  }
  const unacked = entries.filter((loc) => !acked.has(loc.seq));
  for (const loc of unacked) loc.segment.unacked += 1;
  return { segments, unacked, nextSeq: maxSeq + 1, tornLines, ackLogBytes: 0 };
}

/**
 * Rewrites the ack log to the acknowledgements of records still in live segments (an atomic
 * replace), and returns it open for appending. Acks of deleted segments are dropped here, so
 * they can never match a record appended later.
 */
async function rewriteAckLog(dir: string, segments: readonly Segment[], unacked: readonly Location[]): Promise<FileHandle> {
  const path = join(dir, ACK_LOG);
  const tmp = `${path}.tmp`;
  const open_ = new Set(unacked.map((l) => l.seq));
  const ranges: [number, number][] = [];
  for (const s of segments) {
    let runStart: number | undefined;
    for (let seq = s.firstSeq; seq <= s.lastSeq + 1; seq += 1) {
      const isAcked = seq <= s.lastSeq && !open_.has(seq);
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
      await writeAll(handle, Buffer.from(text));
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

async function readEntries(locations: readonly Location[]): Promise<OutboxEntry[]> {
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

async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, null);
    written += bytesWritten;
  }
}

async function truncateTo(path: string, length: number): Promise<void> {
  try {
    await truncate(path, length);
  } catch (err) {
    throw new StorageError(`cannot cut the torn tail of ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** A new or renamed file survives a crash only once its directory entry is synced. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
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
class RangeSet {
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
