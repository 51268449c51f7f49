import { StorageError } from '../errors.ts';
import { BatchingWriter, type Batch, type OnWriteFailure } from './batching-writer.ts';
import { syncWritten } from './durable-append.ts';
import { planRetention, type RetentionLimits } from './retention.ts';
import { SegmentFiles, type OpenSegmentsOptions, type Segment } from './segment-files.ts';
import { readSegment, type ReadRecord } from './segment-reader.ts';
import { writevAll } from './writev-all.ts';

/** Linux's IOV_MAX: the buffers one writev takes. */
const MAX_WRITEV_BUFFERS = 1024;

export interface SegmentedLogOptions<T> extends OpenSegmentsOptions<T> {
  /**
   * The active segment is closed (the write then starts a new one) before a write would take
   * it past this many bytes; a single larger record gets a segment of its own.
   */
  segmentBytes: number;
  retention: RetentionLimits;
  onWriteFailure: OnWriteFailure;
  /**
   * Whether the owner still needs a closed segment (unreleased requests, unacknowledged
   * records): such a segment is never deleted. Default: nothing is needed once written.
   */
  needed?: (segment: Segment) => boolean;
  /**
   * Called once a batch is durable, in the same turn, with the segment it went to and the
   * offset it starts at: an owner that reads records back by position records them here.
   */
  onWritten?: (segment: Segment, offset: number, batch: Batch) => void;
  /** Called once segments are deleted (retention, `dropUnneeded`): an owner reading them back lets them go. */
  onRemoved?: (segments: readonly Segment[]) => void;
}

/** A record read back, with the segment it is in. */
export interface LogRecord<T> extends ReadRecord<T> {
  segment: Segment;
}

/**
 * An append-only log of segment files with retention: the storage layer every durable log of
 * trajwatch stands on. Appends are batched per event-loop turn into one durable write
 * (`BatchingWriter`, batches of at most one segment); the active segment is closed before a
 * write would take it past `segmentBytes`; before every
 * write, closed segments beyond `retention` go, oldest first, except those the owner still
 * `needed`. When the needed data alone fills `maxBytes`, `wouldOverflow` says so and the owner
 * refuses new input (503) instead of deleting.
 *
 * @example
 * const log = await SegmentedLog.open(dir, { naming: rotatedSegments('findings.jsonl'), codec: lineCodec('findings log'),
 *   findTailEnd: findLinesTailEnd, segmentBytes, retention: { maxBytes }, onWriteFailure: 'retry' });
 * log.append([encodeLines(lines)]);
 * await log.flushed();
 */
export class SegmentedLog<T> {
  readonly dir: string;
  readonly #files: SegmentFiles;
  readonly #options: SegmentedLogOptions<T>;
  readonly #writer: BatchingWriter;
  /** Writes and deletions take turns: a segment is never deleted under a write to it. */
  #lock: Promise<unknown> = Promise.resolve();
  #deletedSegments = 0;
  #deletedBytes = 0;

