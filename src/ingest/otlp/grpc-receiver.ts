/**
 * The OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export` and,
 * when the target takes logs, `opentelemetry.proto.collector.logs.v1.LogsService/Export`, on
 * @grpc/grpc-js, feeding the same decoders and pipeline as the HTTP receiver.
 */
import * as grpc from '@grpc/grpc-js';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { formatHostPort, type HostPort } from '../../config/host-port.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { createAuthCheck, type ReceiverAuth } from './auth.ts';
import { exportCounts, type ExportResult, LOGS_EXPORT, refusalReason, type SignalExport, TRACES_EXPORT } from './export.ts';
import { exportStatus, type ExportOutcome } from './export-status.ts';
import { callMeter } from './grpc-call-meter.ts';
import { capConnections, type ConnectionObserver, grpcConnectionOptions, type GrpcConnectionLimits } from './connection-limits.ts';
import { RETRY_INFO_KEY, retryInfo, STATUS_DETAILS_KEY, statusWithRetryInfo } from './grpc-status.ts';
import { INFLIGHT_REFUSAL, InflightBudget } from './inflight-budget.ts';
import { exportResponse, type Signal } from './response.ts';
import type { PipelineInput } from '../pipeline-input.ts';
import type { TlsPem } from './tls-files.ts';

/** The full method path OTLP exporters call. */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const LOGS_EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

export interface GrpcReceiverConfig extends GrpcConnectionLimits {
  /**
   * Cap on one request message after decompression (grpc-js checks it while inflating, so a
   * gzip bomb stops early); above it the call fails with RESOURCE_EXHAUSTED, not retried.
   */
  maxDecompressedBytes: number;
  /** The delay put in the RetryInfo of a throttled call. */
  retryAfterSeconds: number;
  /** Token required in the `authorization` (or `apiKeyHeader`) metadata; UNAUTHENTICATED without. */
  auth?: ReceiverAuth | undefined;
  /** The in-flight body budget when not shared (`options.budget`). */
  maxInflightBytes: number;
}

const GRPC_CONTENT_TYPE = 'application/grpc';

/**
 * What the gRPC receiver saw, for metrics: one call per Export call. `status` is the gRPC
 * status name (`OK`, `INVALID_ARGUMENT`...), or `NOT_DELIVERED` when grpc-js ended the call
 * before the request reached trajwatch (over `maxDecompressedBytes`, not decompressible, or
 * cancelled by the client: grpc-js does not say which).
 */
export type GrpcRequestObserver = (outcome: {
  status: string;
  contentType: typeof GRPC_CONTENT_TYPE;
  spans: number;
  rejectedSpans: number;
  reason?: string;
  signal?: 'traces' | 'logs';
  logRecords?: number;
  rejectedLogRecords?: number;
}) => void;

/**
 * Raw-bytes method definition: grpc-js hands the handler the undecoded request, so trajwatch's
 * own protobuf decoder runs (once), never a generated message class.
 */
function rawExportService(path: string): grpc.ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (bytes: Buffer) => bytes,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (bytes: Buffer) => bytes,
      responseDeserialize: (bytes: Buffer) => bytes,
    },
  };
}

/**
 * Creates (does not bind) the OTLP/gRPC server. gzip and deflate request compression are
 * handled by grpc-js. Answers: OK with an `ExportTraceServiceResponse` (with `partialSuccess`
 * when spans were refused); INVALID_ARGUMENT for an undecodable request; UNAVAILABLE or
 * RESOURCE_EXHAUSTED with a google.rpc.RetryInfo when the pipeline refuses new work.
 *
 * @example
 * const server = createGrpcReceiver(config.receiver, pipeline);
 * const port = await bindGrpcReceiver(server, { host: '127.0.0.1', port: 4317 });
 */
