import { mkdir, open, readdir, readFile, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { StorageError } from '../errors.ts';
import { syncDir } from '../sinks/kafka/outbox-files.ts';
import { writevAll } from '../sinks/writev-all.ts';
import { openDurableAppend, syncWritten, type DurableAppendFile } from '../sinks/durable-append.ts';

/*
 * The write-ahead log of accepted OTLP requests. A directory holds segment files
 * `seg-<first seq, 16 digits>.wal`, each a run of records framed as
 *   u32 payload length | u8 type | u48 seq | u32 crc32(type, seq, payload) | payload
 * (big-endian). Type 0 and 1 are a traces request body (protobuf, JSON) with its sequence
 * number, type 3 and 4 a logs request body (protobuf, JSON); type 2 is a release mark whose
 * seq field says "every request below this is finished". The
 * mark is what keeps a restart from replaying finished requests still sitting in a live
 * segment; deleting whole segments only bounds the disk.
 */

export type WalFormat = 'protobuf' | 'json';

/** Which OTLP export a request is: the replay decodes it with that signal's decoder. */
export type WalSignal = 'traces' | 'logs';

/** A request still in the log at open, to be replayed through the pipeline. */
export interface WalRecord {
  seq: number;
  signal: WalSignal;
  format: WalFormat;
  bytes: Buffer;
}

export type WalAppend =
  | { ok: true; seq: number; durable: Promise<void> }
  | { ok: false; reason: 'full' | 'unwritable' };

export interface SpanWalOptions {
  /** Bytes on disk (live segments plus queued records) above which `append` answers `full`. */
  maxBytes: number;
  /** A segment is closed and a new one started once it reaches this many bytes. */
  segmentBytes: number;
}

export interface SpanWalStats {
  segments: number;
  pendingBytes: number;
  appended: number;
  /** Every request below this sequence number is finished (the last durable release mark). */
  releasedBelow: number;
  /** Torn final records cut off at open. */
  tornRecords: number;
}

const HEADER_BYTES = 15;
const TYPE_BY_REQUEST = { traces: { protobuf: 0, json: 1 }, logs: { protobuf: 3, json: 4 } } as const;
const RELEASE_TYPE = 2;
/** Record type → what request it holds; the release mark has none. */
const REQUEST_BY_TYPE: readonly ({ signal: WalSignal; format: WalFormat } | undefined)[] = [
  { signal: 'traces', format: 'protobuf' },
  { signal: 'traces', format: 'json' },
  undefined,
  { signal: 'logs', format: 'protobuf' },
  { signal: 'logs', format: 'json' },
];
const MAX_TYPE = REQUEST_BY_TYPE.length - 1;
const SEGMENT_NAME = /^seg-(\d{16})\.wal$/;
/** The framing's seq field is 48 bits wide. */
const MAX_SEQ = 2 ** 48 - 1;

interface Segment {
  firstSeq: number;
  /** Highest request seq in it; firstSeq - 1 when it holds none. */
  lastSeq: number;
  path: string;
  sizeBytes: number;
}

interface Queued {
  frame: [Buffer, Buffer];
  /** Request seq, or undefined for a release mark. */
  seq: number | undefined;
  done: PromiseWithResolvers<void>;
}

function segmentName(firstSeq: number): string {
  return `seg-${String(firstSeq).padStart(16, '0')}.wal`;
}

/** A record as its header and payload, written together by `writev`: the payload is never copied. */
function frame(type: number, seq: number, payload: Buffer): [Buffer, Buffer] {
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32BE(payload.length, 0);
  header.writeUInt8(type, 4);
  header.writeUIntBE(seq, 5, 6);
  header.writeUInt32BE(crc32(payload, crc32(header.subarray(4, 11))), 11);
  return [header, payload];
}

interface Parsed {
  records: { type: number; seq: number; payload: Buffer }[];
  /** Where a torn final record starts, when there is one. */
  tornAt: number | undefined;
}

/** Splits a segment; a bad record that reaches the end of the file is torn, anywhere else damage. */
function parseSegment(buffer: Buffer, path: string): Parsed {
  const records: Parsed['records'] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const torn = { records, tornAt: offset };
    if (buffer.length - offset < HEADER_BYTES) return torn;
    const length = buffer.readUInt32BE(offset);
    const end = offset + HEADER_BYTES + length;
    if (end > buffer.length) return torn;
    const type = buffer.readUInt8(offset + 4);
    const seq = buffer.readUIntBE(offset + 5, 6);
    const payload = buffer.subarray(offset + HEADER_BYTES, end);
    const crcOk = buffer.readUInt32BE(offset + 11) === crc32(payload, crc32(buffer.subarray(offset + 4, offset + 11)));
    if (!crcOk || type > MAX_TYPE) {
      if (end === buffer.length) return torn;
      throw new StorageError(
        `damaged write-ahead log ${path} at byte ${offset}: ${crcOk ? `unknown record type ${type}` : 'checksum mismatch'}; ` +
          'move the wal directory aside to start without it (its requests are then lost)',
        { context: { path, offset } },
      );
    }
    records.push({ type, seq, payload });
    offset = end;
  }
  return { records, tornAt: undefined };
}

