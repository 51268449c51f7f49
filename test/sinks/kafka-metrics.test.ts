import { describe, expect, it } from 'vitest';
import { Registry, register } from 'prom-client';
import { kafkaProduceMetrics, registerKafkaSinkMetrics } from '../../src/sinks/kafka/metrics.ts';
import type { KafkaSinkStats } from '../../src/sinks/kafka/sink.ts';
import { sample } from '../helpers/metric-sample.ts';

const kafkaStats = (): KafkaSinkStats => ({
  outboxRecords: 0,
  outboxBytes: 0,
  delivered: 3,
  batchesDelivered: 1,
  sendErrors: 0,
  ackErrors: 2,
  failing: false,
  lastError: undefined,
  refusedFull: 0,
  refusedTooLarge: 0,
  tornLinesIgnored: 0,
  produceLatencyMs: { count: 1, sum: 4, max: 4, last: 4 },
});

describe('Kafka sink metrics', () => {
  it('exports Kafka produce latency as a histogram, and outbox refusals by reason from 0', async () => {
    const registry = new Registry();
    registerKafkaSinkMetrics(registry, kafkaStats);
    kafkaProduceMetrics(registry)(0.004, 3);
    const text = await registry.metrics();
    expect(sample(text, 'trajwatch_kafka_produce_seconds_count')).toBe(1);
    expect(sample(text, 'trajwatch_kafka_produce_seconds_bucket{le="0.005"}')).toBe(1);
    expect(sample(text, 'trajwatch_kafka_produce_records_sum')).toBe(3);
    expect(sample(text, 'trajwatch_kafka_outbox_refused_total{reason="full"}')).toBe(0);
    expect(sample(text, 'trajwatch_kafka_delivered_total')).toBe(3);
    expect(sample(text, 'trajwatch_kafka_outbox_ack_errors_total')).toBe(2);
  });

  it('declares nothing and counts nothing without a registry (telemetry off)', async () => {
    registerKafkaSinkMetrics(undefined, kafkaStats);
    kafkaProduceMetrics(undefined)(0.01, 1);
    // prom-client's global registry is where a metric without `registers` would land: nothing did.
    expect(await register.metrics()).not.toMatch(/trajwatch_/);
  });
});
