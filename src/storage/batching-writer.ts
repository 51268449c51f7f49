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

/**
 * Where a writer is. Every transition happens in one place (`#enter`), so no timer or finished
 * write can leave a stale one behind:
 * - `idle`: nothing queued, or (under `refuse`) the queue was rejected; an append starts a write.
 * - `writing`: one write loop runs; it takes batches until the queue is empty or a batch fails.
 * - `waiting-retry` (`retry` only): a batch failed and is queued again; one timer, owned by
 *   this state, starts the next write; `flushed()` or `close()` try at once instead.
 * - `broken`: a failure that is not retriable (a torn batch could not be cut): nothing more is
 *   written; appends and `flushed()` reject, and so does what was queued (`refuse`: at once;
 *   `retry`: at close, counted as pending until then).
 * - `closed`: `close()` has finished; appends reject.
 */
export type WriterState = 'idle' | 'writing' | 'waiting-retry' | 'broken' | 'closed';

interface Entry {
  buffers: Buffer[];
  bytes: number;
  no: number | undefined;
  /** How many records of the owner it holds (a JSON-lines append of several lines is one entry). */
  records: number;
  done: PromiseWithResolvers<void> | undefined;
}

/** A `flushed()` call: settles once the entries appended before it are settled. */
interface FlushWaiter {
  target: number;
  resolve: () => void;
  reject: (err: StorageError) => void;
}

