import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageError } from '../errors.ts';
import { openDurableAppend, syncWritten, type DurableAppendFile } from './durable-append.ts';
import { writevAll } from './writev-all.ts';

/**
 * An append-only JSON-lines file. Lines appended in the same turn of the event loop are
 * written together and made durable together (one `O_DSYNC` write, or a write and an fdatasync
 * where the platform has no `O_DSYNC`); `flushed()` resolves once everything
 * appended before the call is on disk. A write failure keeps the lines queued, is reported by
 * `failure` (so the receiver can refuse new work with 503) and is retried with backoff.
 */
export class JsonlLog {
  readonly path: string;
  readonly #out: DurableAppendFile;
  #queue: string[] = [];
  #pendingBytes = 0;
  #inWrite = 0;
  #writing: Promise<void> | undefined;
  #failure: StorageError | undefined;
  #retryDelayMs = 100;
  #written = 0;
  #appended = 0;
  /** File size after the last complete batch: a failed write is cut back to it. */
  #sizeBytes: number;
  /** Settles after each batch write attempt, so `flushed()` can stop waiting at its own lines. */
  #batchDone = Promise.withResolvers<void>();

  private constructor(path: string, out: DurableAppendFile, sizeBytes: number) {
    this.path = path;
    this.#out = out;
    this.#sizeBytes = sizeBytes;
  }

  /** Opens `path` for appending (or, with `truncate`, starts it empty). */
  static async open(path: string, options: { truncate?: boolean } = {}): Promise<JsonlLog> {
    try {
      await mkdir(dirname(path), { recursive: true });
      const out = await openDurableAppend(path, options.truncate === true);
      return new JsonlLog(path, out, (await out.file.stat()).size);
    } catch (err) {
      throw new StorageError(`cannot open ${path} for appending: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Bytes appended but not yet durable. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Lines appended but not yet durable. */
  get pendingLines(): number {
    return this.#queue.length + this.#inWrite;
  }

  /** Lines made durable since open. */
  get writtenLines(): number {
    return this.#written;
  }

  /** The last write failure, cleared by the next successful write. */
  get failure(): StorageError | undefined {
    return this.#failure;
  }

  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    for (const line of lines) {
      this.#queue.push(line);
      this.#pendingBytes += line.length + 1;
    }
    this.#appended += lines.length;
    this.#writing ??= this.#drain();
  }

  /**
   * Resolves when every line appended so far is durable (or rejects with the failure). It does
   * not wait for lines appended after the call, so under steady load it settles as soon as its
   * own batch is on disk rather than when the queue first runs empty.
   */
  async flushed(): Promise<void> {
    const target = this.#appended;
    // A failed batch otherwise waits out its backoff: try it once now, so a disk that has been
    // freed since (a shutdown right after recovery) is not reported as still failing.
    if (this.#failure !== undefined && this.#writing === undefined && this.#queue.length > 0) this.#writing = this.#drain();
    while (this.#writing !== undefined && (this.#written < target || this.#failure !== undefined)) {
      await Promise.race([this.#writing, this.#batchDone.promise]);
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  async close(): Promise<void> {
    try {
      await this.flushed();
    } finally {
      await this.#out.file.close();
    }
  }

  async #drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      this.#inWrite = batch.length;
      const { bytes, chars } = encodeLines(batch);
      try {
        // A write to a nearly full disk can be short without an error: write the rest, whose
        // attempt then fails (ENOSPC) rather than leave a torn line counted as written.
        await writevAll(this.#out.file, [bytes]);
        await syncWritten(this.#out);
      } catch (err) {
        // A full disk can take part of the batch: cut the torn tail so the retry appends whole lines.
        await this.#out.file.truncate(this.#sizeBytes).catch(() => undefined);
        this.#inWrite = 0;
        this.#queue = batch.concat(this.#queue);
        this.#failure = new StorageError(`cannot append to ${this.path}: ${(err as Error).message}`, {
          retriable: true,
          cause: err,
        });
        this.#scheduleRetry();
        break;
      }
      this.#inWrite = 0;
      this.#sizeBytes += bytes.length;
      this.#written += batch.length;
      this.#pendingBytes -= chars;
      this.#failure = undefined;
      this.#retryDelayMs = 100;
      this.#signalBatch();
    }
    this.#writing = undefined;
    this.#signalBatch();
  }

  #signalBatch(): void {
    this.#batchDone.resolve();
    this.#batchDone = Promise.withResolvers<void>();
  }

  /** After a failure the queue stays; it is written again later, with growing backoff. */
  #scheduleRetry(): void {
    const timer = setTimeout(() => {
      this.#writing ??= this.#drain();
    }, this.#retryDelayMs);
    timer.unref();
    this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 5_000);
  }
}

/**
 * The lines as UTF-8, each followed by a newline, encoded straight into one buffer (joining
 * them into one string first copied every line once more); `chars` is what `pendingBytes` counted.
 */
function encodeLines(lines: readonly string[]): { bytes: Buffer; chars: number } {
  let size = 0;
  let chars = 0;
  for (const line of lines) {
    size += Buffer.byteLength(line) + 1;
    chars += line.length + 1;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    at += bytes.write(line, at);
    bytes[at++] = 0x0a;
  }
  return { bytes, chars };
}
