import { StorageError } from '../errors.ts';
import { Backoff } from './backoff.ts';

/** What happens to a batch whose write failed. */
export type OnWriteFailure =
  /** Keep it queued and write it again after a backoff (an output log: nothing is lost). */
  | 'retry'
  /** Reject its records and refuse new ones until a backoff has passed (a write-ahead log: the sender retries). */
  | 'refuse';

/** Records written together: their buffers, their byte count, the owner's numbers of the first and last. */
export interface Batch {
  buffers: Buffer[];
  bytes: number;
  records: number;
  firstNo: number | undefined;
  lastNo: number | undefined;
}

/** Writes a batch whole and durably, or throws having cut back what it wrote (a record boundary). */
export type WriteBatch = (batch: Batch) => Promise<void>;

interface Entry {
  buffers: Buffer[];
  bytes: number;
  no: number | undefined;
  /** How many records of the owner it holds (a JSON-lines append of several lines is one entry). */
  records: number;
  done: PromiseWithResolvers<void> | undefined;
}

/**
 * Records appended in one turn of the event loop are written, and made durable, together: one
 * write per batch instead of one per record. A failed batch is retried or refused with bounded
 * exponential backoff (`OnWriteFailure`).
 *
 * @example
 * const writer = new BatchingWriter((batch) => files.write(batch), 'refuse');
 * await writer.append([header, payload], seq, true); // durable now
 */
export class BatchingWriter {
  readonly #write: WriteBatch;
  readonly #policy: OnWriteFailure;
  readonly #backoff: Backoff;
  readonly #maxBatchBytes: number;
  #queue: Entry[] = [];
  #queuedBytes = 0;
  #inWrite = 0;
  #appended = 0;
  #queuedRecords = 0;
  #inWriteRecords = 0;
  #writtenRecords = 0;
  #writing: Promise<void> | undefined;
  #failure: StorageError | undefined;
  #failureLabel: string;
  /** Settles after each batch write attempt, so `flushed()` can stop waiting at its own records. */
  #batchDone = Promise.withResolvers<void>();
  #closed = false;

  /**
   * `maxBatchBytes`: a batch holds records up to this many bytes (at least one record), so a
   * segmented log can keep each segment within its size.
   */
  constructor(write: WriteBatch, policy: OnWriteFailure, label: string, options: { backoff?: Backoff; maxBatchBytes?: number } = {}) {
    this.#write = write;
    this.#maxBatchBytes = options.maxBatchBytes ?? Infinity;
    this.#policy = policy;
    this.#failureLabel = label;
    this.#backoff = options.backoff ?? new Backoff();
  }

  /** Bytes appended and not yet durable (queued or being written). */
  get pendingBytes(): number {
    return this.#queuedBytes;
  }

  /** Records appended and not yet durable. */
  get pendingRecords(): number {
    return this.#queuedRecords + this.#inWriteRecords;
  }

  /** Records made durable since construction. */
  get writtenRecords(): number {
    return this.#writtenRecords;
  }

  /**
   * The last write failure: under `retry` until a write succeeds, under `refuse` until the
   * backoff has passed; one that is not retriable (the file could not be repaired) stays.
   */
  get failure(): StorageError | undefined {
    return this.#failure;
  }

