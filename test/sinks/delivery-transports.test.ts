import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kafka, KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { KafkaTransport } from '../../src/sinks/kafka/transport.ts';
import { parseOtlpEvaluationConfig } from '../../src/sinks/otlp/config.ts';
import { OtlpLogTransport } from '../../src/sinks/otlp/transport.ts';

// What each transport tells the delivery engine about a failure (`isRetryable`). The Kafka
// errors are kafkajs's own classes, shaped as its producer throws them; the OTLP ones come
// from the real OTLP/HTTP exporter against a local HTTP server.

describe('KafkaTransport.isRetryable', () => {
  const transport = new KafkaTransport(new Kafka({ brokers: ['127.0.0.1:1'] }), parseKafkaSinkConfig({ brokers: ['127.0.0.1:1'] }), () => {});

  it('retries what kafkajs gave up retrying on a lost connection or leader', () => {
    const lost = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
    expect(transport.isRetryable(lost)).toBe(true);
    expect(transport.isRetryable(new KafkaJSNumberOfRetriesExceeded(lost, { retryCount: 3, retryTime: 1_000 }))).toBe(true);
    expect(transport.isRetryable(new Error('anything else'))).toBe(true);
  });

  it('does not count a broker refusal that only configuration mends (an unauthorized topic) as retryable', () => {
    // As kafkajs builds them (its typings omit the options its constructors take).
    const refused = new KafkaJSProtocolError(
      Object.assign(new Error('Not authorized to access topics'), { type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false }),
    );
    const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, options: { cause: Error }) => Error;
    expect(transport.isRetryable(refused)).toBe(false);
    expect(transport.isRetryable(new NonRetriable(refused, { cause: refused }))).toBe(false);
  });
});

describe('OtlpLogTransport.isRetryable', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
  });
  const answering = async (status: number): Promise<string> => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status).end());
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`;
  };
  const entry = {
    seq: 0,
    record: {
      topic: 'findings' as const,
      key: 'k',
      id: 'f1',
      headers: {},
      value: JSON.stringify({ parent: null, observedAt: null, severityNumber: 9, severityText: 'INFO', body: '{}', attributes: {} }),
    },
  };
  const failure = async (endpoint: string) => {
    const transport = new OtlpLogTransport(parseOtlpEvaluationConfig({ endpoint, timeoutMs: 2_000 }));
    try {
      return await transport.send([entry]).then(
        () => undefined,
        (err: unknown) => err,
      );
    } finally {
      await transport.close();
    }
  };

  it('does not retry soon what the receiver rejected (400): only a change of configuration mends it', async () => {
    const transport = new OtlpLogTransport(parseOtlpEvaluationConfig({}));
    const err = await failure(await answering(400));
    expect(err).toBeInstanceOf(Error);
    expect(transport.isRetryable(err)).toBe(false);
  });

  it('retries a receiver that cannot be reached', async () => {
    const transport = new OtlpLogTransport(parseOtlpEvaluationConfig({}));
    const err = await failure('http://127.0.0.1:1/v1/logs');
    expect(err).toBeInstanceOf(Error);
    expect(transport.isRetryable(err)).toBe(true);
  });
});
