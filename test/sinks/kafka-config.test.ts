import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { resolveSaslPassword } from '../../src/kafka/config.ts';
import { parseKafkaSinkConfig } from '../../src/sinks/kafka/config.ts';
import { kafkaClientConfig } from '../../src/kafka/client-config.ts';

function issuesOf(input: unknown): readonly string[] {
  try {
    parseKafkaSinkConfig(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('parseKafkaSinkConfig', () => {
  it('fills every default from just the brokers', () => {
    const config = parseKafkaSinkConfig({ brokers: ['127.0.0.1:9092'] });
    expect(config).toMatchObject({
      clientId: 'trajwatch',
      topics: { findings: 'trajwatch.findings', alarms: 'trajwatch.alarms' },
      createTopics: false,
      compression: 'none',
      batchSize: 500,
      maxOutboxBytes: 256 * 1024 * 1024,
      maxOutboxRecords: 200_000,
      kafkajsLogLevel: 'nothing',
    });
    expect(config.sasl).toBeUndefined();
    expect(config.ssl).toBeUndefined();
  });

  it('collects every problem, naming the key and the bad value', () => {
    const issues = issuesOf({
      brokers: ['localhost'],
      topics: { findings: 'bad topic!' },
      batchSize: 0,
      extra: true,
    });
    expect(issues.some((i) => i.startsWith('brokers.0:') && i.includes('"localhost"'))).toBe(true);
    expect(issues.some((i) => i.startsWith('topics.findings:') && i.includes('"bad topic!"'))).toBe(true);
    expect(issues.some((i) => i.startsWith('batchSize:') && i.includes('0'))).toBe(true);
    expect(issues.some((i) => i.includes('extra'))).toBe(true);
  });

  it('rejects an inline SASL password and requires exactly one secret source', () => {
    expect(issuesOf({ brokers: ['h:1'], sasl: { mechanism: 'plain', username: 'u', password: 'secret' } }).join('\n')).toContain('password');
    expect(issuesOf({ brokers: ['h:1'], sasl: { mechanism: 'plain', username: 'u' } }).join('\n')).toContain('exactly one of passwordEnv or passwordFile');
    expect(
      issuesOf({
        brokers: ['h:1'],
        sasl: { mechanism: 'scram-sha-256', username: 'u', passwordEnv: 'A', passwordFile: '/x' },
      }).join('\n'),
    ).toContain('exactly one');
  });

  it('requires at least one broker', () => {
    expect(issuesOf({ brokers: [] })[0]).toMatch(/^brokers:/);
  });
});

describe('SASL and TLS options', () => {
  it('reads the SASL password from the named environment variable or file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-kafka-config-'));
    try {
      const file = join(dir, 'password');
      await writeFile(file, 'from-file\n');
      expect(resolveSaslPassword({ mechanism: 'plain', username: 'u', passwordFile: file })).toBe('from-file');
      expect(resolveSaslPassword({ mechanism: 'plain', username: 'u', passwordEnv: 'KAFKA_PW' }, { KAFKA_PW: 'from-env' })).toBe('from-env');
      expect(() => resolveSaslPassword({ mechanism: 'plain', username: 'u', passwordEnv: 'MISSING' }, {})).toThrow(ConfigError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('builds the kafkajs client options with the secret and PEM files read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-kafka-config-'));
    try {
      await writeFile(join(dir, 'ca.pem'), 'CA-PEM');
      const config = parseKafkaSinkConfig({
        brokers: ['kafka:9093'],
        sasl: { mechanism: 'scram-sha-512', username: 'svc', passwordEnv: 'PW' },
        ssl: { caFile: join(dir, 'ca.pem') },
      });
      const client = kafkaClientConfig(config, { PW: 's3cret' }, '');
      expect(client.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'svc', password: 's3cret' });
      expect(client.ssl).toEqual({ rejectUnauthorized: true, ca: ['CA-PEM'] });
      expect(() => kafkaClientConfig(parseKafkaSinkConfig({ brokers: ['k:1'], ssl: { certFile: join(dir, 'missing.pem') } }), {}, '')).toThrow(/ssl.certFile/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