  /**
   * Queues one entry (its buffers are written in order, never copied) holding `records` of
   * the owner's records. With `track`, the promise resolves once it is durable and rejects
   * when its write failed (`refuse`) or the writer closed first.
   */
  append(buffers: Buffer[], no: number | undefined, track: true, records?: number): Promise<void>;
  append(buffers: Buffer[], no?: number, track?: false, records?: number): undefined;
  append(buffers: Buffer[], no: number | undefined, track = false, records = 1): Promise<void> | undefined {
    if (this.#failure?.retriable === false) {
      // Nothing more is written; the owner refuses on `failure`, this only keeps the promise honest.
      return track ? Promise.reject(this.#failure) : undefined;
    }
    let bytes = 0;
    for (const b of buffers) bytes += b.length;
    const done = track ? Promise.withResolvers<void>() : undefined;
    this.#queue.push({ buffers, bytes, no, records, done });
    this.#queuedBytes += bytes;
    this.#queuedRecords += records;
    this.#appended += 1;
    this.#writing ??= this.#drain();
    return done?.promise;
  }

  /**
   * Resolves when every record appended so far is durable, or rejects with the failure. It does
   * not wait for records appended after the call.
   */
  async flushed(): Promise<void> {
    const target = this.#appended;
    // A failing batch otherwise waits out its backoff: try it once now, so a disk freed since
    // (a shutdown right after recovery) is not reported as still failing.
    if (this.#failure?.retriable === true && this.#writing === undefined && this.#queue.length > 0) this.#writing = this.#drain(false);
    while (this.#writing !== undefined && (this.#settled() < target || this.#failure !== undefined)) {
      await Promise.race([this.#writing, this.#batchDone.promise]);
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Waits for the write in progress; records still queued after it (a failing disk) are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#writing !== undefined) await this.#writing;
    const left = this.#queue.splice(0);
    this.#queuedBytes = 0;
    this.#queuedRecords = 0;
    for (const e of left) e.done?.reject(this.#failure ?? new StorageError(`${this.#failureLabel}: closed before the records were written`));
  }

  /** Written, or (under `refuse`) rejected: either way no longer waiting. */
  #settled(): number {
    return this.#appended - this.#queue.length - this.#inWrite;
  }

  async #drain(yieldFirst = true): Promise<void> {
    // Let the rest of this turn's appends join the same write.
    if (yieldFirst) await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const entries = this.#takeBatch();
      const batch = toBatch(entries);
      this.#inWrite = entries.length;
      this.#inWriteRecords = batch.records;
      this.#queuedRecords -= batch.records;
      try {
        await this.#write(batch);
      } catch (err) {
        this.#inWrite = 0;
        this.#inWriteRecords = 0;
        this.#failed(entries, batch, err);
        if (this.#policy === 'retry' || this.#failure?.retriable === false) break;
        continue;
      }
      this.#inWrite = 0;
      this.#inWriteRecords = 0;
      this.#queuedBytes -= batch.bytes;
      this.#writtenRecords += batch.records;
      this.#failure = undefined;
      this.#backoff.reset();
      for (const e of entries) e.done?.resolve();
      this.#signalBatch();
    }
    this.#writing = undefined;
    this.#signalBatch();
  }

  /** The oldest queued records, up to `maxBatchBytes` (at least one). */
  #takeBatch(): Entry[] {
    let bytes = this.#queue[0]!.bytes;
    let n = 1;
    while (n < this.#queue.length && bytes + this.#queue[n]!.bytes <= this.#maxBatchBytes) bytes += this.#queue[n++]!.bytes;
    if (n === this.#queue.length) {
      const all = this.#queue;
      this.#queue = [];
      return all;
    }
    return this.#queue.splice(0, n);
  }

  #failed(entries: Entry[], batch: Batch, err: unknown): void {
    const failure =
      err instanceof StorageError ? err : new StorageError(`${this.#failureLabel}: ${(err as Error).message}`, { retriable: true, cause: err });
    this.#failure = failure;
    const delayMs = this.#backoff.next();
    if (!failure.retriable) {
      // The file could not be repaired (a torn batch may remain): writing more would bury it
      // mid-segment. Refuse from now on; the next open cuts the torn tail.
      const left = entries.concat(this.#queue);
      this.#queue = this.#policy === 'retry' ? left : [];
      if (this.#policy === 'refuse') {
        this.#queuedBytes = 0;
        this.#queuedRecords = 0;
        for (const e of left) e.done?.reject(failure);
      } else this.#queuedRecords += batch.records;
      return;
    }
    if (this.#policy === 'retry') {
      this.#queue = entries.concat(this.#queue);
      this.#queuedRecords += batch.records;
      if (this.#closed) return;
      const timer = setTimeout(() => (this.#writing ??= this.#drain(false)), delayMs);
      timer.unref();
      return;
    }
    this.#queuedBytes -= batch.bytes;
    for (const e of entries) e.done?.reject(failure);
    // Refuse for a while, then let the next record try the disk again.
    const timer = setTimeout(() => {
      if (this.#failure === failure) this.#failure = undefined;
    }, delayMs);
    timer.unref();
  }

  #signalBatch(): void {
    this.#batchDone.resolve();
    this.#batchDone = Promise.withResolvers<void>();
  }
}

function toBatch(entries: readonly Entry[]): Batch {
  const buffers: Buffer[] = [];
  let bytes = 0;
  let firstNo: number | undefined;
  let lastNo: number | undefined;
  for (const e of entries) {
    for (const b of e.buffers) buffers.push(b);
    bytes += e.bytes;
    if (e.no !== undefined) {
      firstNo ??= e.no;
      lastNo = e.no;
    }
  }
  let records = 0;
  for (const e of entries) records += e.records;
  return { buffers, bytes, records, firstNo, lastNo };
}
