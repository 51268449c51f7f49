import { readFileSync } from 'node:fs';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { ConfigError } from '../errors.ts';
import type { LevelLog } from '../telemetry/logger.ts';
import { type KafkaConnection, resolveSaslPassword } from './config.ts';
import { kafkajsLogLevel, quietLogCreator } from './kafkajs-log.ts';

/**
 * The kafkajs client options for a connection; reads the SASL secret and the TLS files now,
 * so a missing one fails at start. Used by the source, the sink and `tail` alike. `keyPrefix` names the config section in errors;
 * kafkajs's own lines (when `kafkajsLogLevel` asks for them) go to `log`.
 */
export function kafkaClientConfig(config: KafkaConnection, env: NodeJS.ProcessEnv, keyPrefix: string, log?: LevelLog): KafkaConfig {
  const client: KafkaConfig = {
    clientId: config.clientId,
    brokers: config.brokers,
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    logLevel: kafkajsLogLevel(config.kafkajsLogLevel),
    logCreator: quietLogCreator(config.kafkajsLogLevel, log),
  };
  if (config.sasl !== undefined) {
    const { mechanism, username } = config.sasl;
    client.sasl = { mechanism, username, password: resolveSaslPassword(config.sasl, env, keyPrefix) } as SASLOptions;
  }
  if (config.ssl !== undefined) {
    const { caFile, certFile, keyFile, rejectUnauthorized } = config.ssl;
    const pem = (path: string, key: string): string => {
      try {
        return readFileSync(path, 'utf8');
      } catch (err) {
        throw new ConfigError([`${keyPrefix}ssl.${key}: cannot read ${path}: ${(err as Error).message}`], 'kafka');
      }
    };
    client.ssl = {
      rejectUnauthorized,
      ...(caFile === undefined ? {} : { ca: [pem(caFile, 'caFile')] }),
      ...(certFile === undefined ? {} : { cert: pem(certFile, 'certFile') }),
      ...(keyFile === undefined ? {} : { key: pem(keyFile, 'keyFile') }),
    };
  }
  return client;
}
