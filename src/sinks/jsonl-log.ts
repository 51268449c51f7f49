import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StorageError } from '../errors.ts';

/**
 * An append-only JSON-lines file. Lines appended in the same turn of the event loop are
 * written together and made durable with one fdatasync; `flushed()` resolves once everything
 * appended before the call is on disk. A write failure keeps the lines queued, is reported by
 * `failure` (so the receiver can refuse new work with 503) and is retried with backoff.
 */
export class JsonlLog {
  readonly path: string;
  #file: FileHandle;
  #queue: string[] = [];
  #pendingBytes = 0;
  #inWrite = 0;
  #writing: Promise<void> | undefined;
  #failure: StorageError | undefined;
  #retryDelayMs = 100;
  #written = 0;

  private constructor(path: string, file: FileHandle) {
    this.path = path;
    this.#file = file;
  }

  /** Opens `path` for appending (or, with `truncate`, starts it empty). */
  static async open(path: string, options: { truncate?: boolean } = {}): Promise<JsonlLog> {
    try {
      await mkdir(dirname(path), { recursive: true });
      return new JsonlLog(path, await open(path, options.truncate === true ? 'w' : 'a'));
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
    this.#writing ??= this.#drain();
  }

  /** Resolves when every line appended so far is durable (or rejects with the failure). */
  async flushed(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
    if (this.#failure !== undefined) throw this.#failure;
  }

  async close(): Promise<void> {
    try {
      await this.flushed();
    } finally {
      await this.#file.close();
    }
  }

  async #drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      this.#inWrite = batch.length;
      const text = batch.join('\n') + '\n';
      try {
        await this.#file.write(text);
        await this.#file.datasync();
      } catch (err) {
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
      this.#written += batch.length;
      this.#pendingBytes -= text.length;
      this.#failure = undefined;
      this.#retryDelayMs = 100;
    }
    this.#writing = undefined;
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
