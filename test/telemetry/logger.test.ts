import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { applyEnv } from '../../src/config/load.ts';
import { validateConfig } from '../../src/config-schema.ts';
import { redactSecrets, SECRET_KEYS } from '../../src/core/redact.ts';
import { createLogger, type LogLevel, REDACTED } from '../../src/telemetry/logger.ts';

/** A logger writing into an array of parsed lines. */
function capture(level: LogLevel = 'info') {
  const raw: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void raw.push(line) } });
  return { logger, raw, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

// Credentials as they would reach a log line: a receiver token, a SASL password, a TLS key.
const TOKEN = 'tw-token-5f1c9a0e77d24b13';
const SASL_PASSWORD = 'sasl-pw-Q9x!r2Lk';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';

describe('the logger', () => {
  it('writes one JSON object per line: level by name, ISO time, the message, then the context', () => {
    const { logger, raw, lines } = capture();
    logger.child({ component: 'receiver.http' }).warn({ reason: 'wal-full' }, 'refusing OTLP requests: wal-full');
    expect(raw).toHaveLength(1);
    expect(raw[0]!.endsWith('\n')).toBe(true);
    const [line] = lines();
    expect(line).toMatchObject({ level: 'warn', component: 'receiver.http', reason: 'wal-full', msg: 'refusing OTLP requests: wal-full' });
    expect(new Date(line!['time'] as string).toISOString()).toBe(line!['time']);
    // No pid or hostname: the orchestrator adds where a line came from.
    expect(line).not.toHaveProperty('pid');
  });

  it('writes nothing below its level', () => {
    const { logger, raw } = capture('warn');
    logger.info('not written');
    logger.debug('not written');
    logger.error('written');
    expect(raw).toHaveLength(1);
  });

  it('redacts credentials in the context at any depth, in child bindings, in the message and in errors', () => {
    const { logger, raw } = capture('trace');
    const child = logger.child({ component: 'sinks.kafka', sasl: { mechanism: 'scram-sha-512', username: 'tw', password: SASL_PASSWORD } });
    child.info({ request: { headers: { authorization: `Bearer ${TOKEN}`, 'x-api-key': TOKEN } } }, 'request');
    child.warn({ tls: { key: PEM, keyFile: '/etc/tw/key.pem' }, brokers: [`sasl://tw:${SASL_PASSWORD}@broker:9093`] }, 'tls');
    child.error({ err: new Error(`connect failed with Bearer ${TOKEN}`, { cause: new Error(`key ${PEM}`) }) }, 'failed');
    child.info(`token was Bearer ${TOKEN}`);
    const text = raw.join('');
    for (const secret of [TOKEN, SASL_PASSWORD, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC']) expect(text).not.toContain(secret);
    expect(text).toContain(REDACTED);
    // Where a secret comes from is not a secret, and is what an operator needs.
    expect(text).toContain('/etc/tw/key.pem');
    expect(text).toContain('"username":"tw"');
  });

  it("redacts every secret the judge's rules redact: under each secret key, and in free text", () => {
    const { logger, raw } = capture();
    const value = 'Zq7-plain-secret-value-0042';
    const context = Object.fromEntries(SECRET_KEYS.map((k, i) => [k.words.join('_'), `${value}${i}`]));
    logger.info({ nested: { context } }, 'keys');
    const inText = [
      ...SECRET_KEYS.filter((k) => k.text === 'credential').map((k) => `${k.words.join('_')}=${value}`),
      'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'sk-proj-AbCdEf0123456789GhIjKlMn AKIAIOSFODNN7EXAMPLE ghp_0123456789abcdefghijABCDEFGHIJ012345',
      'xoxb-0123456789-abcdef AIzaSyA0123456789abcdefghijklmnopqrstu',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r4wW',
    ];
    for (const text of inText) {
      // The judge's rules catch it...
      expect(redactSecrets(text).count, text).toBeGreaterThan(0);
      // ...and so does the log, in the message and in a context string.
      logger.warn({ detail: text }, `failed: ${text}`);
    }
    const written = raw.join('');
    expect(written).not.toContain(value);
    for (const secret of ['wJalrXUtnFEMI', 'sk-proj-AbCdEf', 'AKIAIOSFODNN7EXAMPLE', 'ghp_0123', 'xoxb-0123', 'AIzaSyA0', 'eyJhbGciOiJIUzI1NiJ9.eyJ']) {
      expect(written, secret).not.toContain(secret);
    }
    expect(written).toContain(`password=${REDACTED}`);
  });

  it("writes a part's default log (no topology) as the house JSON lines on stderr, redacted", () => {
    // A child process: the logger writes to file descriptor 2 itself, synchronously.
    const script = `import { stderrLog } from ${JSON.stringify(new URL('../../src/telemetry/logger.ts', import.meta.url).href)};
stderrLog('sinks.kafka')('warn', 'delivery failing', { brokers: ['sasl://u:pw-9f3e1@b:9093'] });`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const lines = [run.stderr];
    const line = JSON.parse(lines.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', component: 'sinks.kafka', msg: 'delivery failing' });
    expect(JSON.stringify(line)).not.toContain('pw-9f3e1');
  });

  it('keeps counts whose names only resemble credentials (tokens, keyFile) readable', () => {
    const { logger, lines } = capture();
    logger.info({ tokens: { prompt: 900, completion: 60 }, passwordEnv: 'KAFKA_PASSWORD' }, 'spent');
    expect(lines()[0]).toMatchObject({ tokens: { prompt: 900, completion: 60 }, passwordEnv: 'KAFKA_PASSWORD' });
  });

  it('writes an error with its type, message, stack and cause', () => {
    const { logger, lines } = capture();
    logger.error({ err: new TypeError('bad', { cause: new Error('root') }) }, 'failed');
    const err = lines()[0]!['err'] as Record<string, unknown>;
    expect(err).toMatchObject({ type: 'TypeError', message: 'bad', cause: { type: 'Error', message: 'root' } });
    expect(err['stack']).toMatch(/TypeError: bad/);
  });
});

describe('the log level', () => {
  it('comes from log.level, overridden by TRAJWATCH_LOG_LEVEL, and defaults to info', () => {
    expect(validateConfig({ value: {}, source: 't' }).log.level).toBe('info');
    const raw = { log: { level: 'warn' } };
    applyEnv(raw, { TRAJWATCH_LOG_LEVEL: 'debug' });
    expect(validateConfig({ value: raw, source: 't' }).log.level).toBe('debug');
  });

  it('is validated: an unknown level is a configuration error naming the key and the value', () => {
    const raw = {};
    applyEnv(raw, { TRAJWATCH_LOG_LEVEL: 'verbose' });
    expect(() => validateConfig({ value: raw, source: 't' })).toThrow(ConfigError);
    expect(() => validateConfig({ value: raw, source: 't' })).toThrow(/log\.level.*verbose|verbose.*log\.level/s);
    expect(() => validateConfig({ value: { log: { level: 'info', colour: true } }, source: 't' })).toThrow(/colour/);
  });
});
