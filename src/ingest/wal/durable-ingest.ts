import { DecodeError } from '../../errors.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import { decodeLogsBody, decodeTracesBody } from '../otlp/decode-body.ts';
import type { TextSource } from '../long-text.ts';
import type { LogsAccepted, PipelineInput, PositionedInput, Refused, RawRequest, RequestDemand } from '../pipeline-input.ts';
import { demandOf } from '../request-demand.ts';
import type { DecodedRequest } from '../span.ts';
import type { SpanWal, WalRecord, WalSignal } from './span-wal.ts';
import { REFUSAL } from '../refusal.ts';

/** The source partition the write-ahead log's sequence numbers are tracked under in the pipeline. */
export const WAL_PARTITION = -1;

/** How often finished requests are released from the log. */
const RELEASE_INTERVAL_MS = 500;

/** What DurableIngest feeds: an input that tracks positions and takes logs (`Pipeline`). */
type LoggedInput = PositionedInput &
  Required<Pick<PipelineInput, 'acceptLogs'>> & {
    admitRequest?(request: DecodedRequest, reserved?: RequestDemand): string | undefined;
    /** The lowest position of a partition whose records closed trajectories' retained steps still refer to. */
    referencedFrom?(partition: number): number | undefined;
  };

/**
 * The OTLP receivers' target when the write-ahead log is on: a request is appended to the log,
 * acknowledged once it is durable, and only then handed to the pipeline with its log sequence
 * number as its source position. The pipeline's source-position bookkeeping (built for the
 * Kafka source) says which requests are finished; those are released from the log on a timer.
 * A refused append never reaches the pipeline, so a 503 means the request was not taken.
 *
 * @example
 * const { wal, records } = await SpanWal.open(dir, config.receiver.wal);
 * const ingest = new DurableIngest(pipeline, wal);
 * await ingest.replay(records); // before listening
 * createHttpReceiver(config.receiver, ingest);
 */
export class DurableIngest implements PipelineInput {
  readonly wal: SpanWal;
  readonly #pipeline: LoggedInput;
  readonly #timer: NodeJS.Timeout;
  /** What requests admitted and being logged will add to the pipeline (charged against its bounds meanwhile). */
  readonly #reserved: RequestDemand = { trajectories: 0, bytes: 0 };

  constructor(pipeline: LoggedInput, wal: SpanWal, releaseIntervalMs = RELEASE_INTERVAL_MS) {
    this.#pipeline = pipeline;
    this.wal = wal;
    this.#timer = setInterval(() => void this.release(), releaseIntervalMs);
    this.#timer.unref();
  }

  admission(): string | undefined {
    return this.wal.refusal() ?? this.#pipeline.admission();
  }

  /** `admission()`, then the pipeline's bounds for this request beside the requests still being logged. */
  admitRequest(request: DecodedRequest): string | undefined {
    return this.admission() ?? this.#pipeline.admitRequest?.(request, this.#reserved);
  }

  /** A request without its body cannot be logged: it goes to the pipeline as it is (not durable). */
  accept(request: DecodedRequest): void {
    this.#pipeline.accept(request);
  }

  /** Refused (before logging) when the request does not fit the bounds beside those being logged; else reserved until accepted. */
  async acceptDurably(request: DecodedRequest, raw: RawRequest): Promise<Refused | undefined> {
    const refusal = this.admitRequest(request);
    if (refusal !== undefined) return { refused: refusal };
    const demand = demandOf(request);
    this.#reserved.trajectories += demand.trajectories;
    this.#reserved.bytes += demand.bytes;
    let seq: number | Refused;
    try {
      seq = await this.#append(raw, 'traces', request.texts);
    } finally {
      this.#reserved.trajectories -= demand.trajectories;
      this.#reserved.bytes -= demand.bytes;
    }
    if (typeof seq !== 'number') return seq;
    this.#pipeline.accept(request, { partition: WAL_PARTITION, offset: seq });
    return undefined;
  }

  acceptLogs(request: DecodedLogsRequest): LogsAccepted {
    return this.#pipeline.acceptLogs(request);
  }

  /** Logs requests go through the same log, under the same sequence, as traces. */
  async acceptLogsDurably(request: DecodedLogsRequest, raw: RawRequest): Promise<LogsAccepted | Refused> {
    const seq = await this.#append(raw, 'logs');
    if (typeof seq !== 'number') return seq;
    return this.#pipeline.acceptLogs(request, { partition: WAL_PARTITION, offset: seq });
  }

  /**
   * Appends and waits until durable: the sequence number, or the refusal (`wal-full`, or
   * `wal-unwritable` when the write failed: the log keeps its failure, `wal.refusal()`
   * answers `unwritable` until it recovers, so admission refuses the next requests too).
   */
  async #append(raw: RawRequest, signal: WalSignal, texts?: TextSource): Promise<number | Refused> {
    const appended = this.wal.append(raw.format, raw.bytes, signal, texts);
    if (!appended.ok) return { refused: `wal-${appended.reason}` };
    try {
      await appended.durable;
    } catch {
      return { refused: REFUSAL.walUnwritable };
    }
    return appended.seq;
  }

  /**
   * Feeds the requests still in the log at start-up through the pipeline as they are read
   * (the log streams them a chunk at a time, so memory never holds the whole log), decoded as
   * when they arrived and under the same sequence numbers. Resolves with how many were
   * replayed and how many could not be decoded (skipped; they were decodable when accepted,
   * so that means a bug).
   */
  async replay(records: AsyncIterable<WalRecord> | Iterable<WalRecord>): Promise<{ replayed: number; undecodable: number }> {
    let undecodable = 0;
    let read = 0;
    for await (const r of records) {
      read += 1;
      const position = { partition: WAL_PARTITION, offset: r.seq };
      if (r.signal === 'logs') {
        const decoded = decodeLogsBody(r.format, r.bytes);
        if (decoded instanceof DecodeError) undecodable += 1;
        else this.#pipeline.acceptLogs(decoded, position);
        continue;
      }
      // Long texts refer to the log, as they did before the restart.
      const decoded = decodeTracesBody(r.format, r.bytes, true);
      if (decoded instanceof DecodeError) {
        undecodable += 1;
        continue;
      }
      if (decoded.texts !== undefined) r.moveTexts(decoded.texts);
      this.#pipeline.accept(decoded, position);
    }
    return { replayed: read - undecodable, undecodable };
  }

  /** Releases every request the pipeline has finished (its trajectories closed, their output durable). */
  release(): Promise<void> {
    this.wal.keepReferencedFrom(this.#pipeline.referencedFrom?.(WAL_PARTITION) ?? Number.POSITIVE_INFINITY);
    const below = this.#pipeline.committable().get(WAL_PARTITION);
    return below === undefined ? Promise.resolve() : this.wal.release(below);
  }

  /** After `pipeline.drain` and `settled()`: a last release, then the log is closed. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.release();
    await this.wal.close();
  }
}