/**
 * Records appended in one turn of the event loop are written, and made durable, together: one
 * write per batch instead of one per record. A failed batch is retried or refused with bounded
 * exponential backoff (`OnWriteFailure`). Nothing waits by polling: `flushed()` and `close()`
 * are settled by the write loop when it gets there.
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
  readonly #failureLabel: string;
  #state: WriterState = 'idle';
  /** The retry timer of `waiting-retry`; cleared on every way out of it. */
  #retryTimer: NodeJS.Timeout | undefined;
  /** Settles when the running write loop ends (`writing` only). */
  #loop: Promise<void> | undefined;
  #queue: Entry[] = [];
  #queuedBytes = 0;
  #inWrite = 0;
  #appended = 0;
  #queuedRecords = 0;
  #inWriteRecords = 0;
  #writtenRecords = 0;
  #failure: StorageError | undefined;
  #waiters: FlushWaiter[] = [];
  #closing = false;

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

  get state(): WriterState {
    return this.#state;
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
    if (this.#state === 'broken' || this.#state === 'closed') {
      // Nothing more is written; the owner refuses on `failure`, this only keeps the promise honest.
      const err = this.#failure ?? new StorageError(`${this.#failureLabel}: closed`);
      return track ? Promise.reject(err) : undefined;
    }
    let bytes = 0;
    for (const b of buffers) bytes += b.length;
    const done = track ? Promise.withResolvers<void>() : undefined;
    this.#queue.push({ buffers, bytes, no, records, done });
    this.#queuedBytes += bytes;
    this.#queuedRecords += records;
    this.#appended += 1;
    // `writing` takes it in its loop; `waiting-retry` writes it with the failed batch.
    if (this.#state === 'idle') this.#startLoop(true);
    return done?.promise;
  }

  /**
   * Resolves when every record appended so far is durable; rejects with the failure when a
   * write of them fails first (or failed and is waiting out its backoff: then it is tried once
   * at once, so a disk freed since is not reported as still failing). It does not wait for
   * records appended after the call.
   */
  flushed(): Promise<void> {
    if (this.#state === 'broken') return Promise.reject(this.#failure);
    const target = this.#appended;
    if (this.#settled() >= target) return this.#failure === undefined ? Promise.resolve() : Promise.reject(this.#failure);
    const waiter = Promise.withResolvers<void>();
    this.#waiters.push({ target, resolve: waiter.resolve, reject: waiter.reject });
    if (this.#state === 'waiting-retry') this.#startLoop(false);
    return waiter.promise;
  }

  /**
   * Finishes the write in progress, gives a failing batch one more attempt, then rejects what
   * is still queued. Bounded: the loop stops at the first failure once closing.
   */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#state === 'waiting-retry') this.#startLoop(false);
    if (this.#state === 'writing') await this.#loop;
    if (this.#state === 'broken') this.#rejectQueue(this.#failure!);
    else this.#rejectQueue(this.#failure ?? new StorageError(`${this.#failureLabel}: closed before the records were written`));
    this.#enter('closed');
  }

  /** Written, or (under `refuse`) rejected: either way no longer waiting. */
  #settled(): number {
    return this.#appended - this.#queue.length - this.#inWrite;
  }

  #enter(next: WriterState): void {
    if (this.#state === 'closed') return;
    if (this.#retryTimer !== undefined) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
    }
    this.#state = next;
    if (next !== 'writing') this.#loop = undefined;
  }

  /** idle | waiting-retry → writing. */
  #startLoop(yieldFirst: boolean): void {
    this.#enter('writing');
    this.#loop = this.#run(yieldFirst);
  }

  async #run(yieldFirst: boolean): Promise<void> {
    // Let the rest of this turn's appends join the same write.
    if (yieldFirst) await new Promise<void>((resolve) => setImmediate(resolve));
    else await Promise.resolve();
    while (this.#queue.length > 0) {
      const entries = this.#takeBatch();
      const batch = toBatch(entries);
      this.#inWrite = entries.length;
      this.#inWriteRecords = batch.records;
      this.#queuedRecords -= batch.records;
      let error: unknown;
      let ok = true;
      try {
        await this.#write(batch);
      } catch (err) {
        ok = false;
        error = err;
      }
      this.#inWrite = 0;
      this.#inWriteRecords = 0;
      if (ok) {
        this.#succeeded(entries, batch);
        continue;
      }
      const failure = this.#failed(entries, batch, error);
      this.#rejectWaiters(failure);
      if (this.#state !== 'writing') return; // broken or waiting-retry
      if (this.#closing) break;
    }
    this.#enter('idle');
  }

  #succeeded(entries: Entry[], batch: Batch): void {
    this.#queuedBytes -= batch.bytes;
    this.#writtenRecords += batch.records;
    this.#failure = undefined;
    this.#backoff.reset();
    for (const e of entries) e.done?.resolve();
    const settled = this.#settled();
    this.#waiters = this.#waiters.filter((w) => {
      if (w.target > settled) return true;
      w.resolve();
      return false;
    });
  }

  /** Records the failure and moves to the state it calls for (still `writing` under `refuse`). */
  #failed(entries: Entry[], batch: Batch, err: unknown): StorageError {
    const failure = err instanceof StorageError ? err : new StorageError(`${this.#failureLabel}: ${(err as Error).message}`, { retriable: true, cause: err });
    this.#failure = failure;
    if (!failure.retriable) {
      // The file could not be repaired (a torn batch may remain): writing more would bury it
      // mid-segment. Refuse from now on; the next open cuts the torn tail.
      this.#queue = entries.concat(this.#queue);
      this.#queuedRecords += batch.records;
      this.#enter('broken');
      // `refuse`: the sender learns now; `retry`: they stay pending (never durable) until close.
      if (this.#policy === 'refuse') this.#rejectQueue(failure);
      return failure;
    }
    const delayMs = this.#backoff.next();
    if (this.#policy === 'retry') {
      this.#queue = entries.concat(this.#queue);
      this.#queuedRecords += batch.records;
      this.#enter('waiting-retry');
      if (!this.#closing) {
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          if (this.#state === 'waiting-retry') this.#startLoop(false);
        }, delayMs);
        this.#retryTimer.unref();
      }
      return failure;
    }
    this.#queuedBytes -= batch.bytes;
    for (const e of entries) e.done?.reject(failure);
    // Refuse for a while, then let the next record try the disk again.
    setTimeout(() => {
      if (this.#failure === failure) this.#failure = undefined;
    }, delayMs).unref();
    return failure;
  }

  /** Rejects every `flushed()` still waiting: a write of their records failed. */
  #rejectWaiters(failure: StorageError): void {
    for (const w of this.#waiters.splice(0)) w.reject(failure);
  }

  #rejectQueue(err: StorageError): void {
    const left = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#queuedRecords = 0;
    for (const e of left) e.done?.reject(err);
    this.#rejectWaiters(err);
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
}

function toBatch(entries: readonly Entry[]): Batch {
  const buffers: Buffer[] = [];
  let bytes = 0;
  let records = 0;
  let firstNo: number | undefined;
  let lastNo: number | undefined;
  for (const e of entries) {
    for (const b of e.buffers) buffers.push(b);
    bytes += e.bytes;
    records += e.records;
    if (e.no !== undefined) {
      firstNo ??= e.no;
      lastNo = e.no;
    }
  }
  return { buffers, bytes, records, firstNo, lastNo };
}
