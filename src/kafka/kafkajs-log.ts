import { logLevel } from 'kafkajs';
import type { logCreator } from 'kafkajs';
import { type LevelLog, stderrLog } from '../telemetry/logger.ts';
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

/** kafkajs's levels as the logger's (DEBUG lines, written only when asked for, as info). */
const AS_LOG: Record<logLevel, 'info' | 'warn' | 'error'> = {
  [logLevel.NOTHING]: 'info',
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'info',
};

/**
 * kafkajs logs every failed connection attempt at ERROR, which during a broker outage is one
 * line per retry. The source and the sink report the first failure and the recovery itself, so
 * kafkajs's own lines are off unless asked for, and then go to `log` (the component's logger:
 * JSON lines, secrets redacted) with `logger: kafkajs.<namespace>`; without one (library use),
 * to {@link stderrLog}.
 */
export function quietLogCreator(level: KafkaLogLevel, log: LevelLog = stderrLog('kafkajs')): logCreator {
  const threshold = LEVELS[level];
  return () =>
    ({ namespace, level: entryLevel, log: entry }) => {
      if (threshold === logLevel.NOTHING || entryLevel > threshold) return;
      const { message, timestamp: _timestamp, logger: _logger, ...context } = entry;
      log(AS_LOG[entryLevel], message, { logger: `kafkajs.${namespace}`, ...context });
    };
}
