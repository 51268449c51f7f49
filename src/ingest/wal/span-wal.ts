import { StorageError } from '../../errors.ts';
import { encodeFrame, FRAME_HEADER_BYTES, frameCodec, MAX_FRAME_SEQ, type Frame } from '../../storage/frame-codec.ts';
import { numberedSegments } from '../../storage/segment-naming.ts';
import { SegmentedLog } from '../../storage/segmented-log.ts';
import { REFUSAL } from '../refusal.ts';

/*
 * The write-ahead log of accepted OTLP requests, on the storage layer: a directory of segment
 * files `seg-<first seq, 16 digits>.wal`, each a run of checksummed frames (`frame-codec.ts`).
 * Type 0 and 1 are a traces request body (protobuf, JSON) with its sequence number, type 3 and
 * 4 a logs request body (protobuf, JSON); type 2 is a release mark whose seq field says "every
 * request below this is finished". The mark is what keeps a restart from replaying finished
 * requests still sitting in a live segment; deleting whole segments only bounds the disk.
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

export type WalAppend = { ok: true; seq: number; durable: Promise<void> } | { ok: false; reason: 'full' | 'unwritable' };

export interface SpanWalOptions {
  /** Bytes on disk (unreleased segments, the active one, queued records) above which `append` answers `full`. */
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

const TYPE_BY_REQUEST = { traces: { protobuf: 0, json: 1 }, logs: { protobuf: 3, json: 4 } } as const;
/** The release mark's record type. */
export const RELEASE_TYPE = 2;
/** Record type → what request it holds; the release mark has none. */
export const REQUEST_BY_TYPE: readonly ({ signal: WalSignal; format: WalFormat } | undefined)[] = [
  { signal: 'traces', format: 'protobuf' },
  { signal: 'traces', format: 'json' },
  undefined,
  { signal: 'logs', format: 'protobuf' },
  { signal: 'logs', format: 'json' },
];
/** The log's frames and its segments' names: `verify` reads the log with them, without opening it for writing. */
export const WAL_CODEC = frameCodec('write-ahead log', REQUEST_BY_TYPE.length - 1);
export const WAL_NAMING = numberedSegments('seg-', '.wal');

/**
 * A segmented, checksummed write-ahead log of accepted requests. Records appended in one turn
 * of the event loop are written together and made durable together. A failed write is cut
 * back, its records are refused (`durable` rejects) and `append` answers `unwritable` until a
 * backoff has passed. A segment holding an unreleased request is never deleted; when those
 * alone fill `maxBytes`, `append` answers `full` (503 at the receiver).
 *
 * @example
 * const { wal, records } = await SpanWal.open(join(dataDir, 'wal'), { maxBytes, segmentBytes });
 * for await (const r of records) replay(r); // streamed, before the first append
 * const r = wal.append('protobuf', body);
 * if (r.ok) await r.durable; // now acknowledge
 * await wal.release(firstUnfinishedSeq);
 */
export class SpanWal {
  readonly dir: string;
  readonly #log: SegmentedLog<Frame>;
  readonly #maxBytes: number;
  /** Shared with the log's `needed`: every request below it is finished. */
  readonly #floor: { releasedBelow: number };
  #nextSeq: number;
  /** The release mark queued or written last, so an unchanged floor writes nothing. */
  #markedBelow: number;
  #appended = 0;
  #releasing: Promise<void> | undefined;
  #closed = false;

  private constructor(log: SegmentedLog<Frame>, maxBytes: number, floor: { releasedBelow: number }, nextSeq: number) {
    this.dir = log.dir;
    this.#log = log;
    this.#maxBytes = maxBytes;
    this.#floor = floor;
    this.#nextSeq = nextSeq;
    this.#markedBelow = floor.releasedBelow;
  }

