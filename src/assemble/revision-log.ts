import { encodeLines, jsonLinesCodec } from '../storage/line-codec.ts';
import type { StorageError } from '../errors.ts';
import { findLinesTailEnd } from '../storage/segment-files.ts';
import { numberedSegments } from '../storage/segment-naming.ts';
import { SegmentedLog } from '../storage/segmented-log.ts';
import type { RevisionMemoryConfig } from './revision-log-config.ts';
import { encodeRemembered, parseRemembered, type RememberedRevision } from './revision-memory.ts';

type Line = NonNullable<ReturnType<typeof parseRemembered>>;

/** Why the memory read back at start is not the whole memory: then a horizon says since when it is. */
export type MemoryCut =
  /** Retention deleted its oldest segments. */
  | 'retention'
  /** No memory, but the data directory held trajectories: deleted, or written by a build without it. */
  | 'lost'
  /** Its last line was torn by a crash and no write-ahead log holds that revision's spans. */
  | 'torn-tail';

/** What was read back at start. */
export interface MemoryReplay {
  revisions: number;
  /** The memory was cut: spans that started before `horizonMs` may belong to keys it lost. */
  cut: MemoryCut | undefined;
  horizonMs: number | undefined;
}

/**
 * The closed-revision memory's log: one JSON line per closed revision (`revision-memory.ts`),
 * numbered, in numbered segments `seg-<first line number, 16 digits>.jsonl`, on the storage
 * layer (batched durable appends, torn-tail recovery, retention by bytes and age).
 *
 * @example
 * const log = await RevisionLog.open(join(dataDir, 'revisions'), config);
 * const replay = await log.replay((r) => assembler.restore([r]), { priorData, walCoversTail, nowMs: Date.now() });
 * assembler.restore([], replay.horizonMs);
 */
export class RevisionLog {
  readonly #log: SegmentedLog<Line>;
  #nextNo = 0;

  private constructor(log: SegmentedLog<Line>) {
    this.#log = log;
  }

  static async open(dir: string, config: RevisionMemoryConfig): Promise<RevisionLog> {
    const log = await SegmentedLog.open<Line>(dir, {
      naming: numberedSegments('seg-', '.jsonl'),
      codec: jsonLinesCodec('revision memory', parseRemembered),
      findTailEnd: findLinesTailEnd,
      segmentBytes: config.segmentBytes,
      retention: { maxBytes: config.maxBytes, maxAgeHours: config.maxAgeHours },
      onWriteFailure: 'retry',
    });
    return new RevisionLog(log);
  }

  /**
   * Streams every remembered revision, oldest first, to `restore`, and says whether (and up to
   * when) the memory was cut. Call once, before appending. `priorData`: the data directory
   * already held trajectories; `walCoversTail`: a write-ahead log still holds the spans of a
   * revision whose line a crash tore (its line is written before the log releases them).
   */
  async replay(restore: (r: RememberedRevision) => void, context: { priorData: boolean; walCoversTail: boolean; nowMs: number }): Promise<MemoryReplay> {
    const segments = this.#log.segments;
    const first = segments[0];
    let revisions = 0;
    /** The newest close in the first segment: a cut by retention lost nothing closed after it. */
    let firstSegmentNewestMs = -Infinity;
    for await (const { value, segment } of this.#log.records()) {
      revisions++;
      this.#nextNo = value.n + 1;
      if (segment === first && value.revision.closedAtMs > firstSegmentNewestMs) firstSegmentNewestMs = value.revision.closedAtMs;
      restore(value.revision);
    }
    const last = segments.at(-1);
    if (revisions === 0 && last !== undefined) this.#nextNo = last.firstNo;
    await this.#log.ensureActive(this.#nextNo);
    if (this.#log.tornRecords > 0 && !context.walCoversTail) return { revisions, cut: 'torn-tail', horizonMs: context.nowMs };
    // A memory with no line yet is whole (every revision so far still awaits its output); one with no file is not.
    if (first === undefined && context.priorData) return { revisions, cut: 'lost', horizonMs: context.nowMs };
    if (first !== undefined && first.firstNo > 0) {
      return { revisions, cut: 'retention', horizonMs: revisions === 0 ? context.nowMs : firstSegmentNewestMs };
    }
    return { revisions, cut: undefined, horizonMs: undefined };
  }

  /** Appends one line per revision; durable once {@link flushed} resolves. */
  append(revisions: readonly RememberedRevision[]): void {
    for (const r of revisions) {
      const n = this.#nextNo++;
      this.#log.append([encodeLines([encodeRemembered(r, n)])], n);
    }
  }

  get pending(): { records: number; bytes: number } {
    return { records: this.#log.pendingRecords, bytes: this.#log.pendingBytes };
  }

  get failure(): StorageError | undefined {
    return this.#log.failure;
  }

  get fileBytes(): number {
    return this.#log.fileBytes;
  }

  flushed(): Promise<void> {
    return this.#log.flushed();
  }

  close(): Promise<void> {
    return this.#log.close();
  }
}
