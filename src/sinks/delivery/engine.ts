import { Backoff, type RandomSource } from '../../storage/backoff.ts';
import type { AppendResult, Outbox, OutboxRecord } from '../../storage/outbox.ts';
import type { LevelLog } from '../../telemetry/logger.ts';
import { describeError } from './describe-error.ts';
import type { DeliveryTransport } from './transport.ts';
import { withTimeout } from './with-timeout.ts';

/** The keys of a delivering sink's configuration the engine reads (`./config.ts` and the batch bounds). */
export interface DeliveryConfig {
  /** Records per request, and serialized bytes per request beyond its first record. */
  batchSize: number;
  maxBatchBytes: number;
  /** The backoff after a failed request or acknowledgement: full jitter, ceiling doubling from initial up to max. */
  retryInitialMs: number;
  retryMaxMs: number;
}

export interface DeliveryEngineOptions<R extends OutboxRecord> {
  outbox: Outbox<R>;
  transport: DeliveryTransport<R>;
  config: DeliveryConfig;
  /** The first failure and the recovery, never each retry. */
  log: LevelLog;
  /** How the logs name the delivery (`kafka delivery`) and its outbox (`kafka outbox`). */
  names: { delivery: string; outbox: string };
  /** The backoff's random source (tests make it deterministic). */
  random?: RandomSource;
}

export interface DeliveryStats {
  /** Records acknowledged by the receiving end since open (a re-send after a lost ack counts again). */
  delivered: number;
  batchesDelivered: number;
  /** Failed requests (each is retried). */
  sendErrors: number;
  /** Failed attempts to record acknowledgements in the outbox (retried; the records are not re-sent). */
  ackErrors: number;
  /** True from a failed request until the next success. */
  failing: boolean;
  lastError: string | undefined;
  refusedFull: number;
  refusedTooLarge: number;
  tornLinesIgnored: number;
}

export interface CloseResult {
  /** True when everything written had been acknowledged when the engine closed. */
  flushed: boolean;
  /** Records left in the outbox; the next engine over the same directory delivers them. */
  pendingRecords: number;
}

/** How long close waits for the loop, the transport and the acknowledgement log each. */
const STOP_TIMEOUT_MS = 2_000;

/**
 * The one delivery engine under every outbox sink: records go into a durable {@link Outbox}
 * and one loop sends them through the transport in sequence order, one request at a time, many
 * records per request. A record leaves the outbox only after the receiving end acknowledged
 * it, so delivery is at-least-once across outages and restarts. A failed request is retried
 * forever on the house {@link Backoff} (full jitter); the first failure and the recovery are
 * logged. The outbox is bounded: when full, `write` refuses and nothing is dropped.
 *
 * Latency: a record is sent while its outbox write is still being fsync'd (the two overlap),
 * and the acknowledgement is recorded in the outbox in the background while the next request
 * is already out; `flushed()` resolves on the receiving end's acknowledgement.
 */
export class DeliveryEngine<R extends OutboxRecord> {
  readonly #outbox: Outbox<R>;
  readonly #transport: DeliveryTransport<R>;
  readonly #config: DeliveryConfig;
  readonly #log: LevelLog;
  readonly #names: { delivery: string; outbox: string };
  readonly #random: RandomSource | undefined;
  #closing = false;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  /**
   * Every record appended up to this sequence number has been acknowledged (this run) or was
   * acknowledged before (no longer in the outbox). Sends go in sequence order, one request at a
   * time, so this is a single watermark.
   */
  #deliveredThrough = -1;
  /** Acknowledged by the receiving end, not yet recorded in the outbox (recorded together, in the background). */
  #unrecorded: number[] = [];
  #recording: Promise<void> | undefined;
  /** Resolves the loop's wait (new records, or stop). */
  #wake: (() => void) | undefined;
  /** Woken after every acknowledged batch and at close: flushed(), whenWritable(). */
  #ackListeners = new Set<() => void>();
  #stats = { delivered: 0, batchesDelivered: 0, sendErrors: 0, ackErrors: 0, failing: false, lastError: undefined as string | undefined };

  /** Starts delivering at once: what an earlier run left in the outbox goes first. */
  constructor(options: DeliveryEngineOptions<R>) {
    this.#outbox = options.outbox;
    this.#transport = options.transport;
    this.#config = options.config;
    this.#log = options.log;
    this.#names = options.names;
    this.#random = options.random;
    this.#loop = this.#deliver();
  }

