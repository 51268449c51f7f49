import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { quietLogCreator } from '../../src/kafka/kafkajs-log.ts';
import { createLogger, levelLog } from '../../src/telemetry/logger.ts';

type Entry = Parameters<ReturnType<ReturnType<typeof quietLogCreator>>>[0];

function entry(level: logLevel, label: string, log: Record<string, unknown>): Entry {
  return { namespace: 'Connection', level, label, log: { timestamp: '2026-12-01T00:00:00Z', logger: 'kafkajs', message: 'connection error', ...log } };
}

describe("kafkajs's own log lines", () => {
  it('go to the component log at their level, named kafkajs.<namespace>, above the configured level only', () => {
    const seen: unknown[][] = [];
    const write = quietLogCreator('warn', (...args) => void seen.push(args))(logLevel.DEBUG);
    write(entry(logLevel.ERROR, 'ERROR', { broker: '127.0.0.1:9092' }));
    write(entry(logLevel.INFO, 'INFO', {}));
    expect(seen).toEqual([['error', 'connection error', { logger: 'kafkajs.Connection', broker: '127.0.0.1:9092' }]]);
  });

  it('are off at "nothing"', () => {
    const seen: unknown[] = [];
    quietLogCreator('nothing', (...args) => void seen.push(args))(logLevel.DEBUG)(entry(logLevel.ERROR, 'ERROR', {}));
    expect(seen).toEqual([]);
  });

  it('pass through the redacting logger: a SASL password in a kafkajs line never reaches the output', () => {
    const raw: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void raw.push(line) } });
    const write = quietLogCreator('error', levelLog(logger))(logLevel.DEBUG);
    write(entry(logLevel.ERROR, 'ERROR', { sasl: { mechanism: 'scram-sha-512', username: 'tw', password: 'sasl-pw-Q9x!r2Lk' } }));
    expect(raw).toHaveLength(1);
    expect(raw[0]).toContain('kafkajs.Connection');
    expect(raw[0]).not.toContain('sasl-pw-Q9x!r2Lk');
  });
});
