import { Outbox, type OutboxLimits } from '../../storage/outbox.ts';
import { SINK_RECORD_SHAPE, type SinkRecord } from '../record.ts';

/**
 * What the evaluation-event sink needs of durable storage: append records (fsync'd before
 * they count), read them in order after a sequence number, and acknowledge them once the
 * receiver has. Today the Kafka sink's segmented outbox provides it (its own directory, its
 * own limits); when `src/storage/` lands, an adapter over a storage log replaces
 * {@link openDurableQueue} and nothing else in the sink changes.
 */
export type DurableQueue = Pick<
  Outbox<SinkRecord>,
  'append' | 'peek' | 'ack' | 'hasRoomFor' | 'failure' | 'stats' | 'nextSeq' | 'oldestPendingSeqAfter' | 'pendingAmong' | 'close'
>;

export async function openDurableQueue(dir: string, limits: OutboxLimits): Promise<DurableQueue> {
  return Outbox.open(dir, SINK_RECORD_SHAPE, limits);
}