/**
 * A segmented, checksummed write-ahead log of accepted requests. Records appended in one turn
 * of the event loop are written together and made durable together (`openDurableAppend`). A failed write
 * is cut back, its records are refused (`durable` rejects) and `append` answers `unwritable`
 * until a backoff has passed.
 *
 * @example
 * const { wal, records } = await SpanWal.open(join(dataDir, 'wal'), { maxBytes, segmentBytes });
 * const r = wal.append('protobuf', body);
 * if (r.ok) await r.durable; // now acknowledge
 * await wal.release(firstUnfinishedSeq);
 */
export class SpanWal {
  readonly dir: string;
  readonly #options: SpanWalOptions;
  readonly #segments: Segment[];
  #out: DurableAppendFile;
  #nextSeq: number;
  #releasedBelow: number;
  /** The release mark queued or written last, so an unchanged floor writes nothing. */
  #markedBelow: number;
  #tornRecords: number;
  #appended = 0;
  #liveBytes: number;
  #queue: Queued[] = [];
  #queuedBytes = 0;
  #writing: Promise<void> | undefined;
  #failure: StorageError | undefined;
  #retryDelayMs = 100;
  #releasing: Promise<void> | undefined;
  #closed = false;

  private constructor(dir: string, options: SpanWalOptions, segments: Segment[], file: DurableAppendFile, state: { nextSeq: number; releasedBelow: number; tornRecords: number }) {
    this.dir = dir;
    this.#options = options;
    this.#segments = segments;
    this.#out = file;
    this.#nextSeq = state.nextSeq;
    this.#releasedBelow = state.releasedBelow;
    this.#markedBelow = state.releasedBelow;
    this.#tornRecords = state.tornRecords;
    this.#liveBytes = segments.reduce((sum, s) => sum + s.sizeBytes, 0);
  }

