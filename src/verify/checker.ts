import type { FindingsSource, RememberedLine, StreamRecord, TrajectoryLine, WalRequest } from './records.ts';
import type { InvariantId, RecordLocation, ViolationList } from './violation.ts';

/**
 * One invariant, as a fold over the records of a data directory: each reader hands it the
 * records it takes, in the order verify reads them (the write-ahead log, the revision memory,
 * the trajectories, then each findings stream), and `finish` reports what only the whole read
 * can tell. Pure: no I/O, no clock; state is kept per key (or per span of the log), never per
 * record read.
 */
export interface Checker {
  readonly id: InvariantId;
  readonly violations: ViolationList;
  /** Records this invariant was checked on. */
  readonly checked: number;
  /** What the count does not say (e.g. "no write-ahead log": nothing to check). */
  note?(): string | undefined;
  walRequest?(request: WalRequest): void;
  remembered?(line: RememberedLine, at: RecordLocation): void;
  trajectory?(line: TrajectoryLine, at: RecordLocation): void;
  /** A finding or manifest of `source`. */
  record?(record: StreamRecord, source: FindingsSource): void;
  /** A record an external view refused, kept whole in `audience-refused.jsonl`. */
  refused?(line: unknown, at: RecordLocation): void;
  finish?(): void;
}
