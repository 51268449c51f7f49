import { mkdir, open, readdir, rename, rm, stat, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE } from '../core/private-files.ts';
import { StorageError } from '../errors.ts';
import { openDurableAppend, type DurableAppendFile } from './durable-append.ts';
import type { RecordCodec } from './record-codec.ts';
import type { SegmentNaming } from './segment-naming.ts';
import { readSegment } from './segment-reader.ts';
import { syncDir } from './sync-dir.ts';

/** One segment file of a log. */
export interface Segment {
  /** The number its name carries (first record number, or first byte offset when rotated). */
  firstNo: number;
  /** The owner's number of the last record written to it; `firstNo - 1` when none is known. */
  lastNo: number;
  path: string;
  sizeBytes: number;
  modifiedMs: number;
}

/** Where a torn tail starts, found without reading the whole file (JSON lines: after the last newline). */
export type FindTailEnd = (path: string, sizeBytes: number) => Promise<number>;

export interface OpenSegmentsOptions<T> {
  naming: SegmentNaming;
  codec: RecordCodec<T>;
  /** A faster way to find the end of the last whole record; without it the last segment is streamed. */
  findTailEnd?: FindTailEnd;
}

/**
 * The segment files of one log in one directory, oldest first, and the active (last) one open
 * for durable appending. At open, a torn tail of the active segment (a crash mid-write) is cut
 * off and counted. Creating and renaming a file syncs the directory, so the entry survives a
 * crash. The active segment is never deleted; `roll` closes it and starts the next.
 */
export class SegmentFiles {
  readonly dir: string;
  readonly naming: SegmentNaming;
  readonly tornRecords: number;
  readonly #segments: Segment[];
  #out: DurableAppendFile | undefined;

  private constructor(dir: string, naming: SegmentNaming, segments: Segment[], out: DurableAppendFile | undefined, tornRecords: number) {
    this.dir = dir;
    this.naming = naming;
    this.#segments = segments;
    this.#out = out;
    this.tornRecords = tornRecords;
  }

