import { byLabel, histogram, type MetricRegistry, mirrorCounter, mirrorTotal, readFlag } from '../../telemetry/metrics.ts';

/**
 * What these series read of the sink's stats (`KafkaSinkStats` has them): declared here so the
 * sink can register its metrics without a cycle between the two files.
 */
export interface KafkaSinkReadings {
  delivered: number;
  sendErrors: number;
  ackErrors: number;
  refusedFull: number;
  refusedTooLarge: number;
  failing: boolean;
}

/** Seconds, from a loopback broker to one that is retrying elections. */
const PRODUCE_LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const PRODUCE_RECORDS_BUCKETS = [1, 5, 10, 50, 100, 500, 1000, 5000];

/** Times one acknowledged produce request: the sink's `onProduce` option. */
export type ProduceObserver = (seconds: number, records: number) => void;

const OFF: ProduceObserver = () => {};

/**
 * The Kafka sink's counters and gauge, mirrored from the sink's stats at scrape time:
 * `trajwatch_kafka_delivered_total`, `_produce_errors_total`, `_outbox_ack_errors_total`,
 * `_outbox_refused_total{reason}`, `trajwatch_kafka_failing`. Without a registry: nothing.
 */
export function registerKafkaSinkMetrics(registry: MetricRegistry, read: () => KafkaSinkReadings): void {
  if (registry === undefined) return;
  mirrorTotal(registry, 'trajwatch_kafka_delivered_total', 'Records acknowledged by the Kafka broker.', () => read().delivered);
  mirrorTotal(registry, 'trajwatch_kafka_produce_errors_total', 'Failed Kafka produce attempts (each is retried from the outbox).', () => read().sendErrors);
  mirrorTotal(
    registry,
    'trajwatch_kafka_outbox_ack_errors_total',
    'Failed attempts to record broker acknowledgements in the outbox (retried; the records are not sent again).',
    () => read().ackErrors,
  );
  mirrorCounter(
    registry,
    'trajwatch_kafka_outbox_refused_total',
    'Writes the Kafka outbox refused, by reason (full: retried when room frees; too-large: never sendable).',
    ['reason'],
    () => {
      const s = read();
      return byLabel('reason', { full: s.refusedFull, 'too-large': s.refusedTooLarge });
    },
  );
  readFlag(registry, 'trajwatch_kafka_failing', '1 from a failed produce attempt until the next success.', () => read().failing);
}

/**
 * Produce latency and size (`trajwatch_kafka_produce_seconds`, `trajwatch_kafka_produce_records`),
 * fed by the returned observer. Without a registry: a no-op.
 */
export function kafkaProduceMetrics(registry: MetricRegistry): ProduceObserver {
  if (registry === undefined) return OFF;
  const latency = histogram(
    registry,
    'trajwatch_kafka_produce_seconds',
    'Duration of acknowledged Kafka produce requests (send to broker acknowledgement, acks=all).',
    PRODUCE_LATENCY_BUCKETS,
  );
  const size = histogram(registry, 'trajwatch_kafka_produce_records', 'Records per acknowledged Kafka produce request.', PRODUCE_RECORDS_BUCKETS);
  return (seconds, records) => {
    latency.observe(seconds);
    size.observe(records);
  };
}