  /**
   * Opens (or creates) the log in `dir` and returns it with the requests not yet released,
   * oldest first, as a stream read one chunk at a time (iterate it before the first append).
   * A torn final record (a crash mid-write) is cut off and counted.
   * @throws StorageError when the directory cannot be used or holds damaged records.
   */
  static async open(dir: string, options: SpanWalOptions): Promise<{ wal: SpanWal; records: AsyncIterable<WalRecord> }> {
    const floor = { releasedBelow: 0 };
    const log = await SegmentedLog.open(dir, {
      naming: WAL_NAMING,
      codec: WAL_CODEC,
      segmentBytes: options.segmentBytes,
      retention: { maxBytes: options.maxBytes },
      onWriteFailure: 'refuse',
      // A segment holding a request not yet released is what a restart replays.
      needed: (segment) => segment.lastNo >= floor.releasedBelow,
    });
    // First pass, streamed: the newest release mark and each segment's last request.
    let maxSeq = -1;
    for await (const { value, segment } of log.records()) {
      if (value.type === RELEASE_TYPE) {
        floor.releasedBelow = Math.max(floor.releasedBelow, value.seq);
        continue;
      }
      if (value.seq <= maxSeq || value.seq < segment.firstNo) {
        throw new StorageError(`damaged write-ahead log ${segment.path}: sequence ${value.seq} out of order`, { context: { path: segment.path } });
      }
      maxSeq = value.seq;
      segment.lastNo = value.seq;
    }
    const nextSeq = Math.max(maxSeq + 1, floor.releasedBelow);
    await log.ensureActive(nextSeq);
    const wal = new SpanWal(log, options.maxBytes, floor, nextSeq);
    const releasedBelow = floor.releasedBelow;
    // Each iteration reads the log again from its start.
    return { wal, records: { [Symbol.asyncIterator]: () => unreleased(log, releasedBelow) } };
  }

  /** Bytes held: segments on disk plus records queued for the next write. */
  get pendingBytes(): number {
    return this.#log.fileBytes + this.#log.pendingBytes;
  }

  /** Why `append` would refuse now, or undefined. */
  refusal(): typeof REFUSAL.walFull | typeof REFUSAL.walUnwritable | undefined {
    if (this.#closed || this.#log.failure !== undefined) return REFUSAL.walUnwritable;
    if (this.#log.heldBytes() >= this.#maxBytes) return REFUSAL.walFull;
    return undefined;
  }

  /** The last write failure, cleared after a backoff so the next append tries again. */
  get failure(): StorageError | undefined {
    return this.#log.failure;
  }

  /** Queues one request body; `durable` resolves once it is on disk (rejects when the write failed). */
  append(format: WalFormat, bytes: Buffer, signal: WalSignal = 'traces'): WalAppend {
    if (this.#closed || this.#log.failure !== undefined) return { ok: false, reason: 'unwritable' };
    if (this.#log.wouldOverflow(FRAME_HEADER_BYTES + bytes.length)) return { ok: false, reason: 'full' };
    if (this.#nextSeq > MAX_FRAME_SEQ) return { ok: false, reason: 'unwritable' };
    const seq = this.#nextSeq++;
    const durable = this.#log.append(encodeFrame(TYPE_BY_REQUEST[signal][format], seq, bytes), seq, true);
    this.#appended += 1;
    return { ok: true, seq, durable };
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
      segments: this.#log.segments.length,
      pendingBytes: this.pendingBytes,
      appended: this.#appended,
      releasedBelow: this.#floor.releasedBelow,
      tornRecords: this.#log.tornRecords,
    };
  }

  /** Waits for queued records and a running release, then closes the file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    while (this.#releasing !== undefined) await Promise.allSettled([this.#releasing]);
    this.#closed = true;
    await this.#log.close();
  }

  async #release(belowSeq: number): Promise<void> {
    this.#markedBelow = belowSeq;
    try {
      await this.#log.append(encodeFrame(RELEASE_TYPE, belowSeq, Buffer.alloc(0)), undefined, true);
    } catch {
      // Not released: a later call writes a mark again (the failure is reported by append).
      this.#markedBelow = this.#floor.releasedBelow;
      return;
    }
    this.#floor.releasedBelow = Math.max(this.#floor.releasedBelow, belowSeq);
    // Only after the mark is durable, so the newest mark always lives in a live segment.
    // A segment that cannot be deleted now is deleted by the next release or write.
    await this.#log.dropUnneeded().catch(() => undefined);
  }
}

/** The second pass: requests at or above the release floor, each copied out of its chunk. */
async function* unreleased(log: SegmentedLog<Frame>, releasedBelow: number): AsyncGenerator<WalRecord> {
  for await (const { value } of log.records()) {
    const request = REQUEST_BY_TYPE[value.type];
    if (request === undefined || value.seq < releasedBelow) continue;
    // Copied out of the chunk, so a record the pipeline keeps does not pin a whole chunk.
    yield { seq: value.seq, ...request, bytes: Buffer.from(value.payload) };
  }
}
