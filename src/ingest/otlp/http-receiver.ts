import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { DecodeError, LimitError, TrajwatchError } from '../../errors.ts';
import { createAuthCheck } from './auth.ts';
import { readBody } from './body.ts';
import { capConnections, closeIdleAfterPendingReads, type ConnectionObserver, httpServerOptions } from './connection-limits.ts';
import { exportStatus, type ExportOutcome } from './export-status.ts';
import { INFLIGHT_REFUSAL, InflightBudget, type InflightCharge } from './inflight-budget.ts';
import { decodeOtlpJson } from './json-decode.ts';
import { decodeOtlpLogsJson } from './json-logs-decode.ts';
import { decodeOtlpLogsProto } from './proto-logs-decode.ts';
import { decodeOtlpProto } from './proto-decode.ts';
import {
  exportResponse,
  JSON_TYPE,
  type PartialSuccess,
  PROTOBUF,
  RPC_CODE,
  rpcStatus,
  type ResponseFormat,
  type Signal,
} from './response.ts';
import type { Logger } from '../../telemetry/logger.ts';
import type { ReceiverConfig } from './receiver-config.ts';
import { readTlsFiles } from './tls-files.ts';
import type { DecodedLogsRequest } from '../log-record.ts';
import type { LogsAccepted, PipelineInput } from '../pipeline-input.ts';
import type { DecodedRequest } from '../span.ts';

/** The refusal reason of a rejected `acceptDurably`. */
export function durabilityRefusal(err: unknown): string {
  const reason = err instanceof TrajwatchError ? err.context['reason'] : undefined;
  return typeof reason === 'string' ? reason : 'not-durable';
}

/**
 * What the receiver saw, for metrics: one call per request. `spans`/`rejectedSpans` count
 * spans of a traces request; a logs request (`signal: 'logs'`) counts its records in
 * `logRecords`/`rejectedLogRecords` instead.
 */
export interface RequestObserver {
  (outcome: {
    status: number;
    contentType: string;
    spans: number;
    rejectedSpans: number;
    reason?: string;
    signal?: Signal;
    logRecords?: number;
    rejectedLogRecords?: number;
  }): void;
}

/** Extra routes served beside `/v1/traces` and `/v1/logs` (health, metrics). */
export type ExtraRoutes = Record<string, (req: IncomingMessage, res: ServerResponse) => void>;

export interface HttpReceiverOptions {
  /**
   * Serve `/v1/traces` and `/v1/logs` (default). With `false` both answer 404 before any other
   * check (spans come from another source) and only the extra routes are served.
   */
  otlp?: boolean;
  /** Where a request that failed on a bug is logged (default: a process warning). */
  logger?: Logger;
  /** The in-flight body budget, shared with the gRPC receiver (default: its own, of `config.maxInflightBytes`). */
  budget?: InflightBudget;
  /** Told of every connection opened, closed, and refused at `config.maxConnections`. */
  connections?: ConnectionObserver;
}

const TRACES_PATH = '/v1/traces';
const LOGS_PATH = '/v1/logs';
/** Liveness stays reachable without the token, so orchestrators need no secret. */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/**
 * The OTLP/HTTP receiver (opentelemetry-proto spec, CONVENTIONS.md) for traces (`/v1/traces`)
 * and, when the target takes them, logs (`/v1/logs`): protobuf or JSON by Content-Type,
 * optional gzip, answered in the request's content type, with the same limits, status codes
 * and durability for both. With `config.auth` every path but `/healthz`, `/readyz` answers 401 without
 * the token; with `config.tls` it serves HTTPS. Throws ConfigError at start when the token or
 * the TLS files cannot be read.
 */
