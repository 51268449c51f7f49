import type { IHeaders, KafkaMessage, Producer } from 'kafkajs';
import { Backoff } from '../../storage/backoff.ts';
import type { LevelLog } from '../../telemetry/logger.ts';
import type { DeadLetterReason } from './record.ts';

/** The backoff between attempts at a failed dead-letter produce (the house Backoff: full jitter). */
const DEAD_LETTER_RETRY_INITIAL_MS = 100;
const DEAD_LETTER_RETRY_MAX_MS = 5_000;
export const DLQ_HEADER_REASON = 'trajwatch.dlq.reason';

/**
 * The Kafka source's dead-letter topic: an undecodable record is sent as it came, with the
 * reason, its detail and where it came from in headers, and retried until the broker has it
 * (the partition waits rather than skip it). The first record of each reason is logged.
 */
export class DeadLetters {
  readonly #producer: Producer;
  readonly #topic: string;
  readonly #log: LevelLog;
  readonly #loggedReasons = new Set<string>();
  /** Records sent, by reason. */
  readonly sent: Record<string, number> = {};
  /** Failed produce attempts (each is retried). */
  errors = 0;

  constructor(producer: Producer, topic: string, log: LevelLog) {
    this.#producer = producer;
    this.#topic = topic;
    this.#log = log;
  }

  /** `source`: `topic/partition/offset`; `wait` runs between attempts (the consumer's heartbeat). */
  async send(source: string, message: KafkaMessage, reason: DeadLetterReason, detail: string, wait: () => Promise<void>): Promise<void> {
    if (!this.#loggedReasons.has(reason)) {
      this.#loggedReasons.add(reason);
      this.#log('warn', 'undecodable record sent to the dead-letter topic (logged once per reason)', { reason, detail, record: source });
    }
    const headers: IHeaders = {
      ...message.headers,
      [DLQ_HEADER_REASON]: reason,
      'trajwatch.dlq.detail': detail.slice(0, 1_000),
      'trajwatch.dlq.source': source,
    };
    const backoff = new Backoff(DEAD_LETTER_RETRY_INITIAL_MS, DEAD_LETTER_RETRY_MAX_MS);
    let failing = false;
    for (;;) {
      try {
        await this.#producer.send({ topic: this.#topic, acks: -1, messages: [{ key: message.key, value: message.value, headers }] });
        break;
      } catch (err) {
        this.errors++;
        if (!failing) this.#log('error', 'dead-letter produce failed; retrying', { error: (err as Error).message, record: source });
        failing = true;
        await new Promise((r) => setTimeout(r, backoff.next()));
        await wait();
      }
    }
    this.sent[reason] = (this.sent[reason] ?? 0) + 1;
  }
}
