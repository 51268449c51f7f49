import { StorageError } from '../../errors.ts';
import { encodeFrame, FRAME_HEADER_BYTES, frameCodec, MAX_FRAME_SEQ, type Frame } from '../../storage/frame-codec.ts';
import type { Segment } from '../../storage/segment-files.ts';
import { numberedSegments } from '../../storage/segment-naming.ts';
import { SegmentedLog } from '../../storage/segmented-log.ts';
import type { TextSource } from '../long-text.ts';
import { REFUSAL } from '../refusal.ts';
import { WalTextFiles } from './wal-text-files.ts';

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
  /** Moves a text source over `bytes` to where the body lies in its segment (replay's long texts refer to the log). */
  moveTexts(texts: TextSource): void;
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
  /** Shared with the log's `needed`: every request below `releasedBelow` is finished; none below `referencedBelow` is referred to. */
  readonly #floor: { releasedBelow: number; referencedBelow: number };
  readonly #texts: WalTextFiles;
  /** Bodies queued whose long texts move to the segment once written (identity: the batch holds the same buffers). */
  readonly #moving = new Map<Buffer, { texts: TextSource; seq: number }>();
  #nextSeq: number;
  /** The release mark queued or written last, so an unchanged floor writes nothing. */
  #markedBelow: number;
  #appended = 0;
  #releasing: Promise<void> | undefined;
  #closed = false;

  private constructor(
    log: SegmentedLog<Frame>,
    maxBytes: number,
    floor: { releasedBelow: number; referencedBelow: number },
    nextSeq: number,
    texts: WalTextFiles,
  ) {
    this.dir = log.dir;
    this.#texts = texts;
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
    const floor = { releasedBelow: 0, referencedBelow: Number.POSITIVE_INFINITY };
    const texts = new WalTextFiles();
    let wal: SpanWal | undefined;
    const log = await SegmentedLog.open(dir, {
      naming: WAL_NAMING,
      codec: WAL_CODEC,
      segmentBytes: options.segmentBytes,
      retention: { maxBytes: options.maxBytes },
      onWriteFailure: 'refuse',
      // A segment holding a request not yet released is what a restart replays; one holding a
      // request whose long texts a retained step still refers to is read at its next revision.
      needed: (segment) => segment.lastNo >= Math.min(floor.releasedBelow, floor.referencedBelow),
      onWritten: (segment, offset, batch) => {
        if (wal !== undefined) wal.#moveTexts(segment, offset, batch.buffers);
      },
      onRemoved: (segments) => texts.removed(segments),
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
    wal = new SpanWal(log, options.maxBytes, floor, nextSeq, texts);
    const releasedBelow = floor.releasedBelow;
    // Each iteration reads the log again from its start.
    return { wal, records: { [Symbol.asyncIterator]: () => unreleased(log, releasedBelow, texts) } };
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

  /**
   * Queues one request body; `durable` resolves once it is on disk (rejects when the write
   * failed). With `texts` (the source the body was decoded with), its long texts move to the
   * segment in the turn the write is durable, and the body buffer is let go.
   */
  append(format: WalFormat, bytes: Buffer, signal: WalSignal = 'traces', texts?: TextSource): WalAppend {
    if (this.#closed || this.#log.failure !== undefined) return { ok: false, reason: 'unwritable' };
    if (this.#log.wouldOverflow(FRAME_HEADER_BYTES + bytes.length)) return { ok: false, reason: 'full' };
    if (this.#nextSeq > MAX_FRAME_SEQ) return { ok: false, reason: 'unwritable' };
    const seq = this.#nextSeq++;
    const durable = this.#log.append(encodeFrame(TYPE_BY_REQUEST[signal][format], seq, bytes), seq, true);
    if (texts !== undefined) {
      this.#moving.set(bytes, { texts, seq });
      const settled = (): void => void this.#moving.delete(bytes);
      durable.then(settled, settled);
    }
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

  /**
   * Segments holding requests at or above `seq` are kept even once released: retained steps
   * refer to long texts in them (`Infinity`: none). Read by retention at its next run.
   */
  keepReferencedFrom(seq: number): void {
    this.#floor.referencedBelow = seq;
  }

  /** Open read descriptors on segments (bounded by the segments on disk). */
  get textFiles(): number {
    return this.#texts.openFiles;
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
    this.#texts.close();
  }

  /** A batch went to `segment` at `offset`: the long texts of its bodies now live there. */
  #moveTexts(segment: Segment, offset: number, buffers: readonly Buffer[]): void {
    if (this.#moving.size === 0) return;
    let position = offset;
    for (const b of buffers) {
      const moving = this.#moving.get(b);
      if (moving !== undefined) moving.texts.moveTo(this.#texts.of(segment), position, moving.seq);
      position += b.length;
    }
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
async function* unreleased(log: SegmentedLog<Frame>, releasedBelow: number, texts: WalTextFiles): AsyncGenerator<WalRecord> {
  for await (const { value, segment, offset } of log.records()) {
    const request = REQUEST_BY_TYPE[value.type];
    if (request === undefined || value.seq < releasedBelow) continue;
    const seq = value.seq;
    // Copied out of the chunk, so a record the pipeline keeps does not pin a whole chunk.
    const moveTexts = (source: TextSource): void => source.moveTo(texts.of(segment), offset + FRAME_HEADER_BYTES, seq);
    yield { seq, ...request, bytes: Buffer.from(value.payload), moveTexts };
  }
}