export function createHttpReceiver(
  config: ReceiverConfig,
  target: PipelineInput,
  observe: RequestObserver = () => {},
  routes: ExtraRoutes = {},
  options: HttpReceiverOptions = {},
): Server {
  const allowed = createAuthCheck(config.auth);
  const otlp = options.otlp ?? true;
  const budget = options.budget ?? new InflightBudget(config.maxInflightBytes);
  const handle = async (req: IncomingMessage, res: ServerResponse, charge: InflightCharge): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (!otlp && (path === TRACES_PATH || path === LOGS_PATH)) {
      req.resume();
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('OTLP receivers are off (--source kafka); spans come from Kafka\n');
      return;
    }
    const signal: Signal | undefined =
      path === TRACES_PATH ? 'traces' : path === LOGS_PATH && target.acceptLogs !== undefined ? 'logs' : undefined;
    const counts = (status: number, reason?: string) =>
      signal === 'logs'
        ? { status, spans: 0, rejectedSpans: 0, signal, logRecords: 0, rejectedLogRecords: 0, ...(reason === undefined ? {} : { reason }) }
        : { status, spans: 0, rejectedSpans: 0, ...(reason === undefined ? {} : { reason }) };
    if (!OPEN_PATHS.has(path) && !allowed((name) => headerValue(req, name))) {
      req.resume();
      if (signal !== undefined) observe({ ...counts(401, 'unauthenticated'), contentType: 'other' });
      res.setHeader('WWW-Authenticate', 'Bearer realm="trajwatch"');
      return answer(res, { kind: 'unauthenticated' }, 'json', `${path} requires a token (Authorization: Bearer <token>)`);
    }
    if (signal === undefined) {
      const route = routes[path];
      if (route !== undefined) return route(req, res);
      const where = target.acceptLogs === undefined ? `POST ${TRACES_PATH}` : `POST ${TRACES_PATH} and ${LOGS_PATH}`;
      const message = `no route for ${path}; OTLP goes to ${where}`;
      // An OTLP signal this target does not take is what gRPC answers UNIMPLEMENTED for.
      if (path === LOGS_PATH) return answer(res, { kind: 'not-served' }, 'json', message);
      return reply(res, 404, 'json', RPC_CODE.NOT_FOUND, message);
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return reply(res, 405, 'json', RPC_CODE.UNIMPLEMENTED, `${req.method} is not allowed on ${path}; use POST`);
    }
    const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    const format: ResponseFormat | undefined =
      contentType === PROTOBUF ? 'protobuf' : contentType === JSON_TYPE ? 'json' : undefined;
    const note = (status: number, reason?: string) =>
      observe({ ...counts(status, reason), contentType: format === undefined ? 'other' : contentType });

    if (format === undefined) {
      req.resume();
      note(415, 'content-type');
      return reply(
        res,
        415,
        'json',
        RPC_CODE.INVALID_ARGUMENT,
        `unsupported Content-Type "${contentType}"; use ${PROTOBUF} or ${JSON_TYPE}`,
      );
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'gzip' && encoding !== 'identity') {
      req.resume();
      note(415, 'content-encoding');
      return reply(res, 415, format, RPC_CODE.INVALID_ARGUMENT, `unsupported Content-Encoding "${encoding}"; use gzip or none`);
    }
    const respond = (outcome: ExportOutcome, message: string): void => {
      const status = exportStatus(outcome);
      if (status.retry) res.setHeader('Retry-After', String(config.retryAfterSeconds));
      reply(res, status.httpStatus, format, status.grpcCode, message);
    };
    const refuse = (reason: string): void => {
      note(exportStatus({ kind: 'refused', reason }).httpStatus, reason);
      respond({ kind: 'refused', reason }, `trajwatch is at its limit (${reason}); retry later`);
    };
    const busy = target.admission();
    if (busy !== undefined) {
      req.resume();
      return refuse(busy);
    }

    const body = await readBody(req, config, encoding === 'gzip', charge);
    if (body === INFLIGHT_REFUSAL) return refuse(body);
    if (body instanceof LimitError) {
      note(413, body.limit);
      res.setHeader('Connection', 'close');
      return respond({ kind: 'too-large' }, body.message);
    }
    if (body instanceof DecodeError) {
      note(400, 'unreadable-body');
      return respond({ kind: 'undecodable' }, body.message);
    }
    if (body.length > config.maxDecompressedBytes) {
      note(413, 'maxDecompressedBytes');
      return respond({ kind: 'too-large' }, `body exceeds maxDecompressedBytes (${config.maxDecompressedBytes} bytes)`);
    }
    const refuseDurably = (err: unknown) => refuse(durabilityRefusal(err));

    if (signal === 'logs') {
      const decoded = format === 'protobuf' ? decodeOtlpLogsProto(body) : decodeOtlpLogsJson(body.toString('utf8'));
      if (decoded instanceof DecodeError) {
        note(400, 'undecodable');
        return respond({ kind: 'undecodable' }, `undecodable OTLP ${format} logs body: ${decoded.message}`);
      }
      let accepted: LogsAccepted;
      if (target.acceptLogsDurably === undefined) accepted = target.acceptLogs!(decoded);
      else {
        try {
          accepted = await target.acceptLogsDurably(decoded, { format, bytes: body });
        } catch (err) {
          return refuseDurably(err);
        }
      }
      const partial = logsPartialSuccess(decoded, accepted);
      observe({
        status: 200,
        contentType,
        spans: 0,
        rejectedSpans: 0,
        signal,
        logRecords: decoded.logs.length,
        rejectedLogRecords: partial?.rejected ?? 0,
      });
      return send(res, 200, format, exportResponse(format, partial, 'logs'));
    }

    const decoded = format === 'protobuf' ? decodeOtlpProto(body) : decodeOtlpJson(body.toString('utf8'));
    if (decoded instanceof DecodeError) {
      note(400, 'undecodable');
      return respond({ kind: 'undecodable' }, `undecodable OTLP ${format} body: ${decoded.message}`);
    }
    const over = target.admitRequest?.(decoded);
    if (over !== undefined) return refuse(over);
    if (target.acceptDurably === undefined) target.accept(decoded);
    else {
      try {
        await target.acceptDurably(decoded, { format, bytes: body });
      } catch (err) {
        return refuseDurably(err);
      }
    }
    const rejected = decoded.rejected.length;
    observe({ status: 200, contentType, spans: decoded.spans.length, rejectedSpans: rejected });
    const partial = rejected === 0 ? undefined : { rejected, errorMessage: summarizeRejections(decoded) };
    send(res, 200, format, exportResponse(format, partial));
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const charge = budget.open();
    handle(req, res, charge)
      .catch((err: unknown) => {
        // Only a bug reaches here; answer 500 rather than leave the client hanging.
        if (options.logger !== undefined) options.logger.error({ err, path: req.url }, 'receiver failed on a request');
        else process.emitWarning(`receiver failed on a request: ${(err as Error).stack ?? String(err)}`);
        if (!res.headersSent) answer(res, { kind: 'internal' }, 'json', 'internal error');
        else res.destroy();
      })
      .finally(() => charge.release());
  };
  const settings = httpServerOptions(config);
  // https.Server has every http.Server method; callers listen and close it the same way.
  const server =
    config.tls === undefined ? createServer(settings, listener) : (createHttpsServer({ ...readTlsFiles(config.tls), ...settings }, listener) as unknown as Server);
  capConnections(server, config.maxConnections, options.connections ?? IGNORE_CONNECTIONS);
  closeIdleAfterPendingReads(server, config.headersTimeoutMs);
  return server;
}

