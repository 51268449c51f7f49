import { foldFloor, type PositionFloor, type SourcePosition } from '../ingest/pipeline-input.ts';

/** How long to wait before asking the outputs again when they failed to make findings durable. */
export const SETTLE_RETRY_MS = 1_000;

export interface PositionLedgerOptions {
  /** Resolves once everything written to the outputs so far is durable; rejects while one fails. */
  flushed: () => Promise<void>;
  /** Folds the positions still held by open trajectories (the assembler's) into a floor. */
  heldOpen?: (floor: PositionFloor) => void;
  /** The wait before asking `flushed` again after it failed. Default {@link SETTLE_RETRY_MS}. */
  retryMs?: number;
}

/**
 * Source-position bookkeeping: which records of a replayable source (a Kafka partition, the
 * span WAL) are finished. A closed trajectory's positions are held while its judged part is
 * out (or its forward is unacknowledged), then until what was written for it is durable; open
 * trajectories hold theirs in the assembler (`heldOpen`). {@link committable} is, per
 * partition, the offset below which every record is finished: what a source may commit.
 *
 * @example
 * const ledger = new PositionLedger({ flushed: () => outputs.flushed() });
 * ledger.accepted({ partition: 0, offset: 7 });
 * ledger.holdUntilDurable(new Map([[0, 7]]));
 * ledger.committable(); // Map { 0 => 7 } until flushed() resolved, then Map { 0 => 8 }
 */
export class PositionLedger {
  readonly #flushed: () => Promise<void>;
  readonly #heldOpen: (floor: PositionFloor) => void;
  readonly #retryMs: number;
  /** partition → the offset after the highest record accepted from it. */
  readonly #nextOffset = new Map<number, number>();
  /** Positions of closed trajectories whose output is not yet known durable, by close sequence. */
  readonly #settling = new Map<number, PositionFloor>();
  /** Positions of closed trajectories whose judged part (or forward) is not settled yet. */
  readonly #judging = new Set<PositionFloor>();
  /** Judged parts (and forwards) being waited for: {@link settled} and {@link judged} wait for them. */
  readonly #awaitingJudge = new Set<Promise<void>>();
  #settleSeq = 0;
  #settleLoop: Promise<void> | undefined;

  constructor(options: PositionLedgerOptions) {
    this.#flushed = options.flushed;
    this.#heldOpen = options.heldOpen ?? (() => {});
    this.#retryMs = options.retryMs ?? SETTLE_RETRY_MS;
  }

  /** A record was accepted from `position` (a request without one changes nothing). */
  accepted(position: SourcePosition | undefined): void {
    if (position !== undefined && (this.#nextOffset.get(position.partition) ?? -1) <= position.offset) {
      this.#nextOffset.set(position.partition, position.offset + 1);
    }
  }

  /**
   * Per partition seen, the offset a source may commit: the lowest offset still held by an
   * open trajectory or by a closed one whose output is not yet durable, else the offset after
   * the highest record accepted. Every record below it is finished.
   */
  committable(): Map<number, number> {
    const floor: PositionFloor = new Map();
    this.#heldOpen(floor);
    for (const held of this.#settling.values()) foldFloor(floor, held);
    for (const held of this.#judging) foldFloor(floor, held);
    const out = new Map<number, number>();
    for (const [partition, next] of this.#nextOffset) {
      const held = floor.get(partition);
      out.set(partition, held === undefined || held > next ? next : held);
    }
    return out;
  }

  /** Resolves once every closed trajectory's output known so far is durable (committable moved past it). */
  async settled(): Promise<void> {
    while (this.#settleLoop !== undefined || this.#awaitingJudge.size > 0) {
      await this.judged();
      if (this.#settleLoop !== undefined) await this.#settleLoop;
    }
  }

  /** Resolves once no judged part (or forward) is awaited, also those that began meanwhile. */
  async judged(): Promise<void> {
    while (this.#awaitingJudge.size > 0) await Promise.all([...this.#awaitingJudge]);
  }

  /**
   * Forgets what `partitions` fed: the source lost them (a rebalance) or stops, and whoever
   * reads them next replays from the committed offset. (The open trajectories they fed are the
   * assembler's to forget.)
   */
  dropPartitions(partitions: ReadonlySet<number>): void {
    for (const p of partitions) this.#nextOffset.delete(p);
    for (const [seq, held] of this.#settling) {
      for (const p of partitions) held.delete(p);
      if (held.size === 0) this.#settling.delete(seq);
    }
    for (const held of this.#judging) for (const p of partitions) held.delete(p);
  }

  /** Holds `positions` until everything written so far is durable. */
  holdUntilDurable(positions: PositionFloor | undefined): void {
    if (positions === undefined) return;
    this.#settling.set(++this.#settleSeq, positions);
    this.#settleLoop ??= this.#settle();
  }

  /** Holds `positions` until `acknowledged` resolves (a forward, which never rejects), then releases them. */
  holdUntilAcknowledged(positions: PositionFloor | undefined, acknowledged: Promise<void>): void {
    const held: PositionFloor = positions ?? new Map();
    this.#judging.add(held);
    const waiting = acknowledged.finally(() => {
      this.#judging.delete(held);
      this.#awaitingJudge.delete(waiting);
    });
    this.#awaitingJudge.add(waiting);
  }

  /**
   * Holds `positions` while `part` is pending (a judged part, never rejected); once it resolves,
   * `write` writes what depends on it, and the positions then wait for that to be durable.
   */
  holdWhileJudged<T>(positions: PositionFloor | undefined, part: Promise<T>, write: (part: T) => void): void {
    const held: PositionFloor = positions ?? new Map();
    this.#judging.add(held);
    const waiting = part.then((value) => {
      try {
        write(value);
      } finally {
        // Moved, not dropped: from here they wait for what was written to become durable.
        this.#judging.delete(held);
        this.#awaitingJudge.delete(waiting);
        if (positions !== undefined && held.size > 0) this.holdUntilDurable(held);
      }
    });
    this.#awaitingJudge.add(waiting);
  }

  async #settle(): Promise<void> {
    while (this.#settling.size > 0) {
      const upTo = this.#settleSeq;
      try {
        await this.#flushed();
      } catch {
        // A failing output is reported through admission(); the positions stay held meanwhile.
        await new Promise((r) => setTimeout(r, this.#retryMs));
        continue;
      }
      for (const seq of this.#settling.keys()) {
        if (seq > upTo) break;
        this.#settling.delete(seq);
      }
    }
    this.#settleLoop = undefined;
  }
}
