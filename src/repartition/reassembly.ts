import { createHash } from 'node:crypto';
import type { PositionFloor, SourcePosition } from '../ingest/pipeline-input.ts';
import type { RepartitionFragment } from './record.ts';

export interface ReassemblyOptions {
  /** Bytes of fragments held for traces not yet whole; a fragment that would pass it abandons its trace (`over-bound`). */
  maxBytes: number;
  /** How long after its first fragment a trace may stay unfinished before it is abandoned (`deadline`). */
  deadlineMs: number;
  /** Traces finished (whole or abandoned) remembered, so their redelivered fragments are recognized; default 4,096. */
  maxFinished?: number;
}

/** Why a trace's fragments could not be put together; each one marks its session `repartition-fragment-lost`. */
export type FragmentLoss = 'deadline' | 'over-bound' | 'digest-mismatch';

/** A trace that cannot be put together: its session learns of it at `position` (its first fragment's). */
export interface LostTrace {
  sessionId: string;
  traceId: string;
  loss: FragmentLoss;
  position: SourcePosition | undefined;
  /** Fragments of it received, and of how many. */
  received: number;
  count: number;
}

/** What one fragment did. */
export type FragmentOutcome =
  | { kind: 'held' }
  /** Already held or already finished (redelivered after a rebalance, or forwarded again): nothing changes. */
  | { kind: 'duplicate' }
  | { kind: 'whole'; record: Buffer; position: SourcePosition | undefined }
  | { kind: 'lost'; lost: LostTrace };

export interface ReassemblyStats {
  /** Bytes held now for traces not yet whole, and those traces. */
  heldBytes: number;
  partialTraces: number;
  whole: number;
  duplicates: number;
  /** Unfinished copies of a trace let go because another copy of it arrived whole (a stage-1 member re-sent it). */
  superseded: number;
  lost: Record<FragmentLoss, number>;
}

interface Partial {
  sessionId: string;
  traceId: string;
  digest: string;
  bytes: number;
  chunks: (Buffer | undefined)[];
  received: number;
  heldBytes: number;
  startedMs: number;
  /** The lowest position of a fragment of it, per partition: held until it is whole or lost. */
  floor: PositionFloor;
  first: SourcePosition | undefined;
}

const DEFAULT_MAX_FINISHED = 4_096;

/**
 * Stage 2's reassembly of fragmented trace records (docs/scaling-out.md §4), a pure state
 * machine (time is passed in). Fragments of one trace are told apart from another rendition of
 * it by the whole record's digest. Bounded: at most `maxBytes` held, and a trace not whole
 * `deadlineMs` after its first fragment is given up; either way, and on a digest mismatch, the
 * trace comes back as {@link LostTrace}, never silently dropped. A duplicate fragment (the same
 * index again, or one of a trace finished a moment ago) changes nothing. {@link floor} holds the
 * first fragment's position of every unfinished trace, so no offset past it is committed.
 */
export class Reassembly {
  readonly #options: Required<ReassemblyOptions>;
  readonly #partial = new Map<string, Partial>();
  /** Finished traces (insertion order, bounded), with the partition they came from. */
  readonly #finished = new Map<string, number | undefined>();
  #heldBytes = 0;
  readonly #stats = { whole: 0, duplicates: 0, superseded: 0, lost: { deadline: 0, 'over-bound': 0, 'digest-mismatch': 0 } };

  constructor(options: ReassemblyOptions) {
    this.#options = { maxFinished: DEFAULT_MAX_FINISHED, ...options };
  }

