import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { z } from 'zod';

/** Levels from the loudest to the quietest; `silent` writes nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The `log` section of the configuration (`TRAJWATCH_LOG_LEVEL` overrides `log.level`). */
export const LogConfigSchema = z
  .object({
    /** The quietest level written; below it a log call costs one comparison. */
    level: z.enum(LOG_LEVELS).default('info'),
  })
  .strict();
export type LogConfig = z.infer<typeof LogConfigSchema>;

/** A component's logger: JSON lines with its `component` name on each. */
export type Logger = PinoLogger;

/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

/**
 * Keys whose value is a credential wherever they appear (compared lowercased, without `-`/`_`).
 * Names of where a secret comes from (`tokenEnv`, `passwordFile`, `keyFile`) are not secrets
 * and stay readable: they are what an operator needs to fix a configuration.
 */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'password',
  'passwd',
  'passphrase',
  'secret',
  'clientsecret',
  'token',
  'accesstoken',
  'refreshtoken',
  'authtoken',
  'bearer',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'apikey',
  'xapikey',
  'key',
  'privatekey',
  'oauthbearer',
  'sessiontoken',
]);

// A PEM private key anywhere in a string, and the credential after `Bearer`/`Basic`.
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const AUTH_SCHEME = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi;
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*:)[^\s@/"']+@/gi;

/** Deep enough for any context object trajwatch logs; deeper values are cut, never printed raw. */
const MAX_DEPTH = 8;

const isSecretKey = (key: string): boolean => SECRET_KEYS.has(key.toLowerCase().replace(/[-_]/g, ''));

/** A string with embedded credentials (PEM keys, `Bearer x`, `scheme://user:pw@`) replaced. */
export function redactText(text: string): string {
  if (!text.includes('-----BEGIN') && !/bearer|basic|:\/\//i.test(text)) return text;
  return text
    .replace(PEM_PRIVATE_KEY, REDACTED)
    .replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`);
}

/**
 * A copy of `value` with every credential replaced by {@link REDACTED}: values under
 * {@link SECRET_KEYS} at any depth, and credentials embedded in strings. Errors keep their
 * type, message and stack (redacted as text).
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[depth]';
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  if (value instanceof Error) {
    out['type'] = value.name;
    out['message'] = redactText(value.message);
    if (value.stack !== undefined) out['stack'] = redactText(value.stack);
    if (value.cause !== undefined) out['cause'] = redact(value.cause, depth + 1);
  }
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : redact(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  level: LogLevel;
  /**
   * Where lines go: `stdout` (default) or `stderr`, written synchronously (lines are rare,
   * and none is lost at exit), or a stream (tests).
   */
  destination?: DestinationStream | 'stdout' | 'stderr';
}

/**
 * The process's one logger: JSON lines (`level` as a name, ISO `time`, `msg`, then context),
 * credentials redacted from the context and the message. Components take a child
 * (`logger.child({ component: 'receiver.http' })`); nothing else in `src/` writes log lines.
 *
 * @example
 * const logger = createLogger({ level: config.log.level });
 * logger.child({ component: 'sinks.kafka' }).warn({ reason }, 'kafka delivery failing');
 */
export function createLogger(options: LoggerOptions): Logger {
  const root = pino(
    {
      level: options.level,
      base: undefined,
      // `redact` below writes errors (type, message, stack, cause) itself, wherever they sit.
      serializers: { err: (err: unknown) => err },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        bindings: (bindings) => redact(bindings) as Record<string, unknown>,
        log: (object) => redact(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          // The message (and printf arguments) are redacted like the context.
          const clean = args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as typeof args;
          method.apply(this, clean);
        },
      },
    },
    typeof options.destination === 'object' ? options.destination : pino.destination({ fd: options.destination === 'stderr' ? 2 : 1, sync: true }),
  );
  // pino formats a child's bindings without the bindings formatter; every child (and its
  // children, which inherit this) redacts them here instead.
  const child = root.child;
  root.child = function redactedChild(this: Logger, bindings, childOptions) {
    return child.call(this, redact(bindings) as typeof bindings, childOptions);
  } as typeof root.child;
  return root;
}

/** A logger that writes nothing (tests, library use): every call is one level comparison. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** The `(level, message, context)` callback the Kafka source and sink take, writing to `logger`. */
export type LevelLog = (level: 'info' | 'warn' | 'error', message: string, context?: Record<string, unknown>) => void;

/** A {@link LevelLog} over `logger`. */
export function levelLog(logger: Logger): LevelLog {
  return (level, message, context = {}) => logger[level](context, message);
}
