import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.ts';
import { parseKafkaSinkConfig } from '../../../src/sinks/kafka/config.ts';
import { parseOtlpEvaluationConfig } from '../../../src/sinks/otlp/config.ts';

// The outbox keys both delivering sinks share (sinks/delivery/config.ts): one
// definition, the same defaults and the same refusal in each.
const SINKS = {
  kafka: (input: Record<string, unknown>) => parseKafkaSinkConfig({ brokers: ['127.0.0.1:9092'], ...input }),
  'otlp-evaluations': (input: Record<string, unknown>) => parseOtlpEvaluationConfig(input),
};

describe.each(Object.entries(SINKS))('the %s sink’s outbox keys', (_name, parse) => {
  it('embed the same outbox defaults', () => {
    const { maxOutboxBytes, maxOutboxRecords, maxRecordBytes, outboxSegmentBytes, retryInitialMs, retryMaxMs, closeTimeoutMs } = parse({});
    expect({ maxOutboxBytes, maxOutboxRecords, maxRecordBytes, outboxSegmentBytes, retryInitialMs, retryMaxMs, closeTimeoutMs }).toEqual({
      maxOutboxBytes: SINKS.kafka({}).maxOutboxBytes,
      maxOutboxRecords: SINKS.kafka({}).maxOutboxRecords,
      maxRecordBytes: SINKS.kafka({}).maxRecordBytes,
      outboxSegmentBytes: SINKS.kafka({}).outboxSegmentBytes,
      retryInitialMs: 250,
      retryMaxMs: 10_000,
      closeTimeoutMs: 10_000,
    });
  });

  it('refuse a backoff that starts above its ceiling, naming the key', () => {
    expect(() => parse({ retryInitialMs: 5_000, retryMaxMs: 1_000 })).toThrow(ConfigError);
    expect(() => parse({ retryInitialMs: 5_000, retryMaxMs: 1_000 })).toThrow(/retryInitialMs/);
  });
});
