import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

// A bad broker value makes serve stop at validation: the error names the key the name set, and where it came from.
const BAD = 'no-port';
const env = (extra: Record<string, string>) => {
  const { TRAJWATCH_KAFKA_BROKERS: _a, TRAJWATCH_SINK_KAFKA_BROKERS: _b, TRAJWATCH_SOURCE_KAFKA_BROKERS: _c, ...rest } = process.env;
  return { env: { ...rest, ...extra } };
};
const serve = async (args: string[], extra: Record<string, string> = {}) =>
  runCli(['serve', '--data-dir', await mkdtemp(join(tmpdir(), 'trajwatch-names-')), ...args], 30_000, env(extra));
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('trajwatch: warning:'));

describe('the Kafka broker names say which side they set', () => {
  it('TRAJWATCH_SINK_KAFKA_BROKERS sets the sink, TRAJWATCH_SOURCE_KAFKA_BROKERS the source, no warning', async () => {
    const sink = await serve([], { TRAJWATCH_SINK_KAFKA_BROKERS: BAD });
    expect(sink.stderr).toMatch(/sinks\.kafka\.brokers\.0 \(from env TRAJWATCH_SINK_KAFKA_BROKERS\): expected HOST:PORT/);
    const source = await serve([], { TRAJWATCH_SOURCE_KAFKA_BROKERS: BAD });
    expect(source.stderr).toMatch(/source\.kafka\.brokers\.0 \(from env TRAJWATCH_SOURCE_KAFKA_BROKERS\): expected HOST:PORT/);
    expect([...warnings(sink.stderr), ...warnings(source.stderr)]).toEqual([]);
    expect([sink.code, source.code]).toEqual([1, 1]);
  });

  it('TRAJWATCH_KAFKA_BROKERS still sets the sink, with one warning naming TRAJWATCH_SINK_KAFKA_BROKERS', async () => {
    const { code, stderr } = await serve([], { TRAJWATCH_KAFKA_BROKERS: BAD });
    expect(warnings(stderr)).toEqual([
      'trajwatch: warning: the variable TRAJWATCH_KAFKA_BROKERS is deprecated: use TRAJWATCH_SINK_KAFKA_BROKERS (the old name still works)',
    ]);
    expect(stderr).toMatch(/sinks\.kafka\.brokers\.0 \(from env TRAJWATCH_KAFKA_BROKERS\): expected HOST:PORT/);
    expect(code).toBe(1);
  });

  it('the new variable wins over the old one when both are set', async () => {
    const { stderr } = await serve([], { TRAJWATCH_KAFKA_BROKERS: '127.0.0.1:9092', TRAJWATCH_SINK_KAFKA_BROKERS: BAD });
    expect(warnings(stderr)).toHaveLength(1);
    expect(stderr).toMatch(/sinks\.kafka\.brokers\.0 \(from env TRAJWATCH_SINK_KAFKA_BROKERS\)/);
  });

  it('--source-kafka-brokers sets the source; --kafka-brokers still does, with one warning naming --source-kafka-brokers', async () => {
    const current = await serve(['--source-kafka-brokers', BAD]);
    expect(current.stderr).toMatch(/source\.kafka\.brokers\.0 \(from --source-kafka-brokers\): expected HOST:PORT/);
    expect(warnings(current.stderr)).toEqual([]);
    const old = await serve(['--kafka-brokers', BAD]);
    expect(warnings(old.stderr)).toEqual(['trajwatch: warning: the flag --kafka-brokers is deprecated: use --source-kafka-brokers (the old name still works)']);
    expect(old.stderr).toMatch(/source\.kafka\.brokers\.0 \(from --kafka-brokers\): expected HOST:PORT/);
    expect([current.code, old.code]).toEqual([1, 1]);
  });
});
