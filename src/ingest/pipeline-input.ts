import type { DecodedLogsRequest } from './log-record.ts';
import type { DecodedRequest } from './span.ts';

/**
 * Where a request came from in a replayable source: a Kafka record, or a write-ahead log entry
 * (partition `WAL_PARTITION`). `offset` is its position in `partition`; the pipeline tracks the
 * lowest one still unfinished, so the source commits (or releases) only below it.
 */
export interface SourcePosition {
  partition: number;
  offset: number;
}

/** Per partition, the lowest offset of a record whose spans are held: partition → offset. */
export type PositionFloor = Map<number, number>;

/** `into[p] = min(into[p], from[p])` for every partition of `from`. */
export function foldFloor(into: PositionFloor, from: ReadonlyMap<number, number>): void {
  for (const [partition, offset] of from) {
    const held = into.get(partition);
    if (held === undefined || offset < held) into.set(partition, offset);
  }
}

export type { AdmissionRefusal } from './refusal.ts';

/** What a request would add to the assembler's bounds (`assemble/request-admission.ts`). */
export interface RequestDemand {
  /** An upper bound on the trajectories it opens: the distinct traces it names. */
  trajectories: number;
  /** The encoded bytes of its spans. */
  bytes: number;
}

/** A request body as received (after gzip), for an input that logs it before acknowledging. */
export interface RawRequest {
  format: 'protobuf' | 'json';
  bytes: Buffer;
}

/** What the pipeline could not use of a logs request, for its partial success. */
export interface LogsAccepted {
  /** GenAI content events without a trace and span id: nothing to join them to. */
  unattachable: number;
}

/**
 * A durable accept that did not happen: nothing was taken, and `refused` names why
 * (`wal-full`, `wal-unwritable`, a memory bound). Answered like an `admission()` refusal.
 */
export interface Refused {
  refused: string;
}

/** What `dropPartitions` forgot: open trajectories, and those of them fed from two partitions. */
export interface DroppedPartitions {
  dropped: number;
  mixed: number;
}

/**
 * What every source hands decoded requests to and learns backpressure from (the Collector's
 * `consumer.Traces`): the pipeline itself, or `DurableIngest`, the write-ahead log in front of
 * it. A source asks `admission()` before taking work and refuses (503 / RESOURCE_EXHAUSTED /
 * a paused consumer) while it names a reason; `accept` never throws for bad spans, it counts
 * them. The optional members are capabilities: an input without `acceptLogs` takes no logs
 * (`/v1/logs` answers 404); the durable pair is used instead of the plain pair when present;
 * the positions triple is what a source that commits needs ({@link PositionedInput}).
 */
export interface PipelineInput {
  /** A reason to refuse new work now (answered 503 + Retry-After; one of `REFUSAL`, `refusal.ts`), or undefined. */
  admission(): string | undefined;
  /**
   * Asked after decoding, just before `accept`/`acceptDurably`: `admission()`, then whether
   * this request's spans fit the memory bounds with what is already held (the bounds are
   * enforced per span at accept time, not only before the body is read). A reason is answered
   * like an `admission()` refusal. Absent: only `admission()` is asked.
   */
  admitRequest?(request: DecodedRequest): string | undefined;
  /** Takes a decoded request; every span in it is kept or counted as rejected. */
  accept(request: DecodedRequest, position?: SourcePosition): void;
  /** Takes a decoded OTLP logs request. */
  acceptLogs?(request: DecodedLogsRequest, position?: SourcePosition): LogsAccepted;
  /**
   * Used instead of `accept` when present: the request is acknowledged only once this
   * resolves with undefined (durable). A {@link Refused} is answered 503 / UNAVAILABLE +
   * Retry-After, and the request was not taken.
   */
  acceptDurably?(request: DecodedRequest, raw: RawRequest): Promise<Refused | undefined>;
  /** Like `acceptDurably`, for logs requests: used instead of `acceptLogs` when present. */
  acceptLogsDurably?(request: DecodedLogsRequest, raw: RawRequest): Promise<LogsAccepted | Refused>;
  /** Per partition, the offset below which every request is finished (safe to commit or release). */
  committable?(): PositionFloor;
  /** Resolves once the output of every trajectory closed so far is durable. */
  settled?(): Promise<void>;
  /** Forgets, without emitting, what these partitions fed (they will be replayed). */
  dropPartitions?(partitions: Iterable<number>): DroppedPartitions;
}

/**
 * An input that tracks source positions, as a source that commits needs it (the Kafka source,
 * `DurableIngest`): `Pipeline` is one.
 */
export type PositionedInput = PipelineInput & Required<Pick<PipelineInput, 'committable' | 'settled' | 'dropPartitions'>>;
