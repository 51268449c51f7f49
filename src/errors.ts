/**
 * The one error module. Every error says whether retrying can help, keeps its cause and
 * carries context. Match with `instanceof`, never by name strings.
 */
export class TrajwatchError extends Error {
  readonly retriable: boolean;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(message: string, options: { retriable?: boolean; cause?: unknown; context?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retriable = options.retriable ?? false;
    this.context = options.context ?? {};
  }
}

/** The configuration is invalid; `issues` lists every problem, each naming its key and value. */
export class ConfigError extends TrajwatchError {
  readonly issues: readonly string[];
  constructor(issues: readonly string[], source: string) {
    super(`invalid configuration in ${source}:\n  - ${issues.join('\n  - ')}`, { context: { source } });
    this.issues = issues;
  }
}

/** The command line is wrong (a flag without its value, a value out of range): exit 2, with the command's --help named. */
export class UsageError extends TrajwatchError {}

/** A request body or recorded file could not be decoded as OTLP. Never retriable. */
export class DecodeError extends TrajwatchError {}

/** Input exceeded a named bound (body bytes, decompressed bytes, nesting depth...). */
export class LimitError extends TrajwatchError {
  readonly limit: string;
  constructor(limit: string, message: string, context: Record<string, unknown> = {}) {
    super(message, { context: { ...context, limit } });
    this.limit = limit;
  }
}

/** Durable state (log, outbox, ledger) could not be read or written. */
export class StorageError extends TrajwatchError {}

/** A remote dependency (broker, judge endpoint) failed; usually retriable. */
export class UpstreamError extends TrajwatchError {}
