import { StorageError } from '../../errors.ts';
import type { Finding } from '../../findings/schema.ts';
import type { LevelLog } from '../../telemetry/logger.ts';
import type { FindingSink, FindingStream } from '../finding-sink.ts';
import type { SinkRecord } from '../record.ts';
import type { DeliveryEngine } from './engine.ts';
import { withTimeout } from './with-timeout.ts';

/**
 * Records held in memory beyond which the overflow says so (logged once, counted in
 * `pastBound`): backpressure should have stopped input long before. They are still held —
 * a finding sink never drops — so the count is the alarm, not a refusal.
 */
export const MAX_OVERFLOW_RECORDS = 100_000;

/** How long a drain waits for room before it tries the outbox again (a failing disk gives no signal when it recovers). */
const DRAIN_POLL_MS = 250;

/** The words a sink's overflow speaks with: its backpressure reasons, and how its logs and errors name things. */
export interface OverflowWording {
  /** `backpressure()` answers: after close, while the outbox disk fails, while it (or the overflow) is full. */
  closed: string;
  unwritable: string;
  full: string;
  /** `kafka sink`; a record is a `finding`; a delivered one is `sent`. */
  sink: string;
  record: string;
  sent: string;
  /** Logged by close when something was left: `closed with findings undelivered`. */
  closedUndelivered: string;
}

export interface OutboxFindingSinkOptions {
  log: LevelLog;
  wording: OverflowWording;
  /** How long `close()` keeps delivering; what is left stays in the outbox for the next run. */
  closeTimeoutMs: number;
  maxOverflowRecords?: number;
}

/**
 * A {@link FindingSink} over the {@link DeliveryEngine}; a sink supplies `write`, turning
 * findings into records for {@link offer}. `write` cannot refuse, so records that meet a full
 * outbox wait in an overflow in memory, in order, and move into the outbox as delivery frees
 * room; meanwhile `backpressure()` reports the full outbox so the receivers refuse new input,
 * which bounds the overflow to the records already in flight. The overflow is counted in
 * records and bytes, against {@link MAX_OVERFLOW_RECORDS}.
 */
export abstract class OutboxFindingSink implements FindingSink {
  abstract readonly name: string;
  protected readonly engine: DeliveryEngine<SinkRecord>;
  readonly #log: LevelLog;
  readonly #wording: OverflowWording;
  readonly #closeTimeoutMs: number;
  readonly #maxRecords: number;
  #queue: SinkRecord[] = [];
  #bytes = 0;
  #draining: Promise<void> | undefined;
  #closed = false;
  #refusedTooLarge = 0;
  #pastBound = 0;
  /** Records handed over after close: never sent, so every later `flushed()` rejects. */
  #refusedAfterClose = 0;

  protected constructor(engine: DeliveryEngine<SinkRecord>, options: OutboxFindingSinkOptions) {
    this.engine = engine;
    this.#log = options.log;
    this.#wording = options.wording;
    this.#closeTimeoutMs = options.closeTimeoutMs;
    this.#maxRecords = options.maxOverflowRecords ?? MAX_OVERFLOW_RECORDS;
  }

  abstract write(findings: readonly Finding[], stream: FindingStream): void;

  /** Records waiting for room in the outbox (not yet durable). */
  get overflowRecords(): number {
    return this.#queue.length;
  }

  /** Records larger than the outbox's `maxRecordBytes`, which the receiving end would not take: logged and counted. */
  get refusedTooLarge(): number {
    return this.#refusedTooLarge;
  }

  /** Records taken while the overflow already held `maxRecords`. */
  get pastBound(): number {
    return this.#pastBound;
  }

  /** Into the outbox, or, when it refuses or others already wait, into the overflow after them. */
  protected offer(records: SinkRecord[]): void {
    if (this.#closed) {
      this.#refusedAfterClose += records.length;
      return;
    }
    if (this.#queue.length === 0 && this.engine.write(records).ok) return;
    // Per record from here, so a too-large one cannot hold back the rest.
    for (const record of records) {
      if (this.#queue.length >= this.#maxRecords && this.#pastBound++ === 0) {
        this.#log('error', `${this.#wording.sink}: more than ${this.#maxRecords} records wait for room in the outbox; input ignores backpressure`, {});
      }
      this.#queue.push(record);
      this.#bytes += Buffer.byteLength(record.value);
    }
    this.#draining ??= this.#drain();
  }

  backpressure(): string | undefined {
    if (this.#closed) return this.#wording.closed;
    const refusal = this.engine.refusal();
    if (refusal === 'unwritable') return this.#wording.unwritable;
    if (refusal === 'full' || this.#queue.length > 0) return this.#wording.full;
    return undefined;
  }

  /** Not yet acknowledged: in the outbox, or waiting here for room in it. */
  backlog(): { records: number; bytes: number } {
    const waiting = this.engine.waiting();
    return { records: waiting.records + this.#queue.length, bytes: waiting.bytes + this.#bytes };
  }

  /** Resolves once everything taken so far is acknowledged; rejects once anything was offered after close (never sent). */
  async flushed(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
    await this.engine.flushed();
    if (this.#refusedAfterClose > 0) {
      throw new StorageError(`${this.#wording.sink} closed: ${this.#refusedAfterClose} record(s) written after close were not ${this.#wording.sent}`);
    }
  }

  /** Moves the overflow into the outbox and delivers, for at most `closeTimeoutMs` in all; what is left stays in the outbox. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const timeoutMs = this.#closeTimeoutMs;
    const started = performance.now();
    if (this.#draining !== undefined) await withTimeout(this.#draining, timeoutMs);
    const result = await this.engine.close(Math.max(0, timeoutMs - (performance.now() - started)));
    const lost = this.#queue.length;
    if (lost > 0 || !result.flushed) {
      this.#log(lost > 0 ? 'error' : 'warn', this.#wording.closedUndelivered, { leftInOutbox: result.pendingRecords, neverWritten: lost });
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const record = this.#queue[0]!;
      const result = this.engine.write([record]);
      if (result.ok || result.reason === 'too-large') {
        this.#queue.shift();
        this.#bytes -= Buffer.byteLength(record.value);
        if (!result.ok) {
          this.#refusedTooLarge += 1;
          this.#log('error', `${this.#wording.record} larger than maxRecordBytes not ${this.#wording.sent}`, { finding_id: result.id, bytes: result.bytes });
        }
      } else if (result.reason === 'closed') {
        break;
      } else if (result.reason === 'full') {
        await withTimeout(this.engine.whenWritable(), DRAIN_POLL_MS);
      } else {
        // A write failure the outbox retries: try again shortly.
        await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      }
    }
    this.#draining = undefined;
  }
}
