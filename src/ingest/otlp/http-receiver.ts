import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { DecodeError, LimitError } from '../../errors.ts';
import type { Logger } from '../../telemetry/logger.ts';
import type { PipelineInput } from '../pipeline-input.ts';
import { createAuthCheck } from './auth.ts';
import { readBody } from './body.ts';
import { capConnections, closeIdleAfterPendingReads, type ConnectionObserver, httpServerOptions } from './connection-limits.ts';
import { exportCounts, type ExportResult, refusalReason, SIGNAL_EXPORTS } from './export.ts';
import { exportStatus, type ExportOutcome } from './export-status.ts';
import { INFLIGHT_REFUSAL, InflightBudget, type InflightCharge } from './inflight-budget.ts';
import type { ReceiverConfig } from './receiver-config.ts';
import { exportResponse, JSON_TYPE, PROTOBUF, RPC_CODE, rpcStatus, type ResponseFormat, type Signal } from './response.ts';
import { readTlsFiles } from './tls-files.ts';

/**
 * What the receiver saw, for metrics: one call per request. `spans`/`rejectedSpans` count
 * spans of a traces request; a logs request (`signal: 'logs'`) counts its records in
 * `logRecords`/`rejectedLogRecords` instead.
 */
export type RequestObserver = (outcome: {
  status: number;
  contentType: string;
  spans: number;
  rejectedSpans: number;
  reason?: string;
  signal?: Signal;
  logRecords?: number;
  rejectedLogRecords?: number;
}) => void;

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
  const exporting: ExportContext = { config, target, observe };
  const handle = async (req: IncomingMessage, res: ServerResponse, charge: InflightCharge): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (!otlp && (path === TRACES_PATH || path === LOGS_PATH)) {
      req.resume();
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('OTLP receivers are off (--source kafka); spans come from Kafka\n');
      return;
    }
    const signal: Signal | undefined = path === TRACES_PATH ? 'traces' : path === LOGS_PATH && target.acceptLogs !== undefined ? 'logs' : undefined;
    if (!OPEN_PATHS.has(path) && !allowed((name) => headerValue(req, name))) {
      req.resume();
      if (signal !== undefined) observe({ status: 401, contentType: 'other', ...exportCounts(signal, undefined, 'unauthenticated') });
      res.setHeader('WWW-Authenticate', 'Bearer realm="trajwatch"');
      return answer(res, { kind: 'unauthenticated' }, 'json', `${path} requires a token (Authorization: Bearer <token>)`);
    }
    if (signal !== undefined) return exportRequest(exporting, signal, path, req, res, charge);
    const route = routes[path];
    if (route !== undefined) return route(req, res);
    const where = target.acceptLogs === undefined ? `POST ${TRACES_PATH}` : `POST ${TRACES_PATH} and ${LOGS_PATH}`;
    const message = `no route for ${path}; OTLP goes to ${where}`;
    // An OTLP signal this target does not take is what gRPC answers UNIMPLEMENTED for.
    if (path === LOGS_PATH) return answer(res, { kind: 'not-served' }, 'json', message);
    return reply(res, 404, 'json', RPC_CODE.NOT_FOUND, message);
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
    config.tls === undefined
      ? createServer(settings, listener)
      : (createHttpsServer({ ...readTlsFiles(config.tls), ...settings }, listener) as unknown as Server);
  capConnections(server, config.maxConnections, options.connections ?? IGNORE_CONNECTIONS);
  closeIdleAfterPendingReads(server, config.headersTimeoutMs);
  return server;
}

interface ExportContext {
  config: ReceiverConfig;
  target: PipelineInput;
  observe: RequestObserver;
}

/**
 * A POST to `/v1/traces` or `/v1/logs` after authentication: the transport's own checks
 * (method, content type and encoding, the body's limits), the signal's export routine
 * (`export.ts`), and its answer in the request's content type.
 */
async function exportRequest(
  { config, target, observe }: ExportContext,
  signal: Signal,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  charge: InflightCharge,
): Promise<void> {
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    return reply(res, 405, 'json', RPC_CODE.UNIMPLEMENTED, `${req.method} is not allowed on ${path}; use POST`);
  }
  const contentType = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  const format: ResponseFormat | undefined = contentType === PROTOBUF ? 'protobuf' : contentType === JSON_TYPE ? 'json' : undefined;
  const note = (status: number, reason: string) =>
    observe({ status, contentType: format === undefined ? 'other' : contentType, ...exportCounts(signal, undefined, reason) });
  if (format === undefined) {
    req.resume();
    note(415, 'content-type');
    return reply(res, 415, 'json', RPC_CODE.INVALID_ARGUMENT, `unsupported Content-Type "${contentType}"; use ${PROTOBUF} or ${JSON_TYPE}`);
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
  const answerExport = (result: ExportResult): void => {
    observe({ status: exportStatus(result).httpStatus, contentType, ...exportCounts(signal, result, refusalReason(result)) });
    if (result.kind === 'accepted') return send(res, 200, format, exportResponse(format, result.partial, signal));
    if (result.kind === 'refused') return respond(result, `trajwatch is at its limit (${result.reason}); retry later`);
    respond(result, `undecodable OTLP ${format}${signal === 'logs' ? ' logs' : ''} body: ${result.message}`);
  };

  const exporter = SIGNAL_EXPORTS[signal];
  const refused = exporter.admit(target);
  if (refused !== undefined) {
    req.resume();
    return answerExport(refused);
  }
  const body = await readBody(req, config, encoding === 'gzip', charge);
  if (body === INFLIGHT_REFUSAL) return answerExport({ kind: 'refused', reason: body });
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
  answerExport(await exporter.take(target, body, format));
}

const IGNORE_CONNECTIONS: ConnectionObserver = { opened: () => {}, closed: () => {}, refused: () => {} };

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
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
