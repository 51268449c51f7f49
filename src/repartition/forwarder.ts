import type { CompressionTypes, Producer } from 'kafkajs';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { LevelLog } from '../telemetry/logger.ts';
import { Backoff } from '../storage/backoff.ts';
import { splitRecord } from './fragments.ts';
import { captureOf, encodeRefusedRecord, encodeTraceRecord, sessionOf } from './record.ts';
import { REFUSAL } from '../ingest/refusal.ts';

/** kafkajs `CompressionTypes` (a CommonJS enum that ESM cannot import by name): `none` and the built-in gzip. */
const COMPRESSION = { none: 0 as CompressionTypes, gzip: 1 as CompressionTypes } as const;
export type ForwardCompression = keyof typeof COMPRESSION;

export interface ForwarderOptions {
  topic: string;
  /** Bytes queued or sent and not yet acknowledged at which {@link Forwarder.backpressure} names a reason. */
  maxInFlightBytes: number;
  /** Largest record value sent (already lowered to the topic's `max.message.bytes`); a larger trace goes in fragments. */
  maxRecordBytes: number;
  lingerMs: number;
  /** How produce requests are compressed (the broker's `max.message.bytes` bounds the compressed batch). Default gzip. */
  compression?: ForwardCompression;
  log: LevelLog;
}

export interface ForwarderStats {
  /** Traces whose records were all acknowledged by the broker (whole, in fragments, or as a refusal). */
  forwarded: number;
  /** Of them, traces sent in fragments, and the fragment records sent. */
  fragmented: number;
  fragments: number;
  /** Record value bytes acknowledged (before compression). */
  forwardedBytes: number;
  /** Traces the broker refused (a refusal record was sent instead), and their bytes. */
  refused: number;
  refusedBytes: number;
  /** Closed traces naming no session: analyzed by stage 1, not forwarded. */
  skipped: number;
  /** Failed produce attempts (each retried; stage 1's offsets stay held meanwhile). */
  sendErrors: number;
  inFlightBytes: number;
  inFlightRecords: number;
}

/** One trace's forward: acknowledged once each of its records is. */
interface Forward {
  sessionId: string;
  traceId: string;
  pending: number;
  /** The refusal sent instead when the broker refuses a record of it (once per trace). */
  refusal: () => Buffer;
  refused: boolean;
  acknowledged: () => void;
}

interface Queued {
  key: string;
  value: Buffer;
  of: Forward;
}

/** Bytes a record costs in a record batch beyond its key and value (headers of the batch and record, generous). */
const RECORD_OVERHEAD = 128;
/** The backoff between attempts at a failed forward (the house Backoff: full jitter). */
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 5_000;
/** The broker's answers to a record or batch over its `max.message.bytes`: never retried as they are. */
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/**
 * Stage 1's forward to the internal topic (docs/scaling-out.md §4): a closed trace that names a
 * session becomes one record keyed by session id (`record.ts`), or, when that record exceeds
 * `maxRecordBytes`, ordered fragments of it under the same key (`fragments.ts`), put back
 * together by stage 2. Produce requests are compressed (gzip). Bounded: while the bytes not yet
 * acknowledged reach `maxInFlightBytes`, {@link backpressure} names `repartition-in-flight`, and
 * the Kafka source pauses stage 1's partitions (nothing is dropped). A forward resolves once the
 * broker acknowledged all of it (acks = all; a failed produce is retried until it is), and only
 * then are the trace's source offsets released for commit. A record the broker refuses as too
 * large is replaced by a small refusal record, so its session is marked incomplete
 * (`repartition-refused`), never silently short: counted and logged.
 */
