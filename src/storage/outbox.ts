import { mkdir } from 'node:fs/promises';
import { PRIVATE_DIR_MODE } from '../core/private-files.ts';
import type { FileHandle } from 'node:fs/promises';
import { StorageError } from '../errors.ts';
import type { Batch } from './batching-writer.ts';
import { jsonLinesCodec } from './line-codec.ts';
import { appendAcks, loadAcks, parseEntry, readEntries, rewriteAckLog, scanLocations, toLine } from './outbox-files.ts';
import type { Location, OutboxEntry, OutboxRecord, OutboxRecordShape } from './outbox-files.ts';
import { DEFAULT_OUTBOX_LIMITS, type AppendResult, type OutboxLimits, type OutboxStats } from './outbox-limits.ts';
import type { Segment } from './segment-files.ts';
import { numberedSegments } from './segment-naming.ts';
import { SegmentedLog } from './segmented-log.ts';

export type { OutboxEntry, OutboxRecord, OutboxRecordShape } from './outbox-files.ts';
export { DEFAULT_OUTBOX_LIMITS, type AppendResult, type OutboxLimits, type OutboxStats } from './outbox-limits.ts';

/** Appended, not yet on disk. */
interface Queued<R> {
  seq: number;
  length: number;
  record: R;
}

/** The ack log is rewritten to the acks that still matter once it passes this size. */
const ACK_LOG_COMPACT_BYTES = 1024 * 1024;
/** Written records kept in memory (oldest first) so sending them needs no disk read; the rest are read back. */
const MEMORY_COPY_MAX_BYTES = 16 * 1024 * 1024;
const NAMING = numberedSegments('seg-', '.jsonl');

/**
 * A durable outbox: records are appended to segment files of JSON lines in one directory
 * (`SegmentedLog`: batching, segments, torn-tail recovery, retry with backoff) and stay there
 * until the receiving end has acknowledged them; `shape`
 * says how a record is written and checked. The ack log and
 * which records are unacknowledged are the outbox's own.
 *
 * - `append` is synchronous: it checks the bounds, assigns sequence numbers and queues the
 *   lines; everything queued in one turn of the event loop is written and made durable
 *   together. `durable()` resolves once it is on disk. A failing write is retried with backoff.
 * - `peek` hands out records in sequence order as soon as they are appended, so a send can
 *   overlap their write: a crash before the fsync loses nothing the caller was told is durable.
 *   Recently written records are served from memory (up to 16 MiB), older ones from disk.
 * - `ack` waits until the records are on disk, then records their sequence numbers in
 *   `acks.jsonl` (fsync'd) before forgetting them; a segment holding an unacknowledged record
 *   is never deleted (the log's `needed`), one whose records are all acknowledged is deleted
 *   at once, the active one too, never under a write to it.
 * - Segment writes do not wait for `ack`'s fsync: the two touch different files. Disk reads
 *   and acks share a lock, so no segment is deleted under a read.
 * - `open` re-reads undelivered records after a restart. A torn final line (a crash mid-write;
 *   unterminated or unparseable) is ignored, counted and cut off; damage anywhere else is a
 *   {@link StorageError}.
 */
export class Outbox<R extends OutboxRecord> {
  readonly dir: string;
  readonly limits: OutboxLimits;
  readonly #shape: OutboxRecordShape<R>;
  readonly #log: SegmentedLog<OutboxEntry<R>>;
  /** Unacknowledged records per segment: a segment with any is needed. */
  readonly #unackedIn: Map<Segment, number>;
  /** Durable, unacknowledged records in sequence order (Map keeps insertion order). */
  readonly #unacked = new Map<number, Location<R>>();
  /** Appended, not yet durable, consecutive sequence numbers. */
  #queue: Queued<R>[] = [];
  #nextSeq: number;
  #durableSeq: number;
  #pendingBytes = 0;
  #ackLog: FileHandle;
  #ackLogBytes: number;
  #lock: Promise<unknown> = Promise.resolve();
  #memoryCopyBytes = 0;
  #closing = false;
  #closed = false;
  #durableWaiters: { seq: number; resolve: () => void; reject: (err: Error) => void }[] = [];
  #stats = { appendedRecords: 0, ackedRecords: 0, refusedFull: 0, refusedTooLarge: 0, tornLinesIgnored: 0 };

  private constructor(
    dir: string,
    limits: OutboxLimits,
    shape: OutboxRecordShape<R>,
    log: SegmentedLog<OutboxEntry<R>>,
    unackedIn: Map<Segment, number>,
    loaded: { unacked: Location<R>[]; nextSeq: number; tornLines: number; ackLog: FileHandle; ackLogBytes: number },
  ) {
    this.dir = dir;
    this.limits = limits;
    this.#shape = shape;
    this.#log = log;
    this.#unackedIn = unackedIn;
    for (const loc of loaded.unacked) {
      this.#unacked.set(loc.seq, loc);
      this.#pendingBytes += loc.length;
    }
    this.#nextSeq = loaded.nextSeq;
    this.#durableSeq = loaded.nextSeq - 1;
    this.#ackLog = loaded.ackLog;
    this.#ackLogBytes = loaded.ackLogBytes;
    this.#stats.tornLinesIgnored = loaded.tornLines;
  }

