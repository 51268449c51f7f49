import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { UpstreamError } from '../errors.ts';
import type { RecordLocation } from './violation.ts';

/** How long the topic may take to be read to its end offsets before verify gives up (it says so, exit 2). */
export const DEFAULT_KAFKA_READ_TIMEOUT_MS = 60_000;

/**
 * Reads `topic` from its first offsets to the end offsets it had when the read began, then
 * stops: a throwaway consumer group that commits nothing, so no position of a real consumer
 * moves. Each record's value goes to `take` with its partition and offset, in partition order.
 * Resolves with the number of records read.
 * @throws UpstreamError when the brokers cannot be read, or the end is not reached within `timeoutMs`.
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  take: (text: string, at: RecordLocation) => void,
  timeoutMs = DEFAULT_KAFKA_READ_TIMEOUT_MS,
): Promise<number> {
  try {
    return await readToEnd(kafka, topic, take, timeoutMs);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    throw new UpstreamError(`cannot read the findings topic ${topic}: ${(err as Error).message}`, { cause: err, retriable: true, context: { topic } });
  }
}

async function readToEnd(kafka: Kafka, topic: string, take: (text: string, at: RecordLocation) => void, timeoutMs: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    ends = new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  if (ends.size === 0) return 0;
  const consumer = kafka.consumer({ groupId: `trajwatch-verify-${randomUUID()}` });
  let read = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const left = [...ends.keys()].join(', ');
        reject(new UpstreamError(`${topic}: not read to its end offsets within ${timeoutMs} ms (partitions ${left} unfinished)`, { context: { topic } }));
      }, timeoutMs);
      void consumer
        .run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            const end = ends.get(partition);
            const offset = BigInt(message.offset);
            if (end === undefined || offset >= end) return;
            if (message.value !== null) {
              read++;
              take(message.value.toString('utf8'), { topic, partition, offset: message.offset });
            }
            if (offset + 1n >= end) ends.delete(partition);
            if (ends.size === 0) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch((err: unknown) => {
          clearTimeout(timer);
          reject(err);
        });
    });
  } finally {
    await consumer.disconnect();
  }
  return read;
}
