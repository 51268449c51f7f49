import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { z } from 'zod';
import { isSecretKey, redactSecrets } from '../core/redact.ts';

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

/** Deep enough for any context object trajwatch logs; deeper values are cut, never printed raw. */
const MAX_DEPTH = 8;

/**
 * A string with every credential the house rules recognize (`core/redact.ts`: PEM keys,
 * `Bearer x`, `scheme://user:pw@`, `password=...`, API keys and tokens) replaced by
 * {@link REDACTED}: the rules the judge's windows go through, so a log line keeps no secret a
 * window would not.
 */
export function redactText(text: string): string {
  return redactSecrets(text, () => REDACTED).text;
}

/**
 * A copy of `value` with every credential replaced by {@link REDACTED}: values under a secret
 * key (`SECRET_KEYS` in `core/redact.ts`) at any depth, and credentials embedded in strings.
 * Errors keep their type, message and stack (redacted as text).
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

/** The levels a {@link LevelLog} writes at. */
export type LevelLogLevel = 'info' | 'warn' | 'error';

/**
 * The one log callback of the parts built without a {@link Logger} of their own (the Kafka
 * source and sink, the OTLP evaluation sink, the repartition forwarder, the audience
 * refusals, kafkajs's log creator): `(level, message, context)`. The topology hands each a
 * {@link levelLog} over its component's logger; alone (library use, tests) they default to
 * {@link stderrLog}.
 */
export type LevelLog = (level: LevelLogLevel, message: string, context?: Record<string, unknown>) => void;

/** A {@link LevelLog} over `logger`. */
export function levelLog(logger: Logger): LevelLog {
  return (level, message, context = {}) => logger[level](context, message);
}

let stderrRoot: Logger | undefined;

/**
 * The default {@link LevelLog} of a part used without the topology: the house logger's JSON
 * lines (redacted) on stderr, with `component` on each.
 */
export function stderrLog(component: string): LevelLog {
  stderrRoot ??= createLogger({ level: 'info', destination: 'stderr' });
  return levelLog(stderrRoot.child({ component }));
}
