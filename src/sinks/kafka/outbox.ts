import { mkdir, open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StorageError } from '../../errors.ts';
import type { SinkRecord } from '../record.ts';
import {
  ACK_LOG,
  loadState,
  readEntries,
  rewriteAckLog,
  segmentName,
  syncDir,
  toLine,
  toRanges,
} from './outbox-files.ts';
import type { LoadedState, Location, OutboxEntry, Segment } from './outbox-files.ts';
import { writevAll } from '../../storage/writev-all.ts';

export type { OutboxEntry } from './outbox-files.ts';

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

/** Appended, not yet on disk. */
interface Queued {
  seq: number;
  line: string;
  length: number;
  record: SinkRecord;
}

/** The ack log is rewritten to the acks that still matter once it passes this size. */
const ACK_LOG_COMPACT_BYTES = 1024 * 1024;
/** Written records kept in memory (oldest first) so sending them needs no disk read; the rest are read back. */
const MEMORY_COPY_MAX_BYTES = 16 * 1024 * 1024;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * The Kafka sink's durable outbox: records are appended to segment files of JSON lines in
 * one directory and stay there until the broker has acknowledged them.
 *
 * - `append` is synchronous: it checks the bounds, assigns sequence numbers and queues the
 *   lines; everything queued in one turn of the event loop is written and fsync'd together.
 *   `durable()` resolves once it is on disk.
 * - `peek` hands out records in sequence order as soon as they are appended, so a send can
 *   overlap their write: a crash before the fsync loses nothing the caller was told is durable.
 *   Recently written records are served from memory (up to 16 MiB), older ones from disk.
 * - `ack` waits until the records are on disk, then records their sequence numbers in
 *   `acks.jsonl` (fsync'd) before forgetting them; a segment whose records are all
 *   acknowledged is deleted, except while it is being written to.
 * - Segment writes do not wait for `ack`'s fsync: the two touch different files. Disk reads
 *   and acks share a lock, so no segment is deleted under a read.
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
  /** A segment write in progress: the segment it writes to must not be deleted. */
  #writing = false;
  /** Segment deletion in progress: a write waits for it, so a deleted name is never reused under it. */
  #deleting: Promise<void> | undefined;
  #memoryCopyBytes = 0;
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

  /** How many of `seqs` are appended and not yet acknowledged, and their serialized bytes. */
  pendingAmong(seqs: readonly number[]): { records: number; bytes: number } {
    let records = 0;
    let bytes = 0;
    const firstQueued = this.#queue[0]?.seq ?? Number.MAX_SAFE_INTEGER;
    for (const seq of seqs) {
      // Queued sequence numbers are consecutive.
      const length = this.#unacked.get(seq)?.length ?? this.#queue[seq - firstQueued]?.length;
      if (length === undefined) continue;
      records += 1;
      bytes += length;
    }
    return { records, bytes };
  }

  /** The lowest sequence number above `seq` appended and not yet acknowledged, if any. */
  oldestPendingSeqAfter(seq: number): number | undefined {
    return this.#pick(1, Number.MAX_SAFE_INTEGER, seq)[0]?.seq;
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
      lines.push({ seq: this.#nextSeq + i, line, length: size, record });
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

  /**
   * The oldest unacknowledged records above `afterSeq` (durable or still being written), at
   * most `maxRecords` and (beyond the first) `maxBytes`, in sequence order.
   */
  peek(maxRecords: number, maxBytes: number, afterSeq = -1): Promise<OutboxEntry[]> {
    const picked = this.#pick(maxRecords, maxBytes, afterSeq);
    if (picked.every((p) => p.record !== undefined)) {
      return Promise.resolve(picked.map((p) => ({ seq: p.seq, record: p.record! })));
    }
    // Some must be read back: under the lock, so no ack deletes their segment meanwhile.
    return this.#exclusive(async () => {
      const again = this.#pick(maxRecords, maxBytes, afterSeq);
      const onDisk = again.filter((p): p is Location => p.record === undefined && 'segment' in p);
      const read = new Map((await readEntries(onDisk)).map((e) => [e.seq, e.record]));
      return again.map((p) => ({ seq: p.seq, record: p.record ?? read.get(p.seq)! }));
    });
  }

  /**
   * Marks records as delivered, durably, then forgets them and deletes segments that hold
   * nothing unacknowledged. Unknown or already acknowledged numbers are ignored. After
   * `close` it does nothing: the records are then delivered again after the next open.
   */
  async ack(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    // A record sent while it was being written is recorded as acknowledged once it is on disk.
    await this.#written(seqs.reduce((a, b) => Math.max(a, b)));
    return this.#exclusive(async () => {
      if (this.#closed) return;
      const fresh = [...new Set(seqs)].filter((s) => this.#unacked.has(s)).sort((a, b) => a - b);
      if (fresh.length === 0) return;
      const line = JSON.stringify({ acked: toRanges(fresh) }) + '\n';
      try {
        await writevAll(this.#ackLog, [Buffer.from(line)]);
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
        if (loc.record !== undefined) this.#memoryCopyBytes -= loc.length;
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
        await this.#write(batch);
        this.#failure = undefined;
        delayMs = RETRY_INITIAL_MS;
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
    this.#writing = true;
    try {
      await this.#deleting?.catch(() => undefined); // its failure is the ack's to report
      await this.#writeSegment(batch);
    } finally {
      this.#writing = false;
    }
  }

  async #writeSegment(batch: readonly Queued[]): Promise<void> {
    let segment = this.#segments.at(-1);
    if (this.#active === undefined || segment === undefined || segment.sizeBytes >= this.limits.segmentBytes) {
      segment = await this.#startSegment(batch[0]!.seq);
    }
    const handle = this.#active!;
    const before = segment.sizeBytes;
    const buffer = Buffer.from(batch.map((q) => q.line).join(''));
    try {
      await writevAll(handle, [buffer]);
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
      const loc: Location = { seq: q.seq, segment, offset, length: q.length };
      if (this.#memoryCopyBytes + q.length <= MEMORY_COPY_MAX_BYTES) {
        loc.record = q.record;
        this.#memoryCopyBytes += q.length;
      }
      this.#unacked.set(q.seq, loc);
      offset += q.length;
    }
    // In the same turn as the #unacked entries, so a record is never in both or neither.
    this.#queue.splice(0, batch.length);
    this.#durableSeq = batch.at(-1)!.seq;
    segment.sizeBytes = offset;
    segment.lastSeq = batch.at(-1)!.seq;
    segment.unacked += batch.length;
  }

  /** Resolves once `seq` is on disk, or once no write will put it there (unwritable, closed). */
  #written(seq: number): Promise<void> {
    if (seq <= this.#durableSeq || this.#queue.length === 0 || this.#closing || this.#failure?.retriable === false) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#durableWaiters.push({ seq, resolve, reject: () => resolve() }));
  }

  /** Appended records above `afterSeq` in sequence order: durable ones, then those still queued. */
  #pick(maxRecords: number, maxBytes: number, afterSeq: number): (Location | Queued)[] {
    const picked: (Location | Queued)[] = [];
    let bytes = 0;
    const take = (p: Location | Queued): boolean => {
      if (p.seq <= afterSeq) return true;
      if (picked.length >= maxRecords || (picked.length > 0 && bytes + p.length > maxBytes)) return false;
      picked.push(p);
      bytes += p.length;
      return true;
    };
    for (const loc of this.#unacked.values()) if (!take(loc)) return picked;
    for (const q of this.#queue) if (!take(q)) return picked;
    return picked;
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
    const last = this.#segments.at(-1);
    // A segment being written holds records not yet counted in `unacked`.
    const done = this.#segments.filter((s) => s.unacked === 0 && !(this.#writing && s === last));
    if (done.length === 0) return;
    this.#segments = this.#segments.filter((s) => !done.includes(s));
    const active = last !== undefined && done.includes(last) ? this.#active : undefined;
    if (active !== undefined) this.#active = undefined;
    const deleting = (async () => {
      await active?.close();
      for (const s of done) await rm(s.path, { force: true });
    })();
    this.#deleting = deleting;
    try {
      await deleting;
    } finally {
      if (this.#deleting === deleting) this.#deleting = undefined;
    }
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
