import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/config/load.ts';
import { validateConfig } from '../../src/config-schema.ts';
import { ConfigError } from '../../src/errors.ts';

async function yamlFile(content: string) {
  const path = join(await mkdtemp(join(tmpdir(), 'trajwatch-deprecated-')), 'c.yaml');
  await writeFile(path, content);
  return readConfigFile(path);
}

describe('sections that moved under sinks, at their old top-level keys', () => {
  it('are read as sinks.kafka and sinks.otlpEvaluations, with one warning each naming the new key', async () => {
    const notes: string[] = [];
    const raw = { value: { kafka: { brokers: ['127.0.0.1:9092'] }, otlpEvaluations: {} }, source: 'test' };
    const config = validateConfig(raw, (n) => notes.push(n));
    expect(config.sinks.kafka?.brokers).toEqual(['127.0.0.1:9092']);
    expect(config.sinks.otlpEvaluations?.endpoint).toBe('http://127.0.0.1:4318/v1/logs');
    expect(config).not.toHaveProperty('kafka');
    expect(notes).toEqual([
      'the key kafka is deprecated: use sinks.kafka (the old name still works)',
      'the key otlpEvaluations is deprecated: use sinks.otlpEvaluations (the old name still works)',
    ]);
    expect(raw.value).toHaveProperty('kafka');
  });

  it("give the same configuration as the new keys, and an error there names the old key's line", async () => {
    const quiet = () => {};
    expect(validateConfig({ value: { kafka: { brokers: ['h:1'] } }, source: 't' }, quiet)).toEqual(
      validateConfig({ value: { sinks: { kafka: { brokers: ['h:1'] } } }, source: 't' }, quiet),
    );
    const raw = await yamlFile('log: { level: info }\nkafka:\n  brokers: []\n');
    expect(() => validateConfig(raw, quiet)).toThrow('sinks.kafka.brokers: Too small: expected array to have >=1 items (value: []) (line 3)');
  });

  it('are refused when set together with the new key', () => {
    const both = { value: { kafka: { brokers: ['h:1'] }, sinks: { kafka: { brokers: ['h:2'] } } }, source: 't' };
    expect(() => validateConfig(both, () => {})).toThrow(ConfigError);
    expect(() => validateConfig(both, () => {})).toThrow('kafka: set together with sinks.kafka; keep sinks.kafka only');
  });
});
