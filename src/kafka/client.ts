import { Kafka, type RetryOptions } from 'kafkajs';
import type { LevelLog } from '../telemetry/logger.ts';
import { kafkaClientConfig } from './client-config.ts';
import type { KafkaConnection } from './config.ts';

/** How a client is made: where secrets are looked up, the section errors name, its log, kafkajs's inner retries. */
export interface KafkaClientOptions {
  /** The config section, as errors name it: `source.kafka.`, `sinks.kafka.`. */
  keyPrefix: string;
  /** Where `sasl.passwordEnv` is looked up (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
  /** kafkajs's own lines, when `kafkajsLogLevel` asks for them. */
  log?: LevelLog | undefined;
  /** kafkajs's inner retries; absent, its defaults. */
  retry?: RetryOptions | undefined;
}

/**
 * The one way a kafkajs client is made, for the source, the sink, the repartition and `tail`:
 * the connection's options (SASL secret and TLS files read now, so a missing one fails at start).
 *
 * @example const kafka = kafkaClient(config.source.kafka, { keyPrefix: 'source.kafka.', log });
 */
export function kafkaClient(connection: KafkaConnection, options: KafkaClientOptions): Kafka {
  const client = kafkaClientConfig(connection, options.env ?? process.env, options.keyPrefix, options.log);
  return new Kafka(options.retry === undefined ? client : { ...client, retry: options.retry });
}