  /**
   * Opens (or creates) the log in `dir` and returns it with the requests not yet released,
   * oldest first. A torn final record (a crash mid-write) is cut off and counted.
   * @throws StorageError when the directory cannot be used or holds damaged records.
   */
  static async open(dir: string, options: SpanWalOptions): Promise<{ wal: SpanWal; records: WalRecord[] }> {
    let names: string[];
    try {
      await mkdir(dir, { recursive: true });
      names = await readdir(dir);
    } catch (err) {
      throw new StorageError(`cannot use write-ahead log directory ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const files = names
      .map((name) => SEGMENT_NAME.exec(name))
      .filter((m) => m !== null)
      .map((m) => ({ path: join(dir, m[0]), firstSeq: Number(m[1]) }))
      .sort((a, b) => a.firstSeq - b.firstSeq);

    const segments: Segment[] = [];
    const requests: WalRecord[] = [];
    let releasedBelow = 0;
    let maxSeq = -1;
    let tornRecords = 0;
    for (const [i, file] of files.entries()) {
      let buffer: Buffer;
      try {
        buffer = await readFile(file.path);
      } catch (err) {
        throw new StorageError(`cannot read write-ahead log ${file.path}: ${(err as Error).message}`, { cause: err });
      }
      const { records, tornAt } = parseSegment(buffer, file.path);
      if (tornAt !== undefined) {
        if (i !== files.length - 1) {
          throw new StorageError(`damaged write-ahead log ${file.path} at byte ${tornAt}: truncated record before the last segment`, {
            context: { path: file.path, offset: tornAt },
          });
        }
        tornRecords += 1;
        try {
          await truncate(file.path, tornAt);
        } catch (err) {
          throw new StorageError(`cannot cut the torn tail of ${file.path}: ${(err as Error).message}`, { cause: err });
        }
      }
      const segment: Segment = { firstSeq: file.firstSeq, lastSeq: file.firstSeq - 1, path: file.path, sizeBytes: tornAt ?? buffer.length };
      for (const r of records) {
        if (r.type === RELEASE_TYPE) {
          releasedBelow = Math.max(releasedBelow, r.seq);
          continue;
        }
        if (r.seq <= maxSeq || r.seq < file.firstSeq) {
          throw new StorageError(`damaged write-ahead log ${file.path}: sequence ${r.seq} out of order`, { context: { path: file.path } });
        }
        maxSeq = r.seq;
        segment.lastSeq = r.seq;
        // Copied out of the file buffer, so replay does not pin whole segments.
        requests.push({ seq: r.seq, ...REQUEST_BY_TYPE[r.type]!, bytes: Buffer.from(r.payload) });
      }
      segments.push(segment);
    }
    const nextSeq = Math.max(maxSeq + 1, releasedBelow);
    let file: DurableAppendFile;
    try {
      if (segments.length === 0) segments.push(await createSegment(dir, nextSeq));
      file = await openDurableAppend(segments.at(-1)!.path);
    } catch (err) {
      throw err instanceof StorageError ? err : new StorageError(`cannot open write-ahead log in ${dir}: ${(err as Error).message}`, { cause: err });
    }
    const wal = new SpanWal(dir, options, segments, file, { nextSeq, releasedBelow, tornRecords });
    return { wal, records: requests.filter((r) => r.seq >= releasedBelow) };
  }

  /** Bytes held: live segments plus records queued for the next write. */
  get pendingBytes(): number {
    return this.#liveBytes + this.#queuedBytes;
  }

  /** Why `append` would refuse now, or undefined. */
  refusal(): 'full' | 'unwritable' | undefined {
    if (this.#closed || this.#failure !== undefined) return 'unwritable';
    if (this.pendingBytes >= this.#options.maxBytes) return 'full';
    return undefined;
  }

  /** The last write failure, cleared after a backoff so the next append tries again. */
  get failure(): StorageError | undefined {
    return this.#failure;
  }

  /** Queues one request body; `durable` resolves once it is on disk (rejects when the write failed). */
  append(format: WalFormat, bytes: Buffer, signal: WalSignal = 'traces'): WalAppend {
    if (this.#closed || this.#failure !== undefined) return { ok: false, reason: 'unwritable' };
    if (this.pendingBytes + HEADER_BYTES + bytes.length > this.#options.maxBytes) return { ok: false, reason: 'full' };
    if (this.#nextSeq > MAX_SEQ) return { ok: false, reason: 'unwritable' };
    const seq = this.#nextSeq++;
    const done = this.#enqueue(frame(TYPE_BY_REQUEST[signal][format], seq, bytes), seq);
    this.#appended += 1;
    return { ok: true, seq, durable: done };
  }

  /**
   * Records that every request below `belowSeq` is finished (a durable mark, so a restart does
   * not replay them) and then deletes whole segments holding only such requests. The active
   * segment stays until it is full. One release runs at a time; a failed one is retried by the
   * next call.
   */
  release(belowSeq: number): Promise<void> {
    if (belowSeq <= this.#markedBelow || this.#closed) return this.#releasing ?? Promise.resolve();
    this.#releasing ??= this.#release(belowSeq).finally(() => (this.#releasing = undefined));
    return this.#releasing;
  }

  stats(): SpanWalStats {
    return {
      segments: this.#segments.length,
      pendingBytes: this.pendingBytes,
      appended: this.#appended,
      releasedBelow: this.#releasedBelow,
      tornRecords: this.#tornRecords,
    };
  }

  /** Waits for queued records and a running release, then closes the file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#writing !== undefined || this.#releasing !== undefined) {
      await Promise.allSettled([this.#writing, this.#releasing]);
    }
    this.#closed = true;
    await this.#out.file.close();
  }

  async #release(belowSeq: number): Promise<void> {
    this.#markedBelow = belowSeq;
    try {
      await this.#enqueue(frame(RELEASE_TYPE, belowSeq, Buffer.alloc(0)), undefined);
    } catch {
      // Not released: a later call writes a mark again (failure is already reported by append).
      this.#markedBelow = this.#releasedBelow;
      return;
    }
    this.#releasedBelow = Math.max(this.#releasedBelow, belowSeq);
    // Only after the mark is durable, so the newest mark always lives in a live segment.
    while (this.#segments.length > 1 && this.#segments[0]!.lastSeq < this.#releasedBelow) {
      const segment = this.#segments[0]!;
      try {
        await unlink(segment.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
      }
      this.#segments.shift();
      this.#liveBytes -= segment.sizeBytes;
    }
  }

  #enqueue(bytes: [Buffer, Buffer], seq: number | undefined): Promise<void> {
    const done = Promise.withResolvers<void>();
    this.#queue.push({ frame: bytes, seq, done });
    this.#queuedBytes += bytes[0].length + bytes[1].length;
    this.#writing ??= this.#drain();
    return done.promise;
  }

  async #drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      const buffers = batch.flatMap((q) => q.frame);
      let length = 0;
      for (const b of buffers) length += b.length;
      this.#queuedBytes -= length;
      let active = this.#segments.at(-1)!;
      try {
        if (active.sizeBytes >= this.#options.segmentBytes) active = await this.#roll(batch.find((q) => q.seq !== undefined)?.seq ?? this.#nextSeq);
        await writevAll(this.#out.file, buffers);
        await syncWritten(this.#out);
      } catch (err) {
        // Cut what a full disk took of the batch, so the next write starts on a record boundary.
        await this.#out.file.truncate(active.sizeBytes).catch(() => undefined);
        this.#fail(batch, err);
        continue;
      }
      active.sizeBytes += length;
      this.#liveBytes += length;
      for (const q of batch) {
        if (q.seq !== undefined) active.lastSeq = q.seq;
        q.done.resolve();
      }
      this.#retryDelayMs = 100;
    }
    this.#writing = undefined;
  }

  async #roll(firstSeq: number): Promise<Segment> {
    const segment = await createSegment(this.dir, firstSeq);
    const file = await openDurableAppend(segment.path);
    await this.#out.file.close();
    this.#out = file;
    this.#segments.push(segment);
    return segment;
  }

  #fail(batch: readonly Queued[], err: unknown): void {
    const failure = err instanceof StorageError ? err : new StorageError(`cannot append to the write-ahead log in ${this.dir}: ${(err as Error).message}`, { retriable: true, cause: err });
    this.#failure = failure;
    for (const q of batch) q.done.reject(failure);
    // Refuse for a while, then let the next request try the disk again.
    const timer = setTimeout(() => (this.#failure = undefined), this.#retryDelayMs);
    timer.unref();
    this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 5_000);
  }
}

async function createSegment(dir: string, firstSeq: number): Promise<Segment> {
  const path = join(dir, segmentName(firstSeq));
  try {
    const handle = await open(path, 'a');
    await handle.close();
    // A new file survives a crash only once its directory entry is synced.
    await syncDir(dir);
  } catch (err) {
    throw new StorageError(`cannot create write-ahead log segment ${path}: ${(err as Error).message}`, { retriable: true, cause: err });
  }
  return { firstSeq, lastSeq: firstSeq - 1, path, sizeBytes: 0 };
}