  /**
   * Queues records for delivery, all or none; never throws. Accepted records are fsync'd with
   * the rest of this event-loop turn's writes and sent meanwhile. A refusal (`full`,
   * `too-large`, `unwritable`, `closed`) leaves them with the caller.
   */
  write(records: readonly R[]): AppendResult {
    if (this.#closing) return { ok: false, reason: 'closed' };
    const result = this.#outbox.append(records);
    if (result.ok) this.#wake?.();
    return result;
  }

  /** Why a record of maxRecordBytes would be refused now (`unwritable`: the disk fails; `full`), or undefined. */
  refusal(): 'unwritable' | 'full' | undefined {
    if (this.#outbox.failure !== undefined) return 'unwritable';
    if (!this.#outbox.hasRoomFor()) return 'full';
    return undefined;
  }

  /** Written and not yet acknowledged (acknowledged ones still being recorded in the outbox do not count). */
  waiting(): { records: number; bytes: number } {
    const outbox = this.#outbox.stats();
    const delivered = this.#outbox.pendingAmong(this.#unrecorded);
    return { records: outbox.pendingRecords - delivered.records, bytes: outbox.pendingBytes - delivered.bytes };
  }

  /** Resolves once a record of maxRecordBytes would fit in the outbox (or the engine closes). */
  async whenWritable(): Promise<void> {
    while (!this.#closing && !this.#outbox.hasRoomFor()) await this.#nextAck();
  }

  /** Resolves once everything written before the call has been acknowledged (or the engine stops). */
  async flushed(): Promise<void> {
    const last = this.#outbox.nextSeq - 1;
    while (!this.#stopped && this.#deliveredThrough < last) {
      const undelivered = this.#outbox.oldestPendingSeqAfter(this.#deliveredThrough);
      if (undelivered === undefined || undelivered > last) return;
      await this.#nextAck();
    }
  }

  stats(): DeliveryStats {
    const outbox = this.#outbox.stats();
    return {
      ...this.#stats,
      refusedFull: outbox.refusedFull,
      refusedTooLarge: outbox.refusedTooLarge,
      tornLinesIgnored: outbox.tornLinesIgnored,
    };
  }

  /**
   * Refuses new writes, keeps delivering for at most `timeoutMs`, then stops, closes the
   * transport and the outbox. Whatever is left stays in the outbox for the next run.
   */
  async close(timeoutMs: number): Promise<CloseResult> {
    if (!this.#closing) {
      this.#closing = true;
      this.#notifyAck(); // whenWritable() waiters
      await withTimeout(this.flushed(), timeoutMs);
      this.#stopped = true;
      this.#wake?.();
      this.#notifyAck();
      await withTimeout(this.#loop, STOP_TIMEOUT_MS);
      // A send in flight ends when the transport closes.
      await this.#transport.close().catch(() => undefined);
      await withTimeout(this.#loop, STOP_TIMEOUT_MS);
      // Acknowledgements not recorded by then are lost: those records are sent again next run.
      await withTimeout(this.#recording ?? Promise.resolve(), STOP_TIMEOUT_MS);
      await this.#outbox.close();
    }
    const pendingRecords = this.#outbox.pendingRecords;
    return { flushed: pendingRecords === 0, pendingRecords };
  }

  async #deliver(): Promise<void> {
    const backoff = new Backoff(this.#config.retryInitialMs, this.#config.retryMaxMs, this.#random);
    while (!this.#stopped) {
      try {
        const entries = await this.#outbox.peek(this.#config.batchSize, this.#config.maxBatchBytes, this.#deliveredThrough);
        if (entries.length === 0) {
          await this.#waitForWork();
          continue;
        }
        await this.#transport.send(entries);
        this.#stats.delivered += entries.length;
        this.#stats.batchesDelivered += 1;
        this.#deliveredThrough = entries.at(-1)!.seq;
        // Recorded in the background: the next request need not wait for the ack log's fsync.
        for (const e of entries) this.#unrecorded.push(e.seq);
        this.#recording ??= this.#recordAcks();
        if (this.#stats.failing) {
          this.#stats.failing = false;
          this.#log('info', `${this.#names.delivery} recovered`, { sendErrors: this.#stats.sendErrors, outboxRecords: this.#outbox.pendingRecords });
        }
        backoff.reset();
        this.#notifyAck();
      } catch (err) {
        if (this.#stopped) break;
        this.#stats.sendErrors += 1;
        this.#stats.lastError = describeError(err);
        const retryable = this.#transport.isRetryable(err);
        if (!this.#stats.failing) {
          this.#stats.failing = true;
          this.#log(retryable ? 'warn' : 'error', `${this.#names.delivery} failing; records wait in the outbox and are retried`, {
            error: this.#stats.lastError,
            retryable,
            outboxRecords: this.#outbox.pendingRecords,
          });
        }
        await this.#transport.reset?.();
        await this.#sleep(retryable ? backoff.next() : backoff.maxMs);
      }
    }
  }

  /**
   * Records acknowledgements in the outbox, coalescing those that arrive meanwhile. A failure
   * is retried (on its own backoff) rather than re-sent: the receiving end already has them.
   */
  async #recordAcks(): Promise<void> {
    const backoff = new Backoff(this.#config.retryInitialMs, this.#config.retryMaxMs, this.#random);
    let failing = false;
    while (this.#unrecorded.length > 0) {
      const seqs = this.#unrecorded.slice();
      try {
        await this.#outbox.ack(seqs);
        this.#unrecorded.splice(0, seqs.length);
        if (failing) this.#log('info', `${this.#names.outbox} records acknowledgements again`, { ackErrors: this.#stats.ackErrors });
        failing = false;
        backoff.reset();
        this.#notifyAck(); // room in the outbox: whenWritable()
      } catch (err) {
        this.#stats.ackErrors += 1;
        if (!failing) {
          failing = true;
          this.#log('warn', `${this.#names.outbox} cannot record acknowledgements; retrying (the records stay pending)`, { error: describeError(err) });
        }
        if (this.#stopped) break;
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
    this.#recording = undefined;
  }

  #waitForWork(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve();
      };
      // Stop, or a record, may have come while the loop was not yet waiting.
      if (this.#stopped) this.#wake();
      else if (this.#outbox.oldestPendingSeqAfter(this.#deliveredThrough) !== undefined) this.#wake();
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      timer = setTimeout(done, ms);
      // Only stop interrupts a backoff; new records must not cut it short.
      this.#wake = () => {
        if (this.#stopped) done();
      };
      if (this.#stopped) done();
    });
  }

  #nextAck(): Promise<void> {
    return new Promise((resolve) => {
      const listener = (): void => {
        this.#ackListeners.delete(listener);
        resolve();
      };
      this.#ackListeners.add(listener);
    });
  }

  #notifyAck(): void {
    for (const listener of [...this.#ackListeners]) listener();
  }
}
