import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StorageError } from '../errors.ts';
import { encodeLines, lineCodec } from '../storage/line-codec.ts';
import type { RetentionLimits } from '../storage/retention.ts';
import { findLinesTailEnd } from '../storage/segment-files.ts';
import { rotatedSegments } from '../storage/segment-naming.ts';
import { SegmentedLog } from '../storage/segmented-log.ts';

/** Where a JSON-lines log rotates and how much of it is kept. */
export interface JsonlRetention extends RetentionLimits {
  segmentBytes: number;
}

/** No rotation and no limit: the file given is the whole log (`replay`'s outputs). */
export const KEEP_EVERYTHING: JsonlRetention = { maxBytes: Infinity, segmentBytes: Infinity };

/**
 * An append-only JSON-lines log on the storage layer. The active file keeps the path given
 * (`findings.jsonl`), so readers find it where they always did; once it holds `segmentBytes`
 * it is renamed `findings.<log-wide offset of its first byte, 16 digits>.jsonl` and a new one
 * started; closed files beyond `maxBytes` (or `maxAgeHours`) are deleted, oldest first.
 * Nothing in it is needed once written, so retention never refuses input.
 *
 * Lines appended in the same turn of the event loop are written and made durable together;
 * `flushed()` resolves once everything appended before the call is on disk. A write failure
 * keeps the lines queued, is reported by `failure` (so the receiver can refuse new work with
 * 503) and is retried with backoff. A torn final line (a crash mid-write) is cut at open.
 */
export class JsonlLog {
  readonly path: string;
  /** The active file's name (`findings.jsonl`). */
  readonly name: string;
  readonly #log: SegmentedLog<Buffer>;

  private constructor(path: string, log: SegmentedLog<Buffer>) {
    this.path = path;
    this.name = basename(path);
    this.#log = log;
  }

  /** Opens `path` for appending (or, with `truncate`, starts the log empty: its closed files go too). */
  static async open(path: string, options: { truncate?: boolean; retention?: JsonlRetention } = {}): Promise<JsonlLog> {
    const dir = dirname(path);
    const naming = rotatedSegments(basename(path));
    const retention = options.retention ?? KEEP_EVERYTHING;
    try {
      if (options.truncate === true) await removeLog(dir, naming.activeName!, naming.parse);
    } catch (err) {
      throw new StorageError(`cannot open ${path} for appending: ${(err as Error).message}`, { cause: err });
    }
    const log = await SegmentedLog.open(dir, {
      naming,
      codec: lineCodec(`log ${path}`),
      findTailEnd: findLinesTailEnd,
      segmentBytes: retention.segmentBytes,
      retention,
      onWriteFailure: 'retry',
    });
    return new JsonlLog(path, log);
  }

  /** Bytes appended but not yet durable. */
  get pendingBytes(): number {
    return this.#log.pendingBytes;
  }

  /** Lines appended and not yet durable, lines made durable since open, torn final lines cut off at open. */
  lines(): { pending: number; written: number; torn: number } {
    return { pending: this.#log.pendingRecords, written: this.#log.writtenRecords, torn: this.#log.tornRecords };
  }

  /** The last write failure, cleared by the next successful write. */
  get failure(): StorageError | undefined {
    return this.#log.failure;
  }

  /** Bytes in the log's files (active and closed), and what retention deleted since open. */
  get disk(): { fileBytes: number; segments: number; deletedSegments: number; deletedBytes: number } {
    const { segments, bytes } = this.#log.deleted;
    return { fileBytes: this.#log.fileBytes, segments: this.#log.segments.length, deletedSegments: segments, deletedBytes: bytes };
  }

  append(lines: readonly string[]): void {
    if (lines.length === 0) return;
    // The call's lines encoded once, straight into one buffer (joining them first copied every line once more).
    this.#log.append([encodeLines(lines)], undefined, false, lines.length);
  }

  /**
   * Resolves when every line appended so far is durable (or rejects with the failure). It does
   * not wait for lines appended after the call, so under steady load it settles as soon as its
   * own batch is on disk rather than when the queue first runs empty.
   */
  flushed(): Promise<void> {
    return this.#log.flushed();
  }

  async close(): Promise<void> {
    try {
      await this.#log.flushed();
    } finally {
      await this.#log.close();
    }
  }
}

async function removeLog(dir: string, activeName: string, parse: (name: string) => number | undefined): Promise<void> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  for (const name of names) {
    if (name === activeName || parse(name) !== undefined) await unlink(join(dir, name));
  }
}
