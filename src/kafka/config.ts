import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseHostPort } from '../config/host-port.ts';
import { ConfigError } from '../errors.ts';

const KafkaBrokerSchema = z.string().refine((v) => parseHostPort(v) !== undefined, {
  message: 'expected HOST:PORT with a port from 0 to 65535',
});

/** A topic name the broker accepts. */
export const KafkaTopicNameSchema = z.string().regex(/^[a-zA-Z0-9._-]{1,249}$/, 'a Kafka topic name: 1 to 249 of [a-zA-Z0-9._-]');

/** SASL credentials: the secret is named by an environment variable or a file, never inline. */
const KafkaSaslSchema = z
  .strictObject({
    mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
    username: z.string().min(1),
    passwordEnv: z.string().min(1).optional(),
    passwordFile: z.string().min(1).optional(),
  })
  .refine((s) => (s.passwordEnv === undefined) !== (s.passwordFile === undefined), {
    message: 'set exactly one of passwordEnv or passwordFile',
  });

/** TLS: PEM file paths; `{}` alone means TLS with the system's trusted CAs. */
const KafkaSslSchema = z.strictObject({
  caFile: z.string().min(1).optional(),
  certFile: z.string().min(1).optional(),
  keyFile: z.string().min(1).optional(),
  rejectUnauthorized: z.boolean().default(true),
});

/**
 * How to reach a cluster: brokers, client id, SASL, TLS, timeouts and kafkajs's own log level.
 * The Kafka source and the Kafka sink each `.extend()` it with their own keys, so the two
 * sections accept the same connection keys with the same defaults and the same errors.
 */
export const KafkaConnectionSchema = z.strictObject({
  brokers: z.array(KafkaBrokerSchema).min(1),
  clientId: z.string().min(1).default('trajwatch'),
  sasl: KafkaSaslSchema.optional(),
  ssl: KafkaSslSchema.optional(),
  connectionTimeoutMs: z.number().int().min(1).default(3_000),
  requestTimeoutMs: z.number().int().min(1).default(30_000),
  /** kafkajs's own log lines, forwarded to stderr at or above this level ('nothing' by default). */
  kafkajsLogLevel: z.enum(['nothing', 'error', 'warn', 'info', 'debug']).default('nothing'),
});

/** The connection settings the Kafka sink and the Kafka source share. */
export type KafkaConnection = z.infer<typeof KafkaConnectionSchema>;
export type KafkaSasl = NonNullable<KafkaConnection['sasl']>;
export type KafkaLogLevel = KafkaConnection['kafkajsLogLevel'];

/**
 * The SASL password from the named environment variable or file (trailing newline trimmed).
 * `keyPrefix` names the config section in errors (`source.kafka.`), as `kafkaClientConfig` does.
 */
export function resolveSaslPassword(sasl: KafkaSasl, env: NodeJS.ProcessEnv = process.env, keyPrefix = ''): string {
  if (sasl.passwordEnv !== undefined) {
    const value = env[sasl.passwordEnv];
    if (value === undefined || value === '') {
      throw new ConfigError([`${keyPrefix}sasl.passwordEnv: environment variable ${sasl.passwordEnv} is not set`], 'kafka');
    }
    return value;
  }
  try {
    return readFileSync(sasl.passwordFile!, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError([`${keyPrefix}sasl.passwordFile: cannot read ${sasl.passwordFile}: ${(err as Error).message}`], 'kafka');
  }
}
