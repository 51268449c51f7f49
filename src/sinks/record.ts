import type { OutboxRecordShape } from '../storage/outbox.ts';

/**
 * One message for a sink: what the Kafka sink's outbox stores and sends. `topic` is a logical
 * name that the sink's configuration maps to a real topic; `key` is the trajectory key (so one
 * trajectory's findings stay in one partition, in order); `id` is the finding id consumers
 * dedupe by, since delivery is at-least-once.
 */
export interface SinkRecord {
  topic: 'findings' | 'alarms';
  key: string;
  /** `finding_id` (or the alarm's id): the dedupe key of at-least-once delivery. */
  id: string;
  /** The finding (or alarm) as JSON text. */
  value: string;
  headers: Record<string, string>;
}

/** The logical topics a {@link SinkRecord} may name. */
export const SINK_TOPICS: readonly SinkRecord['topic'][] = ['findings', 'alarms'];

/** True when `value` has the exact shape of a {@link SinkRecord} (used when reading durable state). */
export function isSinkRecord(value: unknown): value is SinkRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  if (r.topic !== 'findings' && r.topic !== 'alarms') return false;
  if (typeof r.key !== 'string' || typeof r.id !== 'string' || typeof r.value !== 'string') return false;
  if (typeof r.headers !== 'object' || r.headers === null || Array.isArray(r.headers)) return false;
  return Object.values(r.headers).every((v) => typeof v === 'string');
}

/** How an outbox stores a {@link SinkRecord}: `{"seq", "topic", "key", "id", "value", "headers"}`, one line each. */
export const SINK_RECORD_SHAPE: OutboxRecordShape<SinkRecord> = {
  fields: (r) => ({ topic: r.topic, key: r.key, id: r.id, value: r.value, headers: r.headers }),
  is: isSinkRecord,
};
