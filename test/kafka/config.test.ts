import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { describeIssue } from '../../src/config/parse-section.ts';
import { KafkaSourceConfigSchema } from '../../src/ingest/kafka/config.ts';
import { kafkaClientConfig } from '../../src/kafka/client-config.ts';
import { KafkaConnectionSchema } from '../../src/kafka/config.ts';
import { KafkaSinkConfigSchema } from '../../src/sinks/kafka/config.ts';

const errors = (schema: z.ZodType, input: unknown): string[] => {
  const parsed = schema.safeParse(input, { reportInput: true });
  return parsed.success ? [] : parsed.error.issues.map(describeIssue);
};

describe('one Kafka connection schema for the source and the sink', () => {
  const connectionKeys = Object.keys(KafkaConnectionSchema.shape).sort();

  it('gives both sections the same connection defaults', () => {
    const pick = (c: Record<string, unknown>) => Object.fromEntries(connectionKeys.map((k) => [k, c[k]]));
    const source = KafkaSourceConfigSchema.parse({ brokers: ['127.0.0.1:9092'] });
    const sink = KafkaSinkConfigSchema.parse({ brokers: ['127.0.0.1:9092'] });
    expect(pick(source)).toEqual(pick(sink));
    expect(pick(sink)).toEqual(KafkaConnectionSchema.parse({ brokers: ['127.0.0.1:9092'] }));
  });

  it('rejects a bad broker, SASL and TLS with the same words in both sections', () => {
    const bad = {
      brokers: ['no-port'],
      sasl: { mechanism: 'plain', username: 'u' },
      ssl: { caFile: '/ca.pem', pin: 'x' },
    };
    const expected = [
      'brokers.0: expected HOST:PORT with a port from 0 to 65535 (value: "no-port")',
      'ssl.pin: unknown key',
      'sasl: set exactly one of passwordEnv or passwordFile (value: {"mechanism":"plain","username":"u"})',
    ];
    expect(errors(KafkaSourceConfigSchema, bad).sort()).toEqual([...expected].sort());
    expect(errors(KafkaSinkConfigSchema, bad).sort()).toEqual([...expected].sort());
  });

  it('keeps each section strict about keys of the other', () => {
    expect(errors(KafkaSourceConfigSchema, { brokers: ['h:1'], topics: {} })).toEqual(['topics: unknown key']);
    expect(errors(KafkaSinkConfigSchema, { brokers: ['h:1'], groupId: 'g' })).toEqual(['groupId: unknown key']);
  });

  it('names the section a missing SASL secret belongs to, source or sink', () => {
    const sasl = { mechanism: 'plain', username: 'u', passwordEnv: 'TRAJWATCH_TEST_MISSING_PW' };
    const source = KafkaSourceConfigSchema.parse({ brokers: ['h:1'], sasl });
    const sink = KafkaSinkConfigSchema.parse({ brokers: ['h:1'], sasl });
    expect(() => kafkaClientConfig(source, {}, 'source.kafka.')).toThrow(
      'source.kafka.sasl.passwordEnv: environment variable TRAJWATCH_TEST_MISSING_PW is not set',
    );
    expect(() => kafkaClientConfig(sink, {}, 'kafka.')).toThrow('kafka.sasl.passwordEnv: environment variable');
  });
});
