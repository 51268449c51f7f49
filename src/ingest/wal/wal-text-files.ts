import { closeSync, openSync, readSync } from 'node:fs';
import { StorageError } from '../../errors.ts';
import type { Segment } from '../../storage/segment-files.ts';
import type { TextFile } from '../long-text.ts';

/**
 * The span WAL's segments as {@link TextFile}s: where the long texts of logged requests are
 * read back (a check, the window builder, the trajectory log at close). Each segment gets one
 * read-only descriptor, opened at its first read and closed when the segment is deleted, so
 * the descriptors are bounded by the segments on disk. Reads are synchronous `pread`s: they
 * happen at close, in the same turn as the analysis, and come from the page cache while the
 * data is recent.
 */
export class WalTextFiles {
  readonly #files = new Map<Segment, SegmentTextFile>();

  /** The text file over `segment` (one per segment). */
  of(segment: Segment): TextFile {
    let file = this.#files.get(segment);
    if (file === undefined) {
      file = new SegmentTextFile(segment.path);
      this.#files.set(segment, file);
    }
    return file;
  }

  /** The segments are gone from disk: their descriptors are closed (a read after this is a bug and fails). */
  removed(segments: readonly Segment[]): void {
    for (const segment of segments) {
      this.#files.get(segment)?.close();
      this.#files.delete(segment);
    }
  }

  /** Open descriptors (for the tests: bounded by the segments). */
  get openFiles(): number {
    let n = 0;
    for (const file of this.#files.values()) if (file.isOpen) n += 1;
    return n;
  }

  close(): void {
    for (const file of this.#files.values()) file.close();
    this.#files.clear();
  }
}

class SegmentTextFile implements TextFile {
  readonly path: string;
  #fd: number | undefined;
  #closed = false;

  constructor(path: string) {
    this.path = path;
  }

  get isOpen(): boolean {
    return this.#fd !== undefined;
  }

  read(position: number, length: number): Buffer {
    if (this.#closed) throw this.#error('the segment was deleted while a step still referenced it');
    let fd = this.#fd;
    try {
      fd ??= this.#fd = openSync(this.path, 'r');
      const out = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, out, done, length - done, position + done);
        if (n === 0) throw new Error(`end of file at ${position + done}`);
        done += n;
      }
      return out;
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw this.#error((err as Error).message, err);
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #error(detail: string, cause?: unknown): StorageError {
    return new StorageError(`cannot read a long text back from the write-ahead log ${this.path}: ${detail}`, {
      retriable: false,
      cause,
      context: { path: this.path },
    });
  }
}
