import { logLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import type { KafkaLogLevel } from './config.ts';

const LEVELS: Record<KafkaLogLevel, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/** The kafkajs client log level matching the configured one (kafkajs skips lines above it). */
export function kafkajsLogLevel(level: KafkaLogLevel): logLevel {
  return LEVELS[level];
}

/**
 * kafkajs logs every failed connection attempt at ERROR, which during a broker outage is one
 * line per retry. The source and the sink report the first failure and the recovery itself, so kafkajs's
 * own lines are off unless asked for, and then written as one JSON line each to `write`.
 */
export function quietLogCreator(
  level: KafkaLogLevel,
  write: (line: string) => void = (line) => process.stderr.write(line),
): logCreator {
  const threshold = LEVELS[level];
  return () =>
    ({ namespace, level: entryLevel, label, log }) => {
      if (threshold === logLevel.NOTHING || entryLevel > threshold) return;
      const { message, timestamp: _timestamp, logger: _logger, ...context } = log;
      write(JSON.stringify({ level: label.toLowerCase(), logger: `kafkajs.${namespace}`, message, ...context }) + '\n');
    };
}
