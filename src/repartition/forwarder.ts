import type { Producer } from 'kafkajs';
import type { Trajectory } from '../assemble/trajectory.ts';
import type { Step } from '../normalize/step.ts';
import type { LevelLog } from '../telemetry/logger.ts';
import { Backoff } from '../storage/backoff.ts';
import { captureOf, encodeRefusedRecord, encodeTraceRecord, sessionOf } from './record.ts';
import { REFUSAL } from '../ingest/refusal.ts';

export interface ForwarderOptions {
  topic: string;
  /** Bytes queued or sent and not yet acknowledged at which {@link Forwarder.backpressure} names a reason. */
  maxInFlightBytes: number;
  /** Largest record value sent (already lowered to the topic's `max.message.bytes`). */
  maxRecordBytes: number;
  lingerMs: number;
  log: LevelLog;
}

export interface ForwarderStats {
  /** Trace records acknowledged by the broker. */
  forwarded: number;
  /** Traces refused for their size (a refusal record was sent instead), and their bytes. */
  refused: number;
  refusedBytes: number;
  /** Closed traces naming no session: analyzed by stage 1, not forwarded. */
  skipped: number;
  /** Failed produce attempts (each retried; stage 1's offsets stay held meanwhile). */
  sendErrors: number;
  inFlightBytes: number;
  inFlightRecords: number;
}

interface Queued {
  key: string;
  value: Buffer;
  acknowledged: () => void;
}

/** Bytes a record costs in a record batch beyond its key and value (headers of the batch and record, generous). */
const RECORD_OVERHEAD = 128;
/** The backoff between attempts at a failed forward (the house Backoff: full jitter). */
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Stage 1's forward to the internal topic (docs/scaling-out.md §4): a closed trace that names a
 * session becomes one record keyed by session id (`record.ts`). Bounded: while the bytes not yet
 * acknowledged reach `maxInFlightBytes`, {@link backpressure} names `repartition-in-flight`, and
 * the Kafka source pauses stage 1's partitions (nothing is dropped). A forward resolves once the
 * broker acknowledged it (acks = all; a failed produce is retried until it is), and only then are
 * the trace's source offsets released for commit. A trace whose record would exceed
 * `maxRecordBytes` is refused: counted, logged, and a small refusal record goes in its place so
 * its session is marked incomplete (`repartition-refused`), never silently short.
 */
export class Forwarder {
  readonly #producer: Producer;
  #options: ForwarderOptions;
  #queue: Queued[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> | undefined;
  #closed = false;
  #failing = false;
  readonly #stats: ForwarderStats = { forwarded: 0, refused: 0, refusedBytes: 0, skipped: 0, sendErrors: 0, inFlightBytes: 0, inFlightRecords: 0 };

  /** `producer` is connected and idempotent; the forwarder does not own its connection. */
  constructor(producer: Producer, options: ForwarderOptions) {
    this.#producer = producer;
    this.#options = options;
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
    let value = encodeTraceRecord(sessionId, t.key, steps, capture);
    const limit = this.#options.maxRecordBytes - Buffer.byteLength(sessionId) - RECORD_OVERHEAD;
    if (value.length > limit) {
      this.#stats.refused++;
      this.#stats.refusedBytes += value.length;
      this.#options.log('warn', 'trace too large for the repartition topic: refused, its session is marked incomplete', {
        sessionId,
        traceId: t.key,
        bytes: value.length,
        maxBytes: limit,
        steps: steps.length,
      });
      value = encodeRefusedRecord(sessionId, t.key, steps.length, capture, value.length, limit);
    }
    return new Promise<void>((acknowledged) => {
      this.#queue.push({ key: sessionId, value, acknowledged });
      this.#stats.inFlightBytes += value.length;
      this.#stats.inFlightRecords++;
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
          messages: batch.map((q) => ({ key: q.key, value: q.value })),
        });
        if (this.#failing) this.#options.log('info', 'repartition forwards succeed again');
        this.#failing = false;
        for (const q of batch) {
          this.#stats.inFlightBytes -= q.value.length;
          this.#stats.inFlightRecords--;
          this.#stats.forwarded++;
          q.acknowledged();
        }
        return;
      } catch (err) {
        this.#stats.sendErrors++;
        if (!this.#failing) this.#options.log('error', 'repartition forward failed; retrying (stage 1 offsets stay held)', { error: (err as Error).message });
        this.#failing = true;
        await new Promise((r) => setTimeout(r, backoff.next()));
      }
    }
  }
}
