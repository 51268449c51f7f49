import { z } from 'zod';
import { DEFAULT_OUTBOX_LIMITS } from '../../storage/outbox-limits.ts';

/**
 * The configuration keys every sink that delivers through an outbox shares (the Kafka sink, the
 * OTLP evaluation events): the outbox's bounds, the retry backoff after a failed delivery, and
 * how long `close()` keeps delivering. Spread into each sink's schema; pair it with
 * {@link retryOrder}.
 */
export const OUTBOX_DELIVERY_KEYS = {
  /** Outbox bounds: at either, `backpressure()` says so and input is refused upstream. */
  maxOutboxBytes: z.number().int().min(1024).default(DEFAULT_OUTBOX_LIMITS.maxOutboxBytes),
  maxOutboxRecords: z.number().int().min(1).default(DEFAULT_OUTBOX_LIMITS.maxOutboxRecords),
  /** One record's bound (for Kafka below the broker's default `message.max.bytes`, 1 MiB). */
  maxRecordBytes: z.number().int().min(256).default(DEFAULT_OUTBOX_LIMITS.maxRecordBytes),
  outboxSegmentBytes: z.number().int().min(4096).default(DEFAULT_OUTBOX_LIMITS.segmentBytes),
  /** Backoff after a failed delivery (the house `Backoff`, full jitter): its ceiling doubles from initial up to max. */
  retryInitialMs: z.number().int().min(1).default(250),
  retryMaxMs: z.number().int().min(1).default(10_000),
  /** How long `close()` keeps delivering; what is left stays in the outbox for the next run. */
  closeTimeoutMs: z.number().int().min(0).default(10_000),
};

/**
 * How many records, and how many serialized bytes beyond the first record, one delivery request
 * carries (a Kafka `sendBatch`, an OTLP export); each transport gives its own defaults.
 */
export function batchKeys(defaultRecords: number, defaultBytes: number) {
  return {
    batchSize: z.number().int().min(1).max(10_000).default(defaultRecords),
    maxBatchBytes: z.number().int().min(1024).default(defaultBytes),
  };
}

/** The refinement the shared keys need: the backoff never starts above its ceiling. */
export const retryOrder: [(c: { retryInitialMs: number; retryMaxMs: number }) => boolean, { message: string; path: string[] }] = [
  (c) => c.retryInitialMs <= c.retryMaxMs,
  { message: 'retryInitialMs must not exceed retryMaxMs', path: ['retryInitialMs'] },
];