  private constructor(files: SegmentFiles, options: SegmentedLogOptions<T>) {
    this.dir = files.dir;
    this.#files = files;
    this.#options = options;
    this.#writer = new BatchingWriter(
      (batch) => this.#exclusive(() => this.#writeBatch(batch)),
      options.onWriteFailure,
      `cannot append to ${options.codec.name} in ${files.dir}`,
      {
        maxBatchBytes: options.segmentBytes,
      },
    );
  }

  /** Opens (or creates) the log in `dir`; a torn tail of the active segment is cut off (`tornRecords`). */
  static async open<T>(dir: string, options: SegmentedLogOptions<T>): Promise<SegmentedLog<T>> {
    return new SegmentedLog(await SegmentFiles.open(dir, options), options);
  }

  get segments(): readonly Segment[] {
    return this.#files.segments;
  }

  /** Torn final records cut off at open. */
  get tornRecords(): number {
    return this.#files.tornRecords;
  }

  /** Bytes in the log's files. */
  get fileBytes(): number {
    return this.#files.totalBytes;
  }

  /** Appended, not yet durable. */
  get pendingBytes(): number {
    return this.#writer.pendingBytes;
  }

  get pendingRecords(): number {
    return this.#writer.pendingRecords;
  }

  get writtenRecords(): number {
    return this.#writer.writtenRecords;
  }

  get failure(): StorageError | undefined {
    return this.#writer.failure;
  }

  /** Closed segments (and their bytes) deleted by retention since open. */
  get deleted(): { segments: number; bytes: number } {
    return { segments: this.#deletedSegments, bytes: this.#deletedBytes };
  }

  /** Bytes retention cannot delete: the segments still needed, the active one, and what is queued. */
  heldBytes(): number {
    const needed = this.#options.needed ?? (() => false);
    const segments = this.#files.segments;
    let held = this.#writer.pendingBytes;
    for (const [i, s] of segments.entries()) if (i === segments.length - 1 || needed(s)) held += s.sizeBytes;
    return held;
  }

  /** True when `bytes` more would not fit under `maxBytes` even after deleting everything not needed. */
  wouldOverflow(bytes: number): boolean {
    return this.heldBytes() + bytes > this.#options.retention.maxBytes;
  }

  /** See {@link BatchingWriter.append}; `no` is the owner's record number (sequence), kept per segment as `lastNo`. */
  append(buffers: Buffer[], no: number | undefined, track: true, records?: number): Promise<void>;
  append(buffers: Buffer[], no?: number, track?: false, records?: number): undefined;
  append(buffers: Buffer[], no?: number, track = false, records = 1): Promise<void> | undefined {
    return track ? this.#writer.append(buffers, no, true, records) : this.#writer.append(buffers, no, false, records);
  }

  flushed(): Promise<void> {
    return this.#writer.flushed();
  }

  /** Starts the first segment, named `firstNo`, when the directory has none (so the log's file exists from open). */
  async ensureActive(firstNo: number): Promise<void> {
    if (this.#files.active === undefined) await this.#files.roll(firstNo);
  }

  /**
   * Deletes every closed segment the owner no longer needs, now (the owner's data is worthless
   * once released); with `includeActive` the active one too, when not needed (numbered scheme:
   * an outbox with everything acknowledged keeps no file).
   */
  dropUnneeded(includeActive = false): Promise<void> {
    return this.#exclusive(async () => {
      const needed = this.#options.needed ?? (() => false);
      const segments = includeActive ? this.#files.segments : this.#files.segments.slice(0, -1);
      await this.#remove(
        segments.filter((s) => !needed(s)),
        includeActive && this.#writer.pendingRecords === 0,
      );
    });
  }

  /**
   * Streams every record of every segment, oldest first, one chunk at a time (see
   * `readSegment`). Meant for start-up, before appending: it reads the segments as they were
   * when it started.
   */
  async *records(): AsyncGenerator<LogRecord<T>> {
    for (const segment of this.#files.segments.slice()) {
      for await (const r of readSegment(segment.path, this.#options.codec)) yield { ...r, segment };
    }
  }

  /** Waits for queued records (one more attempt if writing is failing), then closes the file. */
  async close(): Promise<void> {
    try {
      await this.#writer.close();
    } finally {
      await this.#files.close();
    }
  }

  async #writeBatch(batch: Batch): Promise<void> {
    let active = this.#files.active;
    // Batches are at most a segment, so a segment exceeds `segmentBytes` only by holding one larger record.
    // A new segment when: none is open (the owner had the active one deleted), this batch would
    // take it past segmentBytes, or its numbers do not continue the segment's (a segment holds a
    // consecutive run, as its name promises: after a restart the owner may have skipped numbers).
    const full = active !== undefined && active.sizeBytes > 0 && active.sizeBytes + batch.bytes > this.#options.segmentBytes;
    const gap = active !== undefined && active.sizeBytes > 0 && batch.firstNo !== undefined && batch.firstNo !== active.lastNo + 1;
    if (active === undefined || this.#files.out === undefined || full || gap) {
      active = await this.#files.roll(batch.firstNo ?? (active === undefined ? 0 : active.lastNo + 1));
    }
    await this.#enforceRetention(batch.bytes);
    const out = this.#files.out!;
    // Past IOV_MAX buffers one writev becomes several writes, each synchronous under O_DSYNC: one copy is cheaper.
    const buffers = batch.buffers.length > MAX_WRITEV_BUFFERS ? [Buffer.concat(batch.buffers, batch.bytes)] : batch.buffers;
    try {
      await writevAll(out.file, buffers);
      await syncWritten(out);
    } catch (err) {
      // A full disk can take part of a batch: cut it, so the next write starts on a record boundary.
      try {
        await out.file.truncate(active.sizeBytes);
      } catch (truncateErr) {
        throw new StorageError(`cannot write or repair ${active.path}`, { cause: new AggregateError([err, truncateErr]), retriable: false });
      }
      throw new StorageError(`cannot append to ${active.path}: ${(err as Error).message}`, { cause: err, retriable: true });
    }
    const offset = active.sizeBytes;
    active.sizeBytes += batch.bytes;
    active.modifiedMs = Date.now();
    if (batch.lastNo !== undefined) active.lastNo = batch.lastNo;
    this.#options.onWritten?.(active, offset, batch);
  }

  #exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => undefined);
    return run;
  }

  async #enforceRetention(incomingBytes: number): Promise<void> {
    const plan = planRetention(this.#files.segments, this.#options.retention, this.#options.needed ?? (() => false), incomingBytes, Date.now());
    await this.#remove(plan.remove);
  }

  async #remove(segments: readonly Segment[], includeActive = false): Promise<void> {
    if (segments.length === 0) return;
    const removed = await this.#files.remove(segments, includeActive);
    if (removed.length > 0) this.#options.onRemoved?.(removed);
    let bytes = 0;
    for (const s of removed) bytes += s.sizeBytes;
    this.#deletedSegments += removed.length;
    this.#deletedBytes += bytes;
  }
}
