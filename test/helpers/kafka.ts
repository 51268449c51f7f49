import { execFile, execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka } from 'kafkajs';
import type { IHeaders } from 'kafkajs';
import { parseHostPort } from '../../src/config/host-port.ts';
import { quietLogCreator, kafkajsLogLevel } from '../../src/kafka/kafkajs-log.ts';

/** `HOST:PORT[,HOST:PORT...]` of the shared test broker that `.ci/run` starts. */
export const KAFKA_ENV = 'TRAJWATCH_TEST_KAFKA';

const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BROKER_SCRIPT = join(REPO_DIR, 'scripts/setup/kafka/broker.sh');
const SCRIPT_TIMEOUT_MS = 180_000;

/** The brokers named by `TRAJWATCH_TEST_KAFKA`, or undefined when it is not set. */
export function kafkaBrokers(): string[] | undefined {
  const value = process.env[KAFKA_ENV]?.trim();
  if (value === undefined || value === '') return undefined;
  return value.split(',').map((b) => b.trim());
}

const inCi = (): boolean => process.env.CI === 'true';

/**
 * The shared broker for integration tests, or undefined (with the reason printed) when tests
 * may skip: only outside CI and only when Java is missing. In CI a missing or unreachable
 * broker throws, so the run fails loudly. Outside CI with Java and no `TRAJWATCH_TEST_KAFKA`,
 * the broker is started with `scripts/setup/kafka/broker.sh start` (idempotent).
 */
export async function kafkaForTests(): Promise<string[] | undefined> {
  let brokers = kafkaBrokers();
  if (brokers === undefined) {
    if (inCi()) {
      throw new Error(`${KAFKA_ENV} is not set: .ci/run must start scripts/setup/kafka/broker.sh and export it`);
    }
    const reason = missingJava();
    if (reason !== undefined) return skipWith(reason);
    await runBrokerScript('start', {});
    brokers = ['127.0.0.1:19092'];
  }
  const unreachable = await firstUnreachable(brokers);
  if (unreachable !== undefined) {
    const message = `Kafka broker ${unreachable} (from ${KAFKA_ENV}) is not reachable`;
    if (inCi()) throw new Error(message);
    return skipWith(message);
  }
  return brokers;
}

/** A broker of a test's own (its own port and data directory), for tests that stop it. */
export interface TestBroker {
  port: number;
  dir: string;
  brokers: string[];
  /** With a SASL_SSL listener (`TRAJWATCH_KAFKA_SASL_SSL_PORT`): where, and what a client needs. */
  saslSsl?: { brokers: string[]; username: string; passwordFile: string; caFile: string };
}

/**
 * A private broker on `port` (controller on port + 1) with its data under
 * `.cache/kafka/<name>`, or undefined (reason printed) outside CI without Java. Not started.
 */
export function privateBroker(name: string, port: number): TestBroker | undefined {
  const reason = missingJava();
  if (reason !== undefined) {
    if (inCi()) throw new Error(`cannot run a private Kafka broker in CI: ${reason}`);
    return skipWith(reason);
  }
  return { port, dir: join(REPO_DIR, '.cache/kafka', name), brokers: [`127.0.0.1:${port}`] };
}

/**
 * A private broker with a second listener on `saslSslPort` speaking SASL_SSL (TLS with a
 * keytool-made certificate for 127.0.0.1, SCRAM-SHA-512 user `trajwatch`); its secrets are made
 * by `scripts/setup/kafka/broker.sh` under `.cache/kafka/<name>/secured/` on the first start.
 */
export function securedBroker(name: string, port: number, saslSslPort: number): TestBroker | undefined {
  const broker = privateBroker(name, port);
  if (broker === undefined) return undefined;
  const secured = join(broker.dir, 'secured');
  return {
    ...broker,
    saslSsl: {
      brokers: [`127.0.0.1:${saslSslPort}`],
      username: 'trajwatch',
      passwordFile: join(secured, 'sasl-password'),
      caFile: join(secured, 'ca.pem'),
    },
  };
}