export class Forwarder {
  readonly #producer: Producer;
  #options: ForwarderOptions;
  readonly #compression: CompressionTypes;
  #queue: Queued[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  #closed = false;
  #failing = false;
  readonly #stats: ForwarderStats = {
    forwarded: 0,
    fragmented: 0,
    fragments: 0,
    forwardedBytes: 0,
    refused: 0,
    refusedBytes: 0,
    skipped: 0,
    sendErrors: 0,
    inFlightBytes: 0,
    inFlightRecords: 0,
  };

  /** `producer` is connected and idempotent; the forwarder does not own its connection. */
  constructor(producer: Producer, options: ForwarderOptions) {
    this.#producer = producer;
    this.#options = options;
    this.#compression = COMPRESSION[options.compression ?? 'gzip'];
  }

  /** Lowers the record limit to what the topic takes (its `max.message.bytes`, read at start). */
  limitRecordBytes(maxBytes: number): void {
    if (maxBytes < this.#options.maxRecordBytes) this.#options = { ...this.#options, maxRecordBytes: maxBytes };
  }

  stats(): ForwarderStats {
    return { ...this.#stats };
  }

  backpressure(): string | undefined {
    return this.#stats.inFlightBytes >= this.#options.maxInFlightBytes ? REFUSAL.repartitionInFlight : undefined;
  }

  /** Forwards `t` when its steps name a session (resolves once acknowledged); undefined: analyze it here. */
  forward(t: Trajectory, captured: () => Step[]): Promise<void> | undefined {
    const steps = captured();
    const sessionId = sessionOf(steps);
    if (sessionId === undefined) {
      this.#stats.skipped++;
      return undefined;
    }
    const capture = captureOf(t);
    const whole = encodeTraceRecord(sessionId, t.key, steps, capture);
    const limit = this.#options.maxRecordBytes - Buffer.byteLength(sessionId) - RECORD_OVERHEAD;
    const values = whole.length > limit ? splitRecord(sessionId, t.key, whole, limit) : [whole];
    if (values.length > 1) {
      this.#stats.fragmented++;
      this.#stats.fragments += values.length;
    }
    // Only sizes are kept for a refusal: the steps and the whole record are let go once sent.
    const stepCount = steps.length;
    const wholeBytes = whole.length;
    return new Promise<void>((acknowledged) => {
      const of: Forward = {
        sessionId,
        traceId: t.key,
        pending: values.length,
        refusal: () => encodeRefusedRecord(sessionId, t.key, stepCount, capture, wholeBytes, this.#options.maxRecordBytes),
        refused: false,
        acknowledged,
      };
      for (const value of values) {
        this.#queue.push({ key: sessionId, value, of });
        this.#stats.inFlightBytes += value.length;
        this.#stats.inFlightRecords++;
      }
      this.#schedule();
    });
  }

  /** Resolves once everything queued so far is acknowledged (or the forwarder was closed). */
  async flushed(): Promise<void> {
    while (!this.#closed && (this.#queue.length > 0 || this.#sending !== undefined)) {
      this.#schedule(0);
      await (this.#sending ?? new Promise((r) => setTimeout(r, 1)));
    }
  }

  /** Stops sending: what is not acknowledged stays unacknowledged (its source offsets uncommitted, replayed by the next owner). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #schedule(lingerMs: number = this.#options.lingerMs): void {
    if (this.#closed || this.#sending !== undefined || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#sending = this.#sendAll().finally(() => {
        this.#sending = undefined;
        if (this.#queue.length > 0) this.#schedule();
      });
    }, lingerMs);
  }

  /** Sends the queue in produce requests under the record limit (the broker bounds a record batch, not a record). */
  async #sendAll(): Promise<void> {
    while (this.#queue.length > 0 && !this.#closed) {
      const batch: Queued[] = [];
      let bytes = 0;
      while (this.#queue.length > 0) {
        const next = this.#queue[0]!;
        const cost = next.value.length + Buffer.byteLength(next.key) + RECORD_OVERHEAD;
        if (batch.length > 0 && bytes + cost > this.#options.maxRecordBytes) break;
        batch.push(this.#queue.shift()!);
        bytes += cost;
      }
      await this.#send(batch);
    }
  }

  async #send(batch: Queued[]): Promise<void> {
    const backoff = new Backoff(RETRY_INITIAL_MS, RETRY_MAX_MS);
    while (!this.#closed) {
      try {
        await this.#producer.send({
          topic: this.#options.topic,
          acks: -1,
          compression: this.#compression,
          messages: batch.map((q) => ({ key: q.key, value: q.value })),
        });
        if (this.#failing) this.#options.log('info', 'repartition forwards succeed again');
        this.#failing = false;
        for (const q of batch) this.#acknowledged(q);
        return;
      } catch (err) {
        if (tooLarge(err)) return this.#refused(batch);
        this.#stats.sendErrors++;
        if (!this.#failing) this.#options.log('error', 'repartition forward failed; retrying (stage 1 offsets stay held)', { error: (err as Error).message });
        this.#failing = true;
        await new Promise((r) => setTimeout(r, backoff.next()));
      }
    }
  }

  /**
   * The broker refused `batch` as too large: each record is tried alone, and one refused alone
   * becomes its trace's refusal record (the first of the trace; a later one is only counted).
   */
  async #refused(batch: Queued[]): Promise<void> {
    if (batch.length > 1) {
      for (const q of batch) await this.#send([q]);
      return;
    }
    const q = batch[0]!;
    const { of } = q;
    if (of.refused) {
      this.#acknowledged(q);
      return;
    }
    of.refused = true;
    this.#stats.refused++;
    this.#stats.refusedBytes += q.value.length;
    this.#options.log('warn', 'the broker refused a repartition record as too large: its session is marked incomplete (repartition-refused)', {
      sessionId: of.sessionId,
      traceId: of.traceId,
      bytes: q.value.length,
      maxRecordBytes: this.#options.maxRecordBytes,
    });
    const refusal = of.refusal();
    this.#stats.inFlightBytes += refusal.length - q.value.length;
    await this.#send([{ key: q.key, value: refusal, of }]);
  }

  #acknowledged(q: Queued): void {
    this.#stats.inFlightBytes -= q.value.length;
    this.#stats.inFlightRecords--;
    this.#stats.forwardedBytes += q.value.length;
    if (--q.of.pending > 0) return;
    this.#stats.forwarded++;
    q.of.acknowledged();
  }
}

/** Whether `err` (or an error it wraps) is the broker's answer to a record over its size limit. */
function tooLarge(err: unknown): boolean {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (typeof e.type === 'string' && TOO_LARGE.has(e.type)) return true;
    e = e.cause as typeof e;
  }
  return false;
}