export function createGrpcReceiver(
  config: GrpcReceiverConfig,
  target: PipelineInput,
  observe: GrpcRequestObserver = () => {},
  options: { logger?: Logger; budget?: InflightBudget } = {},
): grpc.Server {
  const note = (code: grpc.status, signal: Signal, result: ExportResult | undefined, reason: string | undefined) =>
    observe({ status: grpc.status[code], contentType: GRPC_CONTENT_TYPE, ...exportCounts(signal, result, reason) });

  const budget = options.budget ?? new InflightBudget(config.maxInflightBytes);
  // grpc-js refuses an oversized or undecompressible message itself, before any handler runs;
  // the call meter is the only place such a call can still be counted.
  const meter = callMeter({
    budget,
    maxDecompressedBytes: config.maxDecompressedBytes,
    refusal: (reason) => ({ ...throttled(reason, config.retryAfterSeconds) }),
    onRefused: () => note(codeOf({ kind: 'refused', reason: INFLIGHT_REFUSAL }), 'traces', undefined, INFLIGHT_REFUSAL),
    onUndelivered: () => observe({ status: 'NOT_DELIVERED', contentType: GRPC_CONTENT_TYPE, spans: 0, rejectedSpans: 0, reason: 'message-not-delivered' }),
  });

  const server = new grpc.Server({
    'grpc.max_receive_message_length': config.maxDecompressedBytes,
    ...grpcConnectionOptions(config),
    interceptors: [meter],
  });

  const allowed = createAuthCheck(config.auth);
  /** One Export method: authentication here, the rest is the signal's export routine (`export.ts`). */
  const exportMethod = ({ signal, admit, take }: SignalExport) => {
    const answer = (callback: grpc.sendUnaryData<Buffer>, result: ExportResult): void => {
      note(codeOf(result), signal, result, refusalReason(result));
      if (result.kind === 'accepted') callback(null, exportResponse('protobuf', result.partial, signal));
      else if (result.kind === 'refused') callback(throttled(result.reason, config.retryAfterSeconds));
      else callback({ code: codeOf(result), details: `undecodable OTLP protobuf${signal === 'logs' ? ' logs' : ''} request: ${result.message}` });
    };
    const failed = (callback: grpc.sendUnaryData<Buffer>, err: unknown): void => {
      // Only a bug reaches here; answer INTERNAL rather than leave the client hanging.
      if (options.logger !== undefined) options.logger.error({ err }, 'gRPC receiver failed on a request');
      else process.emitWarning(`gRPC receiver failed on a request: ${(err as Error).stack ?? String(err)}`);
      note(codeOf({ kind: 'internal' }), signal, undefined, 'internal-error');
      callback({ code: codeOf({ kind: 'internal' }), details: 'internal error' });
    };
    return (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>): void => {
      if (!allowed((name) => metadataValue(call.metadata, name))) {
        note(codeOf({ kind: 'unauthenticated' }), signal, undefined, 'unauthenticated');
        callback({ code: codeOf({ kind: 'unauthenticated' }), details: 'Export requires a token (authorization: Bearer <token>)' });
        return;
      }
      let refused: ExportResult | undefined;
      try {
        refused = admit(target);
      } catch (err) {
        return failed(callback, err);
      }
      if (refused !== undefined) return answer(callback, refused);
      take(target, call.request, 'protobuf').then(
        (result) => answer(callback, result),
        (err: unknown) => failed(callback, err),
      );
    };
  };
  server.addService(rawExportService(TRACE_EXPORT_PATH), { Export: exportMethod(TRACES_EXPORT) });
  // Without a logs target the method is not served: grpc-js answers UNIMPLEMENTED.
  if (target.acceptLogs !== undefined) server.addService(rawExportService(LOGS_EXPORT_PATH), { Export: exportMethod(LOGS_EXPORT) });
  return server;
}

/** The gRPC status of `outcome`, from the map both receivers answer by (`export-status.ts`). */
const codeOf = (outcome: ExportOutcome): grpc.status => exportStatus(outcome).grpcCode as grpc.status;

/** The answer to a refused call: RESOURCE_EXHAUSTED for the memory bounds, else UNAVAILABLE, with RetryInfo. */
function throttled(busy: string, retryAfterSeconds: number): { code: grpc.status; details: string; metadata: grpc.Metadata } {
  const code = codeOf({ kind: 'refused', reason: busy });
  const details = `trajwatch is at its limit (${busy}); retry later`;
  const metadata = new grpc.Metadata();
  metadata.set(STATUS_DETAILS_KEY, statusWithRetryInfo(code, details, retryAfterSeconds));
  metadata.set(RETRY_INFO_KEY, retryInfo(retryAfterSeconds));
  return { code, details, metadata };
}

/** The listener a capped server was bound on, closed with it. */
const LISTENERS = new WeakMap<grpc.Server, NetServer>();

/**
 * Binds the server (loopback by default; binding wider is the operator's choice) and resolves
 * with the bound port, which differs from `address.port` when that is 0. With `tls` it serves
 * TLS only (the certificate and key of `receiver.tls`, the same as the HTTP receiver's; no
 * client certificate asked for): a plaintext client's call fails, nothing is taken from it.
 * Without, plaintext. With `cap`, trajwatch owns the listening socket and hands connections to
 * grpc-js (its connection injector), so connections past `cap.maxConnections` are closed at
 * accept and reported, like the HTTP receiver's (grpc-js has no cap of its own).
 */
export function bindGrpcReceiver(
  server: grpc.Server,
  address: HostPort,
  tls?: TlsPem,
  cap?: { maxConnections: number; observer: ConnectionObserver },
): Promise<number> {
  const credentials =
    tls === undefined
      ? grpc.ServerCredentials.createInsecure()
      : grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false);
  if (cap !== undefined) {
    const injector = server.createConnectionInjector(credentials);
    const listener = createNetServer((socket) => injector.injectConnection(socket));
    capConnections(listener, cap.maxConnections, cap.observer);
    return new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(address.port, address.host, () => {
        listener.off('error', reject);
        LISTENERS.set(server, listener);
        resolve((listener.address() as AddressInfo).port);
      });
    });
  }
  return new Promise((resolve, reject) => {
    server.bindAsync(formatHostPort(address), credentials, (err, port) => {
      if (err === null) resolve(port);
      else reject(err);
    });
  });
}

/**
 * Stops taking calls and resolves once in-flight calls have been answered, or after
 * `graceMs`, when whatever is left is cut (a client that keeps a stream open must not hold
 * up shutdown).
 */
export function closeGrpcReceiver(server: grpc.Server, graceMs = 5_000): Promise<void> {
  LISTENERS.get(server)?.close();
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    deadline.unref();
    server.tryShutdown(() => {
      clearTimeout(deadline);
      resolve();
    });
  });
}

function metadataValue(metadata: grpc.Metadata, name: string): string | undefined {
  const value = metadata.get(name)[0];
  return typeof value === 'string' ? value : undefined;
}