  /** @throws StorageError when the directory cannot be used or the active segment not repaired. */
  static async open<T>(dir: string, options: OpenSegmentsOptions<T>): Promise<SegmentFiles> {
    const { naming, codec } = options;
    let names: string[];
    try {
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      names = await readdir(dir);
    } catch (err) {
      throw new StorageError(`cannot use ${codec.name} directory ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const found = names
      .map((name) => ({ name, firstNo: naming.parse(name) }))
      .filter((f): f is { name: string; firstNo: number } => f.firstNo !== undefined)
      .sort((a, b) => a.firstNo - b.firstNo);
    const segments: Segment[] = [];
    for (const f of found) segments.push(await statSegment(join(dir, f.name), f.firstNo, codec.name));
    if (naming.activeName !== undefined) {
      const path = join(dir, naming.activeName);
      const last = segments.at(-1);
      const firstNo = last === undefined ? 0 : last.firstNo + last.sizeBytes;
      const active = await stat(path).then(
        (st) => ({ firstNo, lastNo: firstNo - 1, path, sizeBytes: st.size, modifiedMs: st.mtimeMs }),
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return undefined;
          throw new StorageError(`cannot read ${codec.name} ${path}: ${err.message}`, { cause: err });
        },
      );
      segments.push(active ?? { firstNo, lastNo: firstNo - 1, path, sizeBytes: 0, modifiedMs: Date.now() });
    }
    let tornRecords = 0;
    const active = segments.at(-1);
    if (active !== undefined && active.sizeBytes > 0) {
      const end = await (options.findTailEnd ?? streamTailEnd(codec))(active.path, active.sizeBytes);
      if (end < active.sizeBytes) {
        tornRecords = 1;
        try {
          await truncate(active.path, end);
        } catch (err) {
          throw new StorageError(`cannot cut the torn tail of ${active.path}: ${(err as Error).message}`, { cause: err });
        }
        active.sizeBytes = end;
      }
    }
    const files = new SegmentFiles(dir, naming, segments, undefined, tornRecords);
    if (naming.activeName !== undefined) await files.#openActive(true);
    else if (active !== undefined) await files.#openActive(false);
    return files;
  }

  /** Oldest first; the last is the active one. */
  get segments(): readonly Segment[] {
    return this.#segments;
  }

  get active(): Segment | undefined {
    return this.#segments.at(-1);
  }

  /** The active segment's file, once there is one. */
  get out(): DurableAppendFile | undefined {
    return this.#out;
  }

  get totalBytes(): number {
    let sum = 0;
    for (const s of this.#segments) sum += s.sizeBytes;
    return sum;
  }

  /**
   * Closes the active segment (renamed to its closed name in the rotated scheme) and starts a
   * new one whose name carries `firstNo` (rotated: the log-wide offset of its first byte).
   */
  async roll(firstNo: number): Promise<Segment> {
    const { naming, dir } = this;
    let previous = this.active;
    try {
      await this.#out?.file.close();
      this.#out = undefined;
      // An empty segment that is not open was listed by a roll that then could not open it (no
      // inode, no space), or left empty: never closed as a segment of its own. The rotated
      // scheme opens it again; the numbered one drops it (its name may not fit `firstNo`).
      if (previous !== undefined && previous.sizeBytes === 0) {
        if (naming.activeName !== undefined) {
          await this.#openActive(true);
          return previous;
        }
        await rm(previous.path, { force: true });
        this.#segments.pop();
        previous = this.active;
      }
      if (naming.activeName !== undefined && previous !== undefined) {
        const closedPath = join(dir, naming.name(previous.firstNo));
        await rename(previous.path, closedPath);
        previous.path = closedPath;
        const next = previous.firstNo + previous.sizeBytes;
        this.#segments.push({ firstNo: next, lastNo: next - 1, path: join(dir, naming.activeName), sizeBytes: 0, modifiedMs: Date.now() });
      } else {
        this.#segments.push({ firstNo, lastNo: firstNo - 1, path: join(dir, naming.name(firstNo)), sizeBytes: 0, modifiedMs: Date.now() });
      }
      await this.#openActive(true);
    } catch (err) {
      throw err instanceof StorageError
        ? err
        : new StorageError(`cannot start a new segment in ${dir}: ${(err as Error).message}`, { retriable: true, cause: err });
    }
    return this.active!;
  }

  /**
   * Deletes closed segments; the active one only with `includeActive` (numbered scheme: the
   * next write then starts a new one). The directory is not synced after: a deletion a crash
   * undoes only brings back data the owner no longer needed.
   */
  async remove(segments: readonly Segment[], includeActive = false): Promise<Segment[]> {
    const removed: Segment[] = [];
    for (const segment of segments) {
      const i = this.#segments.indexOf(segment);
      const isActive = i === this.#segments.length - 1;
      if (i === -1 || (isActive && (!includeActive || this.naming.activeName !== undefined))) continue;
      if (isActive) {
        await this.#out?.file.close();
        this.#out = undefined;
      }
      try {
        await unlink(segment.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw new StorageError(`cannot delete segment ${segment.path}: ${(err as Error).message}`, { retriable: true, cause: err });
        }
      }
      this.#segments.splice(this.#segments.indexOf(segment), 1);
      removed.push(segment);
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.#out?.file.close();
    this.#out = undefined;
  }

  /** Opens the active segment for appending; `created`: it may be new, so its entry is synced. */
  async #openActive(created: boolean): Promise<void> {
    const active = this.active!;
    try {
      this.#out = await openDurableAppend(active.path);
      if (created) await syncDir(this.dir);
    } catch (err) {
      throw new StorageError(`cannot open segment ${active.path} for appending: ${(err as Error).message}`, { retriable: true, cause: err });
    }
  }
}

async function statSegment(path: string, firstNo: number, name: string): Promise<Segment> {
  try {
    const s = await stat(path);
    return { firstNo, lastNo: firstNo - 1, path, sizeBytes: s.size, modifiedMs: s.mtimeMs };
  } catch (err) {
    throw new StorageError(`cannot read ${name} segment ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Streams the file through its codec; the end of the last whole record is where a torn tail starts. */
function streamTailEnd<T>(codec: RecordCodec<T>): FindTailEnd {
  return async (path, sizeBytes) => {
    let end = sizeBytes;
    for await (const _ of readSegment(path, codec, { onTornTail: (offset) => (end = offset) }));
    return end;
  };
}

/** JSON lines: a torn tail is what follows the last newline, found reading backwards from the end. */
export const findLinesTailEnd: FindTailEnd = async (path, sizeBytes) => {
  const handle = await open(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let end = sizeBytes;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (at !== -1) return start + at + 1;
      end = start;
    }
    return 0;
  } finally {
    await handle.close();
  }
};