/** `scripts/setup/kafka/broker.sh start` for `broker`: returns once it answers metadata requests. */
export async function startBroker(broker: TestBroker): Promise<void> {
  await runBrokerScript('start', brokerEnv(broker));
}

/** `scripts/setup/kafka/broker.sh stop` for `broker`: returns once the process has exited. */
export async function stopBroker(broker: TestBroker): Promise<void> {
  await runBrokerScript('stop', brokerEnv(broker));
}

function brokerEnv(broker: TestBroker): Record<string, string> {
  const env: Record<string, string> = { TRAJWATCH_KAFKA_PORT: String(broker.port), TRAJWATCH_KAFKA_DIR: broker.dir };
  if (broker.saslSsl !== undefined) env.TRAJWATCH_KAFKA_SASL_SSL_PORT = parseHostPort(broker.saslSsl.brokers[0]!)!.port.toString();
  return env;
}

function runBrokerScript(command: 'start' | 'stop', env: Record<string, string>): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'bash',
      [BROKER_SCRIPT, command],
      { env: { ...process.env, ...env }, timeout: SCRIPT_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (err === null) resolvePromise();
        else reject(new Error(`scripts/setup/kafka/broker.sh ${command} failed: ${err.message}\n${stderr}`));
      },
    );
  });
}

function missingJava(): string | undefined {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'java is not installed, so no Kafka broker can run here (CI fails instead of skipping)';
  }
}

function skipWith(reason: string): undefined {
  process.stderr.write(`[kafka integration tests skipped] ${reason}\n`);
  return undefined;
}

async function firstUnreachable(brokers: readonly string[]): Promise<string | undefined> {
  for (const broker of brokers) {
    const hp = parseHostPort(broker);
    if (hp === undefined || !(await tcpReachable(hp.host, hp.port))) return broker;
  }
  return undefined;
}

function tcpReachable(host: string, port: number, timeoutMs = 3_000): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export interface ConsumedMessage {
  topic: string;
  partition: number;
  key: string | undefined;
  value: string;
  headers: Record<string, string>;
}

/** A kafkajs client for a test's own admin, producer or consumer, its log silenced. */
export function quietKafka(clientId: string, brokers: string[] | undefined): Kafka {
  return new Kafka({ clientId, brokers: brokers ?? [], logLevel: kafkajsLogLevel('nothing'), logCreator: quietLogCreator('nothing') });
}

/** A topic name no other test run uses. */
export function uniqueTopic(prefix: string): string {
  return `${prefix}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Reads `topics` from the beginning with a real kafkajs consumer until `until` messages have
 * arrived or `until(messages)` holds (or `timeoutMs` passed: then it returns what it has,
 * for the test's assertions to report).
 */
export async function consumeMessages(
  brokers: string[],
  topics: string[],
  until: number | ((messages: readonly ConsumedMessage[]) => boolean),
  timeoutMs = 45_000,
): Promise<ConsumedMessage[]> {
  const done = typeof until === 'number' ? (m: readonly ConsumedMessage[]) => m.length >= until : until;
  const kafka = new Kafka({
    clientId: 'trajwatch-test-consumer',
    brokers,
    logLevel: kafkajsLogLevel('nothing'),
    logCreator: quietLogCreator('nothing'),
  });
  const consumer = kafka.consumer({ groupId: uniqueTopic('trajwatch-test'), sessionTimeout: 10_000 });
  const messages: ConsumedMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await new Promise<void>((resolvePromise) => {
      const timer = setTimeout(resolvePromise, timeoutMs);
      void consumer.run({
        eachMessage: async ({ topic, partition, message }) => {
          messages.push({
            topic,
            partition,
            key: message.key?.toString(),
            value: message.value?.toString() ?? '',
            headers: headerStrings(message.headers),
          });
          if (done(messages)) {
            clearTimeout(timer);
            resolvePromise();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

function headerStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(',') : value.toString();
  }
  return out;
}
