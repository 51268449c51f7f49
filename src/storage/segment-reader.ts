import { open, type FileHandle } from 'node:fs/promises';
import { StorageError } from '../errors.ts';
import type { RecordCodec } from './record-codec.ts';

/** A record read from a segment, with where it sits in the file. */
export interface ReadRecord<T> {
  value: T;
  offset: number;
  bytes: number;
}

export interface ReadSegmentOptions {
  /** Bytes read per disk read; a record larger than this is read whole in one more read. */
  chunkBytes?: number;
  /**
   * Called with the offset of a torn tail (an incomplete or damaged record that reaches the end
   * of the file); without it a torn tail is a StorageError (only the last segment may have one).
   */
  onTornTail?: (offset: number) => void;
}

const DEFAULT_CHUNK_BYTES = 1024 * 1024;

/**
 * Streams the records of one segment file in order, a chunk at a time: memory holds the chunk
 * being decoded (and whatever records the caller keeps), never the whole file. A yielded value
 * may be a view into the chunk: copy what you keep, so the chunk can be collected.
 *
 * @example
 * for await (const { value } of readSegment(path, frameCodec('write-ahead log', 4))) feed(value);
 * @throws StorageError on damage before the end of the file, or a torn tail without `onTornTail`.
 */
export async function* readSegment<T>(path: string, codec: RecordCodec<T>, options: ReadSegmentOptions = {}): AsyncGenerator<ReadRecord<T>> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    throw new StorageError(`cannot read ${codec.name} ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    let buffer = Buffer.alloc(0);
    /** File offset of buffer[0]. */
    let base = 0;
    let at = 0;
    let eof = false;
    /** Records read so far: errors name the damaged one by its number. */
    let count = 0;
    for (;;) {
      if (at === buffer.length && eof) return;
      const decoded = at === buffer.length ? { kind: 'more' as const, need: 1 } : codec.decode(buffer, at);
      let need: number;
      if (decoded.kind === 'record') {
        yield { value: decoded.value, offset: base + at, bytes: decoded.bytes };
        at += decoded.bytes;
        count += 1;
        continue;
      } else if (decoded.kind === 'damage') {
        const reachesEnd = at + decoded.bytes >= buffer.length;
        if (!reachesEnd || eof) {
          if (reachesEnd) return torn(path, codec, base + at, options);
          const where = codec.recordName === undefined ? `byte ${base + at}` : `${codec.recordName} ${count + 1} (byte ${base + at})`;
          throw new StorageError(
            `damaged ${codec.name} ${path} at ${where}: ${decoded.reason}; ` + `move it aside to start without it (what it holds is then lost)`,
            { context: { path, offset: base + at, record: count + 1 } },
          );
        }
        // Whether it is the last record decides torn tail or damage: read on to know.
        need = decoded.bytes + 1;
      } else {
        if (eof) return torn(path, codec, base + at, options);
        need = decoded.need;
      }
      const left = buffer.length - at;
      const want = Math.max(chunkBytes, need - left);
      const next = Buffer.allocUnsafe(left + want);
      buffer.copy(next, 0, at);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(next, left, want, base + buffer.length));
      } catch (err) {
        throw new StorageError(`cannot read ${codec.name} ${path}: ${(err as Error).message}`, { cause: err, retriable: true });
      }
      if (bytesRead === 0) eof = true;
      base += at;
      at = 0;
      buffer = next.subarray(0, left + bytesRead);
    }
  } finally {
    await handle.close();
  }
}

function torn(path: string, codec: RecordCodec<unknown>, offset: number, options: ReadSegmentOptions): void {
  if (options.onTornTail === undefined) {
    throw new StorageError(`damaged ${codec.name} ${path} at byte ${offset}: truncated record before the last segment`, {
      context: { path, offset },
    });
  }
  options.onTornTail(offset);
}