  add(f: RepartitionFragment, position: SourcePosition | undefined, nowMs: number): FragmentOutcome {
    const key = `${f.sessionId}\u0000${f.traceId}\u0000${f.digest}\u0000${f.bytes}\u0000${f.count}`;
    if (this.#finished.has(key)) return this.#duplicate();
    let p = this.#partial.get(key);
    if (p === undefined) {
      p = {
        sessionId: f.sessionId,
        traceId: f.traceId,
        digest: f.digest,
        bytes: f.bytes,
        chunks: new Array<Buffer | undefined>(f.count),
        received: 0,
        heldBytes: 0,
        startedMs: nowMs,
        floor: new Map(),
        first: undefined,
      };
      this.#partial.set(key, p);
    }
    if (p.chunks[f.index] !== undefined) return this.#duplicate();
    if (position !== undefined) {
      const held = p.floor.get(position.partition);
      if (held === undefined || position.offset < held) p.floor.set(position.partition, position.offset);
      if (p.first === undefined || (position.partition === p.first.partition && position.offset < p.first.offset)) p.first = position;
    }
    if (this.#heldBytes + f.chunk.length > this.#options.maxBytes) return { kind: 'lost', lost: this.#lose(key, p, 'over-bound') };
    // A copy: the fetched batch the slice points into is not kept alive by it.
    p.chunks[f.index] = Buffer.from(f.chunk);
    p.received++;
    p.heldBytes += f.chunk.length;
    this.#heldBytes += f.chunk.length;
    if (p.received < p.chunks.length) return { kind: 'held' };
    const record = Buffer.concat(p.chunks as Buffer[]);
    if (record.length !== p.bytes || createHash('sha256').update(record).digest('hex') !== p.digest) {
      return { kind: 'lost', lost: this.#lose(key, p, 'digest-mismatch') };
    }
    this.#finish(key, p);
    this.#stats.whole++;
    return { kind: 'whole', record, position: p.first };
  }

  /** Gives up every trace whose first fragment came `deadlineMs` or more before `nowMs`. */
  expire(nowMs: number): LostTrace[] {
    const out: LostTrace[] = [];
    for (const [key, p] of this.#partial) {
      if (nowMs - p.startedMs >= this.#options.deadlineMs) out.push(this.#lose(key, p, 'deadline'));
    }
    return out;
  }

  /**
   * Lets go of every unfinished copy of `traceId` in `sessionId`: another copy of it arrived
   * whole after them on the same partition (a stage-1 member that crashed mid-forward assembled
   * the trace again from its source and sent it anew), so theirs is not lost, only replaced.
   * Returns how many were let go; counted in {@link stats} as `superseded`.
   */
  supersede(sessionId: string, traceId: string): number {
    let released = 0;
    for (const [key, p] of this.#partial) {
      if (p.sessionId !== sessionId || p.traceId !== traceId) continue;
      this.#finish(key, p);
      released++;
    }
    this.#stats.superseded += released;
    return released;
  }

  /** Moves every unfinished trace's deadline `ms` later (time in which its fragments could not come). */
  postpone(ms: number): void {
    for (const p of this.#partial.values()) p.startedMs += ms;
  }

  /** Folds the first-fragment positions of unfinished traces into `into` (what may not be committed). */
  floor(into: PositionFloor): void {
    for (const p of this.#partial.values()) {
      for (const [partition, offset] of p.floor) {
        const held = into.get(partition);
        if (held === undefined || offset < held) into.set(partition, offset);
      }
    }
  }

  /**
   * Forgets what `partitions` fed, unfinished and finished alike: the source lost them (a
   * rebalance) or stops, and whoever reads them next replays from before the first fragment.
   */
  dropPartitions(partitions: ReadonlySet<number>): number {
    let dropped = 0;
    for (const [key, p] of this.#partial) {
      if (![...p.floor.keys()].some((partition) => partitions.has(partition))) continue;
      this.#release(key, p);
      dropped++;
    }
    for (const [key, partition] of this.#finished) if (partition === undefined || partitions.has(partition)) this.#finished.delete(key);
    return dropped;
  }

  stats(): ReassemblyStats {
    return {
      heldBytes: this.#heldBytes,
      partialTraces: this.#partial.size,
      whole: this.#stats.whole,
      duplicates: this.#stats.duplicates,
      superseded: this.#stats.superseded,
      lost: { ...this.#stats.lost },
    };
  }

  #duplicate(): FragmentOutcome {
    this.#stats.duplicates++;
    return { kind: 'duplicate' };
  }

  /** `p` is done with (whole or given up): its bytes and positions let go, its later fragments recognized. */
  #finish(key: string, p: Partial): void {
    this.#release(key, p);
    this.#finished.set(key, p.first?.partition);
    if (this.#finished.size > this.#options.maxFinished) this.#finished.delete(this.#finished.keys().next().value!);
  }

  #lose(key: string, p: Partial, loss: FragmentLoss): LostTrace {
    this.#finish(key, p);
    this.#stats.lost[loss]++;
    return { sessionId: p.sessionId, traceId: p.traceId, loss, position: p.first, received: p.received, count: p.chunks.length };
  }

  #release(key: string, p: Partial): void {
    this.#heldBytes -= p.heldBytes;
    this.#partial.delete(key);
  }
}
