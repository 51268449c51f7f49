import type { OutboxEntry } from '../../storage/outbox.ts';

/**
 * What a transport gives the delivery engine (`engine.ts`): the one request that hands a batch
 * to the receiving end, and which of its failures are worth retrying soon. Everything else —
 * the outbox, the order, the acknowledgements, the backoff, close — is the engine's (the
 * Collector's exporterhelper senders around a transport that only knows `send`; Vector's
 * `RetryLogic`).
 */
export interface DeliveryTransport<R> {
  /** Delivers `entries` (in sequence order) in one request; resolves once the receiving end acknowledged every one. */
  send(entries: readonly OutboxEntry<R>[]): Promise<void>;
  /**
   * True when the failure may pass by itself (a broker down, a timeout, 503): retried on the
   * backoff from its first wait. False when only an operator can mend it (a refused topic,
   * a rejected request): the records stay in the outbox, the failure is logged as an error and
   * retried at the backoff's longest wait.
   */
  isRetryable(err: unknown): boolean;
  /** After a failed send: drops what may be broken (a producer kafkajs does not always recover). */
  reset?(): Promise<void>;
  /** Releases the connection; a send in flight then ends. Called once, by `close`. */
  close(): Promise<void>;
}