const IGNORE_CONNECTIONS: ConnectionObserver = { opened: () => {}, closed: () => {}, refused: () => {} };

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function summarizeRejections(decoded: DecodedRequest): string {
  const byReason = new Map<string, number>();
  for (const r of decoded.rejected) byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
  return [...byReason].map(([reason, n]) => `${n} span(s): ${reason}`).join('; ');
}

/**
 * The partial success of a logs request: records the decoder refused, and GenAI content events
 * that name no span (nothing to join them to). Application logs that are not content events
 * are accepted and only counted (`trajwatch_logs_total{outcome="not-content-event"}`).
 */
export function logsPartialSuccess(decoded: DecodedLogsRequest, accepted: LogsAccepted): PartialSuccess | undefined {
  const rejected = decoded.rejected.length + accepted.unattachable;
  if (rejected === 0) return undefined;
  const byReason = new Map<string, number>();
  for (const r of decoded.rejected) byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
  if (accepted.unattachable > 0) byReason.set('GenAI content event without a trace and span id', accepted.unattachable);
  return { rejected, errorMessage: [...byReason].map(([reason, n]) => `${n} log record(s): ${reason}`).join('; ') };
}

/** An answer from the shared map (`export-status.ts`) outside a request's own handler. */
function answer(res: ServerResponse, outcome: ExportOutcome, format: ResponseFormat, message: string): void {
  const status = exportStatus(outcome);
  reply(res, status.httpStatus, format, status.grpcCode, message);
}

function reply(res: ServerResponse, status: number, format: ResponseFormat, code: number, message: string): void {
  send(res, status, format, rpcStatus(format, code, message));
}

function send(res: ServerResponse, status: number, format: ResponseFormat, body: Buffer): void {
  res.writeHead(status, {
    'Content-Type': format === 'protobuf' ? PROTOBUF : JSON_TYPE,
    'Content-Length': body.length,
  });
  res.end(body);
}