  /**
   * Opens (or creates) the outbox in `dir` and loads what was not yet acknowledged, streaming
   * its segments.
   * @throws StorageError when the directory cannot be used or holds damaged data.
   */
  static async open<R extends OutboxRecord>(dir: string, shape: OutboxRecordShape<R>, limits: OutboxLimits = DEFAULT_OUTBOX_LIMITS): Promise<Outbox<R>> {
    try {
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    } catch (err) {
      throw new StorageError(`cannot create outbox directory ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const unackedIn = new Map<Segment, number>();
    let outbox: Outbox<R> | undefined;
    const log = await SegmentedLog.open(dir, {
      naming: NAMING,
      codec: jsonLinesCodec('outbox segment', (value) => parseEntry(shape, value)),
      segmentBytes: limits.segmentBytes,
      // Nothing goes by size or age: what is unacknowledged stays (`full` refuses more), what is acknowledged goes at once.
      retention: { maxBytes: Infinity },
      onWriteFailure: 'retry',
      needed: (segment) => (unackedIn.get(segment) ?? 0) > 0,
      onWritten: (segment, offset, batch) => outbox!.#onWritten(segment, offset, batch),
    });
    const { entries, maxSeq } = await scanLocations(log);
    const acks = await loadAcks(dir);
    const unacked = entries.filter((loc) => !acks.acked.has(loc.seq));
    for (const loc of unacked) unackedIn.set(loc.segment, (unackedIn.get(loc.segment) ?? 0) + 1);
    const ackLog = await rewriteAckLog(dir, log.segments, unacked);
    outbox = new Outbox(dir, limits, shape, log, unackedIn, {
      unacked,
      nextSeq: Math.max(maxSeq, acks.maxSeq) + 1,
      tornLines: log.tornRecords + acks.tornLines,
      ackLog,
      ackLogBytes: (await ackLog.stat()).size,
    });
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
    return this.#log.failure;
  }

  /** True when a record of `bytes` serialized bytes would be accepted now. */
  hasRoomFor(bytes: number = this.limits.maxRecordBytes): boolean {
    return this.pendingRecords + 1 <= this.limits.maxOutboxRecords && this.#pendingBytes + bytes <= this.limits.maxOutboxBytes;
  }

  /**
   * Queues `records` for durable storage, all or none. Never throws: a refusal comes back as
   * a value and the caller keeps the records (`full` means: apply backpressure, try later).
   */
  append(records: readonly R[]): AppendResult {
    if (this.#closing) return { ok: false, reason: 'closed' };
    const failure = this.#log.failure;
    if (failure !== undefined && !failure.retriable) return { ok: false, reason: 'unwritable', error: failure };
    const lines: Queued<R>[] = [];
    const buffers: Buffer[] = [];
    let bytes = 0;
    for (const [i, record] of records.entries()) {
      const line = toLine(this.#shape, this.#nextSeq + i, record) + '\n';
      const size = Buffer.byteLength(line);
      if (size > this.limits.maxRecordBytes) {
        this.#stats.refusedTooLarge += 1;
        return { ok: false, reason: 'too-large', id: record.id, bytes: size };
      }
      lines.push({ seq: this.#nextSeq + i, length: size, record });
      buffers.push(Buffer.from(line));
      bytes += size;
    }
    if (lines.length === 0) return { ok: true, firstSeq: this.#nextSeq, lastSeq: this.#nextSeq - 1 };
    if (this.pendingRecords + lines.length > this.limits.maxOutboxRecords || this.#pendingBytes + bytes > this.limits.maxOutboxBytes) {
      this.#stats.refusedFull += 1;
      return { ok: false, reason: 'full', pendingRecords: this.pendingRecords, pendingBytes: this.#pendingBytes };
    }
    const firstSeq = this.#nextSeq;
    this.#nextSeq += lines.length;
    this.#pendingBytes += bytes;
    this.#stats.appendedRecords += lines.length;
    for (const [i, q] of lines.entries()) {
      this.#queue.push(q);
      this.#log.append([buffers[i]!], q.seq);
    }
    return { ok: true, firstSeq, lastSeq: this.#nextSeq - 1 };
  }

  /** Resolves once everything appended before the call is on disk; rejects if the outbox closes first. */
  durable(): Promise<void> {
    const seq = this.#nextSeq - 1;
    if (seq <= this.#durableSeq) return Promise.resolve();
    if (this.#closing || this.#log.failure?.retriable === false) {
      return Promise.reject(new StorageError('outbox closed or unwritable before the records were written'));
    }
    return new Promise((resolve, reject) => this.#durableWaiters.push({ seq, resolve, reject }));
  }

  /**
   * The oldest unacknowledged records above `afterSeq` (durable or still being written), at
   * most `maxRecords` and (beyond the first) `maxBytes`, in sequence order.
   */
  peek(maxRecords: number, maxBytes: number, afterSeq = -1): Promise<OutboxEntry<R>[]> {
    const picked = this.#pick(maxRecords, maxBytes, afterSeq);
    if (picked.every((p) => p.record !== undefined)) {
      return Promise.resolve(picked.map((p) => ({ seq: p.seq, record: p.record! })));
    }
    // Some must be read back: under the lock, so no ack deletes their segment meanwhile.
    return this.#exclusive(async () => {
      const again = this.#pick(maxRecords, maxBytes, afterSeq);
      const onDisk = again.filter((p): p is Location<R> => p.record === undefined && 'segment' in p);
      const read = new Map((await readEntries(this.#shape, onDisk)).map((e) => [e.seq, e.record]));
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
      this.#ackLogBytes += await appendAcks(this.#ackLog, this.dir, fresh);
      for (const seq of fresh) {
        const loc = this.#unacked.get(seq)!;
        this.#unacked.delete(seq);
        this.#unackedIn.set(loc.segment, this.#unackedIn.get(loc.segment)! - 1);
        this.#pendingBytes -= loc.length;
        if (loc.record !== undefined) this.#memoryCopyBytes -= loc.length;
      }
      this.#stats.ackedRecords += fresh.length;
      await this.#deleteAckedSegments();
      if (this.#ackLogBytes > ACK_LOG_COMPACT_BYTES) {
        await this.#ackLog.close();
        this.#ackLog = await rewriteAckLog(this.dir, this.#log.segments, [...this.#unacked.values()]);
        this.#ackLogBytes = (await this.#ackLog.stat()).size;
      }
    });
  }

  stats(): OutboxStats {
    return {
      pendingRecords: this.pendingRecords,
      pendingBytes: this.#pendingBytes,
      queuedRecords: this.#queue.length,
      segments: this.#log.segments.length,
      ...this.#stats,
      failure: this.#log.failure,
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
    // One more attempt when writing is failing; what is still queued after it was never
    // durable, which the waiters learn below (the failure itself is `stats().failure`).
    await this.#log.flushed().catch((err: unknown) => err);
    this.#closed = true;
    await this.#exclusive(async () => {
      await this.#log.close();
      await this.#ackLog.close();
    });
    for (const w of this.#durableWaiters.splice(0)) {
      w.reject(new StorageError('outbox closed before the records were written', { cause: this.#log.failure }));
    }
  }

  /** A batch is durable: its records move from the queue to the unacknowledged, in the same turn. */
  #onWritten(segment: Segment, offset: number, batch: Batch): void {
    if (batch.lastNo === undefined) return;
    let at = offset;
    let n = 0;
    while (n < this.#queue.length && this.#queue[n]!.seq <= batch.lastNo) {
      const q = this.#queue[n++]!;
      const loc: Location<R> = { seq: q.seq, segment, offset: at, length: q.length };
      if (this.#memoryCopyBytes + q.length <= MEMORY_COPY_MAX_BYTES) {
        loc.record = q.record;
        this.#memoryCopyBytes += q.length;
      }
      this.#unacked.set(q.seq, loc);
      at += q.length;
    }
    this.#queue.splice(0, n);
    this.#unackedIn.set(segment, (this.#unackedIn.get(segment) ?? 0) + n);
    this.#durableSeq = batch.lastNo;
    this.#durableWaiters = this.#durableWaiters.filter((w) => {
      if (w.seq > this.#durableSeq) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `seq` is on disk, or once no write will put it there (unwritable, closed). */
  #written(seq: number): Promise<void> {
    if (seq <= this.#durableSeq || this.#queue.length === 0 || this.#closing || this.#log.failure?.retriable === false) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#durableWaiters.push({ seq, resolve, reject: () => resolve() }));
  }

  /** Appended records above `afterSeq` in sequence order: durable ones, then those still queued. */
  #pick(maxRecords: number, maxBytes: number, afterSeq: number): (Location<R> | Queued<R>)[] {
    const picked: (Location<R> | Queued<R>)[] = [];
    let bytes = 0;
    const take = (p: Location<R> | Queued<R>): boolean => {
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

  /** Segments holding nothing unacknowledged go, the active one too; with none left, the ack log is emptied. */
  async #deleteAckedSegments(): Promise<void> {
    await this.#log.dropUnneeded(true);
    const live = new Set(this.#log.segments);
    for (const segment of this.#unackedIn.keys()) if (!live.has(segment)) this.#unackedIn.delete(segment);
    if (this.#log.segments.length === 0 && this.#ackLogBytes > 0) {
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
